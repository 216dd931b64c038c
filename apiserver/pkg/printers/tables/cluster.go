package tables

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/sets"
)

func (p *printer) printResourceQuota(obj *corev1.ResourceQuota) metav1.TableRow {
	names := make([]string, 0, len(obj.Status.Hard))
	for name := range obj.Status.Hard {
		names = append(names, string(name))
	}
	sort.Strings(names)
	var request, limit []string
	for _, name := range names {
		used := obj.Status.Used[corev1.ResourceName(name)]
		hard := obj.Status.Hard[corev1.ResourceName(name)]
		entry := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
		if pieces := strings.Split(name, "."); len(pieces) > 1 && pieces[0] == "limits" {
			limit = append(limit, entry)
		} else {
			request = append(request, entry)
		}
	}
	return row(obj, obj.Name, strings.Join(request, ", "), strings.Join(limit, ", "), p.since(obj.CreationTimestamp))
}

// accessModes is upstream's helper.GetAccessModesAsString.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	has := sets.New(modes...)
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		if has.Has(m.mode) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

// betaStorageClassAnnotation still wins over spec.storageClassName upstream.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

func (p *printer) printPersistentVolume(obj *corev1.PersistentVolume) metav1.TableRow {
	claim := ""
	if obj.Spec.ClaimRef != nil {
		claim = obj.Spec.ClaimRef.Namespace + "/" + obj.Spec.ClaimRef.Name
	}
	size := obj.Spec.Capacity[corev1.ResourceStorage]
	phase := string(obj.Status.Phase)
	if obj.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	class, ok := obj.Annotations[betaStorageClassAnnotation]
	if !ok {
		class = obj.Spec.StorageClassName
	}
	return row(obj, obj.Name, size.String(), accessModes(obj.Spec.AccessModes), string(obj.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, class, strOr(obj.Spec.VolumeAttributesClassName, unset), obj.Status.Reason,
		p.since(obj.CreationTimestamp), volumeModeOr(obj.Spec.VolumeMode))
}

func (p *printer) printPersistentVolumeClaim(obj *corev1.PersistentVolumeClaim) metav1.TableRow {
	phase := string(obj.Status.Phase)
	if obj.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if obj.Spec.VolumeName != "" {
		modes = accessModes(obj.Status.AccessModes)
		q := obj.Status.Capacity[corev1.ResourceStorage]
		capacity = q.String()
	}
	class, ok := obj.Annotations[betaStorageClassAnnotation]
	if !ok {
		class = strOr(obj.Spec.StorageClassName, "")
	}
	return row(obj, obj.Name, phase, obj.Spec.VolumeName, capacity, modes, class,
		strOr(obj.Spec.VolumeAttributesClassName, unset), p.since(obj.CreationTimestamp), volumeModeOr(obj.Spec.VolumeMode))
}

func strOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

func volumeModeOr(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return unset
	}
	return string(*m)
}

func (p *printer) printPriorityClass(obj *schedulingv1.PriorityClass) metav1.TableRow {
	policy := ""
	if obj.PreemptionPolicy != nil {
		policy = string(*obj.PreemptionPolicy)
	}
	return row(obj, obj.Name, int64(obj.Value), obj.GlobalDefault, p.since(obj.CreationTimestamp), policy)
}

func (p *printer) printRuntimeClass(obj *nodev1.RuntimeClass) metav1.TableRow {
	return row(obj, obj.Name, obj.Handler, p.since(obj.CreationTimestamp))
}

func (p *printer) printIngress(obj *networkingv1.Ingress) metav1.TableRow {
	class := none
	if obj.Spec.IngressClassName != nil {
		class = *obj.Spec.IngressClassName
	}
	hosts := []string{}
	more := false
	for _, rule := range obj.Spec.Rules {
		if len(hosts) == 3 {
			more = true
		}
		if !more && rule.Host != "" {
			hosts = append(hosts, rule.Host)
		}
	}
	hostsCell := strings.Join(hosts, ",")
	switch {
	case len(hosts) == 0:
		hostsCell = "*"
	case more:
		hostsCell = fmt.Sprintf("%s + %d more...", hostsCell, len(obj.Spec.Rules)-3)
	}
	addrs := sets.New[string]()
	for _, in := range obj.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			addrs.Insert(in.IP)
		} else if in.Hostname != "" {
			addrs.Insert(in.Hostname)
		}
	}
	ports := "80"
	if len(obj.Spec.TLS) != 0 {
		ports = "80, 443"
	}
	return row(obj, obj.Name, class, hostsCell, strings.Join(sets.List(addrs), ","), ports, p.since(obj.CreationTimestamp))
}

func (p *printer) printIngressClass(obj *networkingv1.IngressClass) metav1.TableRow {
	params := none
	if ref := obj.Spec.Parameters; ref != nil {
		params = ref.Kind
		if ref.APIGroup != nil {
			params += "." + *ref.APIGroup
		}
		params += "/" + ref.Name
	}
	return row(obj, obj.Name, obj.Spec.Controller, params, p.since(obj.CreationTimestamp))
}

func (p *printer) printNetworkPolicy(obj *networkingv1.NetworkPolicy) metav1.TableRow {
	return row(obj, obj.Name, metav1.FormatLabelSelector(&obj.Spec.PodSelector), p.since(obj.CreationTimestamp))
}

// csrCondition is upstream's extractCSRStatus.
func csrCondition(csr *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	if denied {
		status = "Denied"
	} else if approved {
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}

func (p *printer) printCSR(obj *certificatesv1.CertificateSigningRequest) metav1.TableRow {
	signer := none
	if obj.Spec.SignerName != "" {
		signer = obj.Spec.SignerName
	}
	requested := none
	if obj.Spec.ExpirationSeconds != nil {
		requested = duration.HumanDuration(expirationDuration(*obj.Spec.ExpirationSeconds))
	}
	return row(obj, obj.Name, p.since(obj.CreationTimestamp), signer, obj.Spec.Username, requested, csrCondition(obj))
}

func (p *printer) printFlowSchema(obj *flowcontrolv1.FlowSchema) metav1.TableRow {
	method := none
	if obj.Spec.DistinguisherMethod != nil {
		method = string(obj.Spec.DistinguisherMethod.Type)
	}
	missing := "?"
	for _, c := range obj.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			missing = string(c.Status)
			break
		}
	}
	return row(obj, obj.Name, obj.Spec.PriorityLevelConfiguration.Name, int64(obj.Spec.MatchingPrecedence), method,
		p.since(obj.CreationTimestamp), missing)
}

func (p *printer) printPriorityLevel(obj *flowcontrolv1.PriorityLevelConfiguration) metav1.TableRow {
	var ncs, queues, handSize, queueLength interface{} = none, none, none, none
	if l := obj.Spec.Limited; l != nil {
		if l.NominalConcurrencyShares != nil {
			ncs = *l.NominalConcurrencyShares
		} else {
			ncs = int32(0)
		}
		if q := l.LimitResponse.Queuing; q != nil {
			queues, handSize, queueLength = q.Queues, q.HandSize, q.QueueLengthLimit
		}
	}
	return row(obj, obj.Name, string(obj.Spec.Type), ncs, queues, handSize, queueLength, p.since(obj.CreationTimestamp))
}

func isDefaultStorageClass(m metav1.ObjectMeta) bool {
	return m.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
		m.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true"
}

func (p *printer) printStorageClass(obj *storagev1.StorageClass) metav1.TableRow {
	name := obj.Name
	if isDefaultStorageClass(obj.ObjectMeta) {
		name += " (default)"
	}
	reclaim := string(corev1.PersistentVolumeReclaimDelete)
	if obj.ReclaimPolicy != nil {
		reclaim = string(*obj.ReclaimPolicy)
	}
	binding := string(storagev1.VolumeBindingImmediate)
	if obj.VolumeBindingMode != nil {
		binding = string(*obj.VolumeBindingMode)
	}
	expansion := obj.AllowVolumeExpansion != nil && *obj.AllowVolumeExpansion
	return row(obj, name, obj.Provisioner, reclaim, binding, expansion, p.since(obj.CreationTimestamp))
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

func (p *printer) printCSIDriver(obj *storagev1.CSIDriver) metav1.TableRow {
	modes := make([]string, 0, len(obj.Spec.VolumeLifecycleModes))
	for _, m := range obj.Spec.VolumeLifecycleModes {
		modes = append(modes, string(m))
	}
	modesCell := strings.Join(modes, ",")
	if modesCell == "" {
		modesCell = none
	}
	tokens := unset
	if obj.Spec.TokenRequests != nil {
		audiences := []string{}
		for _, t := range obj.Spec.TokenRequests {
			audiences = append(audiences, t.Audience)
		}
		tokens = strings.Join(audiences, ",")
	}
	return row(obj, obj.Name, boolOr(obj.Spec.AttachRequired, true), boolOr(obj.Spec.PodInfoOnMount, false),
		boolOr(obj.Spec.StorageCapacity, false), tokens, boolOr(obj.Spec.RequiresRepublish, false), modesCell,
		p.since(obj.CreationTimestamp))
}

func (p *printer) printCSINode(obj *storagev1.CSINode) metav1.TableRow {
	return row(obj, obj.Name, int64(len(obj.Spec.Drivers)), p.since(obj.CreationTimestamp))
}

func (p *printer) printCSIStorageCapacity(obj *storagev1.CSIStorageCapacity) metav1.TableRow {
	capacity := unset
	if obj.Capacity != nil {
		capacity = obj.Capacity.String()
	}
	return row(obj, obj.Name, obj.StorageClassName, capacity)
}

func (p *printer) printVolumeAttachment(obj *storagev1.VolumeAttachment) metav1.TableRow {
	pv := ""
	if obj.Spec.Source.PersistentVolumeName != nil {
		pv = *obj.Spec.Source.PersistentVolumeName
	}
	return row(obj, obj.Name, obj.Spec.Attacher, pv, obj.Spec.NodeName, obj.Status.Attached, p.since(obj.CreationTimestamp))
}

// ResourceQuota prints corev1.ResourceQuota objects and lists.
var ResourceQuota = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
		{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
		ageColumn(),
	}, p.printResourceQuota, func(l *corev1.ResourceQuotaList) []corev1.ResourceQuota { return l.Items })
}}

// PersistentVolume prints corev1.PersistentVolume objects and lists.
var PersistentVolume = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]},
		{Name: "Reclaim Policy", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]},
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]},
		{Name: "Claim", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
		{Name: "Reason", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]},
		ageColumn(),
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]},
	}, p.printPersistentVolume, func(l *corev1.PersistentVolumeList) []corev1.PersistentVolume { return l.Items })
}}

// PersistentVolumeClaim prints corev1.PersistentVolumeClaim objects and lists.
var PersistentVolumeClaim = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]},
		{Name: "Volume", Type: "string", Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]},
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
		ageColumn(),
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]},
	}, p.printPersistentVolumeClaim, func(l *corev1.PersistentVolumeClaimList) []corev1.PersistentVolumeClaim { return l.Items })
}}

// PriorityClass prints schedulingv1.PriorityClass objects and lists.
var PriorityClass = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Value", Type: "integer", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["value"]},
		{Name: "Global-Default", Type: "boolean", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]},
		ageColumn(),
		{Name: "PreemptionPolicy", Type: "string", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]},
	}, p.printPriorityClass, func(l *schedulingv1.PriorityClassList) []schedulingv1.PriorityClass { return l.Items })
}}

// RuntimeClass prints nodev1.RuntimeClass objects and lists.
var RuntimeClass = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Handler", Type: "string", Description: objectMetaDoc["handler"]},
		ageColumn(),
	}, p.printRuntimeClass, func(l *nodev1.RuntimeClassList) []nodev1.RuntimeClass { return l.Items })
}}

// Ingress prints networkingv1.Ingress objects and lists.
var Ingress = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
		{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
		{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
		{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
		ageColumn(),
	}, p.printIngress, func(l *networkingv1.IngressList) []networkingv1.Ingress { return l.Items })
}}

// IngressClass prints networkingv1.IngressClass objects and lists.
var IngressClass = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
		{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
		ageColumn(),
	}, p.printIngressClass, func(l *networkingv1.IngressClassList) []networkingv1.IngressClass { return l.Items })
}}

// NetworkPolicy prints networkingv1.NetworkPolicy objects and lists.
var NetworkPolicy = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Pod-Selector", Type: "string", Description: extensionsv1beta1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
		ageColumn(),
	}, p.printNetworkPolicy, func(l *networkingv1.NetworkPolicyList) []networkingv1.NetworkPolicy { return l.Items })
}}

// CertificateSigningRequest prints certificatesv1.CertificateSigningRequest objects and lists.
var CertificateSigningRequest = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		ageColumn(),
		{Name: "SignerName", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["signerName"]},
		{Name: "Requestor", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["request"]},
		{Name: "RequestedDuration", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["expirationSeconds"]},
		{Name: "Condition", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]},
	}, p.printCSR, func(l *certificatesv1.CertificateSigningRequestList) []certificatesv1.CertificateSigningRequest {
		return l.Items
	})
}}

// FlowSchema prints flowcontrolv1.FlowSchema objects and lists.
var FlowSchema = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers(flowSchemaColumns(), p.printFlowSchema, func(l *flowcontrolv1.FlowSchemaList) []flowcontrolv1.FlowSchema {
		// Upstream prints flow schemas in matching order.
		items := append([]flowcontrolv1.FlowSchema(nil), l.Items...)
		sort.SliceStable(items, func(i, j int) bool {
			if items[i].Spec.MatchingPrecedence != items[j].Spec.MatchingPrecedence {
				return items[i].Spec.MatchingPrecedence < items[j].Spec.MatchingPrecedence
			}
			return items[i].Name < items[j].Name
		})
		return items
	})
}}

// PriorityLevelConfiguration prints flowcontrolv1.PriorityLevelConfiguration objects and lists.
var PriorityLevelConfiguration = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Type", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]},
		{Name: "NominalConcurrencyShares", Type: "string", Description: flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]},
		{Name: "Queues", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]},
		{Name: "HandSize", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]},
		{Name: "QueueLengthLimit", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]},
		ageColumn(),
	}, p.printPriorityLevel, func(l *flowcontrolv1.PriorityLevelConfigurationList) []flowcontrolv1.PriorityLevelConfiguration {
		return l.Items
	})
}}

// StorageClass prints storagev1.StorageClass objects and lists.
var StorageClass = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Provisioner", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["provisioner"]},
		{Name: "ReclaimPolicy", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]},
		{Name: "VolumeBindingMode", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]},
		{Name: "AllowVolumeExpansion", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]},
		ageColumn(),
	}, p.printStorageClass, func(l *storagev1.StorageClassList) []storagev1.StorageClass { return l.Items })
}}

// CSIDriver prints storagev1.CSIDriver objects and lists.
var CSIDriver = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "AttachRequired", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["attachRequired"]},
		{Name: "PodInfoOnMount", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["podInfoOnMount"]},
		{Name: "StorageCapacity", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["storageCapacity"]},
		{Name: "TokenRequests", Type: "string", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["tokenRequests"]},
		{Name: "RequiresRepublish", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["requiresRepublish"]},
		{Name: "Modes", Type: "string", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["volumeLifecycleModes"]},
		ageColumn(),
	}, p.printCSIDriver, func(l *storagev1.CSIDriverList) []storagev1.CSIDriver { return l.Items })
}}

// CSINode prints storagev1.CSINode objects and lists.
var CSINode = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
		ageColumn(),
	}, p.printCSINode, func(l *storagev1.CSINodeList) []storagev1.CSINode { return l.Items })
}}

// CSIStorageCapacity prints storagev1.CSIStorageCapacity objects and lists.
var CSIStorageCapacity = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "StorageClassName", Type: "string", Description: storagev1.CSIStorageCapacity{}.SwaggerDoc()["storageClassName"]},
		{Name: "Capacity", Type: "string", Description: storagev1.CSIStorageCapacity{}.SwaggerDoc()["capacity"]},
	}, p.printCSIStorageCapacity, func(l *storagev1.CSIStorageCapacityList) []storagev1.CSIStorageCapacity { return l.Items })
}}

// VolumeAttachment prints storagev1.VolumeAttachment objects and lists.
var VolumeAttachment = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Attacher", Type: "string", Format: "name", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"]},
		{Name: "PV", Type: "string", Description: storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]},
		{Name: "Node", Type: "string", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Attached", Type: "boolean", Description: storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]},
		ageColumn(),
	}, p.printVolumeAttachment, func(l *storagev1.VolumeAttachmentList) []storagev1.VolumeAttachment { return l.Items })
}}

// flowSchemaColumns are upstream's FlowSchema columns.
func flowSchemaColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "PriorityLevel", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]},
		{Name: "MatchingPrecedence", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]},
		{Name: "DistinguisherMethod", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]},
		ageColumn(),
		{Name: "MissingPL", Type: "string", Description: "references a broken or non-existent PriorityLevelConfiguration"},
	}
}
