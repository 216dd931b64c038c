package validation

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// Scheduling: PriorityClass.

const (
	// HighestUserDefinablePriority is the highest value a user may give.
	HighestUserDefinablePriority = int32(1000000000)
	// SystemCriticalPriority is the base of the built-in classes.
	SystemCriticalPriority = 2 * HighestUserDefinablePriority
	// SystemPriorityClassPrefix is reserved for the built-in classes.
	SystemPriorityClassPrefix = "system-"
	// SystemClusterCritical and SystemNodeCritical are the built-in classes.
	SystemClusterCritical = SystemPriorityClassPrefix + "cluster-critical"
	SystemNodeCritical    = SystemPriorityClassPrefix + "node-critical"
)

// SystemPriorityClasses are the classes the API server creates at start-up.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		systemClass(SystemNodeCritical, SystemCriticalPriority+1000, "Used for system critical pods that must not be moved from their current node."),
		systemClass(SystemClusterCritical, SystemCriticalPriority, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
	}
}

func systemClass(name string, value int32, description string) *schedulingv1.PriorityClass {
	pc := &schedulingv1.PriorityClass{Value: value, Description: description}
	pc.Name = name
	return pc
}

// isKnownSystemPriorityClass reports whether name, value and globalDefault
// are exactly those of a built-in class.
func isKnownSystemPriorityClass(name string, value int32, globalDefault bool) error {
	for _, pc := range SystemPriorityClasses() {
		if pc.Name == name {
			if pc.Value != value {
				return fmt.Errorf("value of %v PriorityClass must be %v", pc.Name, pc.Value)
			}
			if pc.GlobalDefault != globalDefault {
				return fmt.Errorf("globalDefault of %v PriorityClass must be %v", pc.Name, pc.GlobalDefault)
			}
			return nil
		}
	}
	return fmt.Errorf("%v is not a known system priority class", name)
}

// ValidatePriorityClass validates a PriorityClass as upstream does.
func ValidatePriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	allErrs := validateObjectMeta(&pc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if err := isKnownSystemPriorityClass(pc.Name, pc.Value, pc.GlobalDefault); err != nil {
		if strings.HasPrefix(pc.Name, SystemPriorityClassPrefix) {
			allErrs = append(allErrs, field.Forbidden(metadataPath.Child("name"), "priority class names with '"+SystemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		} else if pc.Value > HighestUserDefinablePriority {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
		}
	}
	if pc.PreemptionPolicy != nil {
		allErrs = append(allErrs, validatePreemptionPolicy(pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	}
	return allErrs
}

// ValidatePriorityClassUpdate: value and preemptionPolicy are immutable.
func ValidatePriorityClassUpdate(pc, old *schedulingv1.PriorityClass) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&pc.ObjectMeta, &old.ObjectMeta, metadataPath)
	if pc.Value != old.Value {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	allErrs = append(allErrs, validateImmutableField(pc.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	return allErrs
}

// Node: RuntimeClass.

// ValidateRuntimeClass: a DNS-label handler, valid overhead and scheduling.
func ValidateRuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	allErrs := validateObjectMeta(&rc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if rc.Handler == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("handler"), ""))
	}
	for _, msg := range validation.IsDNS1123Label(rc.Handler) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("handler"), rc.Handler, msg))
	}
	if rc.Overhead != nil {
		p := field.NewPath("overhead", "podFixed")
		for k, q := range rc.Overhead.PodFixed {
			allErrs = append(allErrs, validateContainerResourceName(k, p.Key(string(k)))...)
			allErrs = append(allErrs, validateResourceQuantityValue(k, q, p.Key(string(k)))...)
		}
	}
	if s := rc.Scheduling; s != nil {
		p := field.NewPath("scheduling")
		allErrs = append(allErrs, metav1validation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
		allErrs = append(allErrs, validateTolerations(s.Tolerations, p.Child("tolerations"))...)
		seen := map[string]bool{}
		for i, t := range s.Tolerations {
			key := fmt.Sprintf("%s/%s/%s", t.Key, t.Operator, t.Effect)
			if seen[key] {
				allErrs = append(allErrs, field.Duplicate(p.Child("tolerations").Index(i), t))
			}
			seen[key] = true
		}
	}
	return allErrs
}

// ValidateRuntimeClassUpdate: the handler is immutable.
func ValidateRuntimeClassUpdate(rc, old *nodev1.RuntimeClass) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateRuntimeClass(rc)...)
	return append(allErrs, validateImmutableField(rc.Handler, old.Handler, field.NewPath("handler"))...)
}

// Networking.

var pathTypes = sets.New(networkingv1.PathTypeExact, networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific)

// ValidateIngress validates an Ingress on create and update.
func ValidateIngress(ing *networkingv1.Ingress) field.ErrorList {
	allErrs := validateObjectMeta(&ing.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	if len(ing.Spec.Rules) == 0 && ing.Spec.DefaultBackend == nil {
		allErrs = append(allErrs, field.Invalid(spec, ing.Spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if ing.Spec.DefaultBackend != nil {
		allErrs = append(allErrs, validateIngressBackend(ing.Spec.DefaultBackend, spec.Child("defaultBackend"))...)
	}
	if ing.Spec.IngressClassName != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*ing.Spec.IngressClassName, false) {
			allErrs = append(allErrs, field.Invalid(spec.Child("ingressClassName"), *ing.Spec.IngressClassName, msg))
		}
	}
	for i, rule := range ing.Spec.Rules {
		rp := spec.Child("rules").Index(i)
		if rule.Host != "" {
			host := rule.Host
			if strings.HasPrefix(host, "*.") {
				for _, msg := range validation.IsWildcardDNS1123Subdomain(host) {
					allErrs = append(allErrs, field.Invalid(rp.Child("host"), host, msg))
				}
			} else {
				for _, msg := range validation.IsDNS1123Subdomain(host) {
					allErrs = append(allErrs, field.Invalid(rp.Child("host"), host, msg))
				}
			}
			if netutils.ParseIPSloppy(host) != nil {
				allErrs = append(allErrs, field.Invalid(rp.Child("host"), host, "must be a DNS name, not an IP address"))
			}
		}
		if rule.HTTP == nil {
			continue
		}
		hp := rp.Child("http", "paths")
		if len(rule.HTTP.Paths) == 0 {
			allErrs = append(allErrs, field.Required(hp, ""))
		}
		for j, path := range rule.HTTP.Paths {
			pp := hp.Index(j)
			if path.PathType == nil {
				allErrs = append(allErrs, field.Required(pp.Child("pathType"), "pathType must be specified"))
			} else if !pathTypes.Has(*path.PathType) {
				allErrs = append(allErrs, field.NotSupported(pp.Child("pathType"), *path.PathType, sets.List(pathTypes)))
			} else if *path.PathType != networkingv1.PathTypeImplementationSpecific && !strings.HasPrefix(path.Path, "/") {
				allErrs = append(allErrs, field.Invalid(pp.Child("path"), path.Path, "must be an absolute path"))
			}
			allErrs = append(allErrs, validateIngressBackend(&path.Backend, pp.Child("backend"))...)
		}
	}
	for i, tls := range ing.Spec.TLS {
		for j, host := range tls.Hosts {
			if strings.HasPrefix(host, "*.") {
				for _, msg := range validation.IsWildcardDNS1123Subdomain(host) {
					allErrs = append(allErrs, field.Invalid(spec.Child("tls").Index(i).Child("hosts").Index(j), host, msg))
				}
				continue
			}
			for _, msg := range validation.IsDNS1123Subdomain(host) {
				allErrs = append(allErrs, field.Invalid(spec.Child("tls").Index(i).Child("hosts").Index(j), host, msg))
			}
		}
	}
	return allErrs
}

func validateIngressBackend(b *networkingv1.IngressBackend, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case b.Service != nil && b.Resource != nil:
		allErrs = append(allErrs, field.Invalid(p, b.Resource, "cannot set both resource and service backends"))
	case b.Service != nil:
		sp := p.Child("service")
		if b.Service.Name == "" {
			allErrs = append(allErrs, field.Required(sp.Child("name"), ""))
		} else {
			for _, msg := range apimachineryvalidation.NameIsDNS1035Label(b.Service.Name, false) {
				allErrs = append(allErrs, field.Invalid(sp.Child("name"), b.Service.Name, msg))
			}
		}
		port := b.Service.Port
		switch {
		case port.Name != "" && port.Number != 0:
			allErrs = append(allErrs, field.Invalid(sp.Child("port"), port, "cannot set both port name & port number"))
		case port.Name != "":
			for _, msg := range validation.IsValidPortName(port.Name) {
				allErrs = append(allErrs, field.Invalid(sp.Child("port", "name"), port.Name, msg))
			}
		case port.Number != 0:
			for _, msg := range validation.IsValidPortNum(int(port.Number)) {
				allErrs = append(allErrs, field.Invalid(sp.Child("port", "number"), port.Number, msg))
			}
		default:
			allErrs = append(allErrs, field.Required(sp.Child("port"), "port name or number is required"))
		}
	case b.Resource != nil:
		if b.Resource.Kind == "" {
			allErrs = append(allErrs, field.Required(p.Child("resource", "kind"), ""))
		}
		if b.Resource.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("resource", "name"), ""))
		}
	default:
		allErrs = append(allErrs, field.Invalid(p, b, "resource or service backend is required"))
	}
	return allErrs
}

// ValidateIngressClass: a domain-prefixed controller, immutable.
func ValidateIngressClass(ic *networkingv1.IngressClass) field.ErrorList {
	allErrs := validateObjectMeta(&ic.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	cp := field.NewPath("spec", "controller")
	if ic.Spec.Controller == "" {
		allErrs = append(allErrs, field.Required(cp, ""))
	} else {
		if len(ic.Spec.Controller) > 250 {
			allErrs = append(allErrs, field.TooLong(cp, "", 250))
		}
		allErrs = append(allErrs, metav1validation.ValidateLabelName(ic.Spec.Controller, cp)...)
		if !strings.Contains(ic.Spec.Controller, "/") {
			allErrs = append(allErrs, field.Invalid(cp, ic.Spec.Controller, "must be a domain-prefixed path (such as \"acme.io/foo\")"))
		}
	}
	if p := ic.Spec.Parameters; p != nil {
		pp := field.NewPath("spec", "parameters")
		if p.Kind == "" {
			allErrs = append(allErrs, field.Required(pp.Child("kind"), "kind is required"))
		}
		if p.Name == "" {
			allErrs = append(allErrs, field.Required(pp.Child("name"), "name is required"))
		}
		if p.Scope != nil && *p.Scope == networkingv1.IngressClassParametersReferenceScopeNamespace && p.Namespace == nil {
			allErrs = append(allErrs, field.Required(pp.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
		}
	}
	return allErrs
}

// ValidateIngressClassUpdate: the controller is immutable.
func ValidateIngressClassUpdate(ic, old *networkingv1.IngressClass) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ic.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateIngressClass(ic)...)
	return append(allErrs, validateImmutableField(ic.Spec.Controller, old.Spec.Controller, field.NewPath("spec", "controller"))...)
}

// ValidateNetworkPolicy validates selectors, ports, ipBlocks and policy types.
func ValidateNetworkPolicy(np *networkingv1.NetworkPolicy) field.ErrorList {
	allErrs := validateObjectMeta(&np.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	opts := metav1validation.LabelSelectorValidationOptions{}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(&np.Spec.PodSelector, opts, spec.Child("podSelector"))...)
	peers := func(list []networkingv1.NetworkPolicyPeer, p *field.Path) {
		for i, peer := range list {
			pp := p.Index(i)
			n := 0
			if peer.PodSelector != nil {
				n++
				allErrs = append(allErrs, metav1validation.ValidateLabelSelector(peer.PodSelector, opts, pp.Child("podSelector"))...)
			}
			if peer.NamespaceSelector != nil {
				n++
				allErrs = append(allErrs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, opts, pp.Child("namespaceSelector"))...)
			}
			if peer.IPBlock != nil {
				if n > 0 {
					allErrs = append(allErrs, field.Forbidden(pp, "may not specify more than 1 peer type"))
				}
				n++
				if _, _, err := netutils.ParseCIDRSloppy(peer.IPBlock.CIDR); err != nil {
					allErrs = append(allErrs, field.Invalid(pp.Child("ipBlock", "cidr"), peer.IPBlock.CIDR, "must be a valid CIDR"))
				}
				for j, ex := range peer.IPBlock.Except {
					if _, _, err := netutils.ParseCIDRSloppy(ex); err != nil {
						allErrs = append(allErrs, field.Invalid(pp.Child("ipBlock", "except").Index(j), ex, "must be a valid CIDR"))
					}
				}
			}
			if n == 0 {
				allErrs = append(allErrs, field.Required(pp, "must specify a peer"))
			}
		}
	}
	ports := func(list []networkingv1.NetworkPolicyPort, p *field.Path) {
		for i, port := range list {
			pp := p.Index(i)
			if port.Protocol != nil && !supportedPortProtocols.Has(*port.Protocol) {
				allErrs = append(allErrs, field.NotSupported(pp.Child("protocol"), *port.Protocol, sets.List(supportedPortProtocols)))
			}
			if port.EndPort != nil && (port.Port == nil || port.Port.IntVal == 0 || *port.EndPort < port.Port.IntVal) {
				allErrs = append(allErrs, field.Invalid(pp.Child("endPort"), *port.EndPort, "must be greater than or equal to `port`"))
			}
		}
	}
	for i, rule := range np.Spec.Ingress {
		peers(rule.From, spec.Child("ingress").Index(i).Child("from"))
		ports(rule.Ports, spec.Child("ingress").Index(i).Child("ports"))
	}
	for i, rule := range np.Spec.Egress {
		peers(rule.To, spec.Child("egress").Index(i).Child("to"))
		ports(rule.Ports, spec.Child("egress").Index(i).Child("ports"))
	}
	if len(np.Spec.PolicyTypes) > 2 {
		allErrs = append(allErrs, field.Invalid(spec.Child("policyTypes"), np.Spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range np.Spec.PolicyTypes {
		if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
			allErrs = append(allErrs, field.NotSupported(spec.Child("policyTypes").Index(i), t,
				[]string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}))
		}
	}
	return allErrs
}

// Storage.

var volumeBindingModes = sets.New(storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer)

// ValidateStorageClass: a qualified provisioner, Retain or Delete, a known
// binding mode, parameters of at most 256 KiB.
func ValidateStorageClass(sc *storagev1.StorageClass) field.ErrorList {
	allErrs := validateObjectMeta(&sc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	pp := field.NewPath("provisioner")
	if sc.Provisioner == "" {
		allErrs = append(allErrs, field.Required(pp, ""))
	} else {
		allErrs = append(allErrs, validateQualifiedName(strings.ToLower(sc.Provisioner), pp)...)
	}
	size := 0
	for k, v := range sc.Parameters {
		size += len(k) + len(v)
		if k == "" {
			allErrs = append(allErrs, field.Invalid(field.NewPath("parameters"), k, "field can not be empty."))
		}
	}
	if size > 256*1024 {
		allErrs = append(allErrs, field.TooLong(field.NewPath("parameters"), "", 256*1024))
	}
	if sc.ReclaimPolicy != nil && *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimRetain && *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		allErrs = append(allErrs, field.NotSupported(field.NewPath("reclaimPolicy"), *sc.ReclaimPolicy,
			[]string{string(corev1.PersistentVolumeReclaimDelete), string(corev1.PersistentVolumeReclaimRetain)}))
	}
	if sc.VolumeBindingMode == nil {
		allErrs = append(allErrs, field.Required(field.NewPath("volumeBindingMode"), ""))
	} else if !volumeBindingModes.Has(*sc.VolumeBindingMode) {
		allErrs = append(allErrs, field.NotSupported(field.NewPath("volumeBindingMode"), *sc.VolumeBindingMode, sets.List(volumeBindingModes)))
	}
	return allErrs
}

// ValidateStorageClassUpdate: parameters, provisioner, reclaimPolicy and
// volumeBindingMode are immutable.
func ValidateStorageClassUpdate(sc, old *storagev1.StorageClass) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&sc.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateStorageClass(sc)...)
	if !equality.Semantic.DeepEqual(sc.Parameters, old.Parameters) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	if sc.Provisioner != old.Provisioner {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("provisioner"), "updates to provisioner are forbidden."))
	}
	if !equality.Semantic.DeepEqual(sc.ReclaimPolicy, old.ReclaimPolicy) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
	}
	return append(allErrs, validateImmutableField(sc.VolumeBindingMode, old.VolumeBindingMode, field.NewPath("volumeBindingMode"))...)
}

// ValidateCSIDriver: a qualified driver name and a complete spec.
func ValidateCSIDriver(d *storagev1.CSIDriver) field.ErrorList {
	allErrs := validateObjectMeta(&d.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if len(d.Name) > 63 {
		allErrs = append(allErrs, field.TooLong(metadataPath.Child("name"), "", 63))
	}
	spec := field.NewPath("spec")
	if d.Spec.AttachRequired == nil {
		allErrs = append(allErrs, field.Required(spec.Child("attachedRequired"), ""))
	}
	if d.Spec.PodInfoOnMount == nil {
		allErrs = append(allErrs, field.Required(spec.Child("podInfoOnMount"), ""))
	}
	for i, m := range d.Spec.VolumeLifecycleModes {
		if m != storagev1.VolumeLifecyclePersistent && m != storagev1.VolumeLifecycleEphemeral {
			allErrs = append(allErrs, field.NotSupported(spec.Child("volumeLifecycleModes").Index(i), m,
				[]string{string(storagev1.VolumeLifecyclePersistent), string(storagev1.VolumeLifecycleEphemeral)}))
		}
	}
	return allErrs
}

// ValidateCSIDriverUpdate: attachRequired, volumeLifecycleModes and
// fsGroupPolicy are immutable.
func ValidateCSIDriverUpdate(d, old *storagev1.CSIDriver) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateCSIDriver(d)...)
	spec := field.NewPath("spec")
	allErrs = append(allErrs, validateImmutableField(d.Spec.AttachRequired, old.Spec.AttachRequired, spec.Child("attachRequired"))...)
	allErrs = append(allErrs, validateImmutableField(d.Spec.FSGroupPolicy, old.Spec.FSGroupPolicy, spec.Child("fsGroupPolicy"))...)
	return append(allErrs, validateImmutableField(d.Spec.VolumeLifecycleModes, old.Spec.VolumeLifecycleModes, spec.Child("volumeLifecycleModes"))...)
}

// ValidateCSINode: unique driver names and node IDs present.
func ValidateCSINode(n *storagev1.CSINode) field.ErrorList {
	allErrs := validateObjectMeta(&n.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	seen := sets.New[string]()
	dp := field.NewPath("spec", "drivers")
	for i, d := range n.Spec.Drivers {
		if d.Name == "" {
			allErrs = append(allErrs, field.Required(dp.Index(i).Child("name"), ""))
		}
		if seen.Has(d.Name) {
			allErrs = append(allErrs, field.Duplicate(dp.Index(i).Child("name"), d.Name))
		}
		seen.Insert(d.Name)
		if d.NodeID == "" {
			allErrs = append(allErrs, field.Required(dp.Index(i).Child("nodeID"), ""))
		}
	}
	return allErrs
}

// ValidateCSIStorageCapacity: a storage class name and non-negative sizes.
func ValidateCSIStorageCapacity(c *storagev1.CSIStorageCapacity) field.ErrorList {
	allErrs := validateObjectMeta(&c.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if c.StorageClassName == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("storageClassName"), ""))
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
		}
	}
	if c.NodeTopology != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(c.NodeTopology, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("nodeTopology"))...)
	}
	if c.Capacity != nil {
		allErrs = append(allErrs, validateNonnegativeQuantity(*c.Capacity, field.NewPath("capacity"))...)
	}
	if c.MaximumVolumeSize != nil {
		allErrs = append(allErrs, validateNonnegativeQuantity(*c.MaximumVolumeSize, field.NewPath("maximumVolumeSize"))...)
	}
	return allErrs
}

// ValidateVolumeAttachment: an attacher, a node and exactly one source.
func ValidateVolumeAttachment(va *storagev1.VolumeAttachment) field.ErrorList {
	allErrs := validateObjectMeta(&va.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	if va.Spec.Attacher == "" {
		allErrs = append(allErrs, field.Required(spec.Child("attacher"), ""))
	}
	if va.Spec.NodeName == "" {
		allErrs = append(allErrs, field.Required(spec.Child("nodeName"), ""))
	}
	src := va.Spec.Source
	switch {
	case src.PersistentVolumeName == nil && src.InlineVolumeSpec == nil:
		allErrs = append(allErrs, field.Required(spec.Child("source"), "must specify exactly one of persistentVolumeName and inlineVolumeSpec"))
	case src.PersistentVolumeName != nil && src.InlineVolumeSpec != nil:
		allErrs = append(allErrs, field.Forbidden(spec.Child("source"), "must specify exactly one of persistentVolumeName and inlineVolumeSpec"))
	case src.PersistentVolumeName != nil && *src.PersistentVolumeName == "":
		allErrs = append(allErrs, field.Required(spec.Child("source", "persistentVolumeName"), "must specify non empty persistentVolumeName"))
	}
	return allErrs
}

// ValidateVolumeAttachmentUpdate: the spec is immutable.
func ValidateVolumeAttachmentUpdate(va, old *storagev1.VolumeAttachment) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&va.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateVolumeAttachment(va)...)
	if !equality.Semantic.DeepEqual(va.Spec, old.Spec) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec"), va.Spec, "field is immutable"))
	}
	return allErrs
}

// Certificates.

var keyUsages = sets.New(certificatesv1.UsageSigning, certificatesv1.UsageDigitalSignature, certificatesv1.UsageContentCommitment,
	certificatesv1.UsageKeyEncipherment, certificatesv1.UsageKeyAgreement, certificatesv1.UsageDataEncipherment,
	certificatesv1.UsageCertSign, certificatesv1.UsageCRLSign, certificatesv1.UsageEncipherOnly, certificatesv1.UsageDecipherOnly,
	certificatesv1.UsageAny, certificatesv1.UsageServerAuth, certificatesv1.UsageClientAuth, certificatesv1.UsageCodeSigning,
	certificatesv1.UsageEmailProtection, certificatesv1.UsageSMIME, certificatesv1.UsageIPsecEndSystem,
	certificatesv1.UsageIPsecTunnel, certificatesv1.UsageIPsecUser, certificatesv1.UsageTimestamping,
	certificatesv1.UsageOCSPSigning, certificatesv1.UsageMicrosoftSGC, certificatesv1.UsageNetscapeSGC)

// ValidateCertificateSigningRequest: a PEM CERTIFICATE REQUEST, a signer
// name, known usages, a valid expiration and consistent conditions.
func ValidateCertificateSigningRequest(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	// Upstream does not care what CSRs are called (a kubelet's are
	// node-csr-<base64url>), beyond their being a path segment.
	allErrs := validateObjectMeta(&csr.ObjectMeta, false, path.ValidatePathSegmentName, metadataPath)
	spec := field.NewPath("spec")
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		allErrs = append(allErrs, field.Invalid(spec.Child("request"), csr.Spec.Request, "PEM block type must be CERTIFICATE REQUEST"))
	} else if _, err := x509.ParseCertificateRequest(block.Bytes); err != nil {
		allErrs = append(allErrs, field.Invalid(spec.Child("request"), csr.Spec.Request, err.Error()))
	}
	if csr.Spec.SignerName == "" {
		allErrs = append(allErrs, field.Required(spec.Child("signerName"), ""))
	} else if !strings.Contains(csr.Spec.SignerName, "/") {
		allErrs = append(allErrs, field.Invalid(spec.Child("signerName"), csr.Spec.SignerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'"))
	}
	if len(csr.Spec.Usages) == 0 {
		allErrs = append(allErrs, field.Required(spec.Child("usages"), ""))
	}
	for i, u := range csr.Spec.Usages {
		if !keyUsages.Has(u) {
			allErrs = append(allErrs, field.NotSupported(spec.Child("usages").Index(i), u, sets.List(keyUsages)))
		}
	}
	if e := csr.Spec.ExpirationSeconds; e != nil && *e < 600 {
		allErrs = append(allErrs, field.Invalid(spec.Child("expirationSeconds"), *e, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	return append(allErrs, validateCSRStatus(csr)...)
}

func validateCSRStatus(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	var allErrs field.ErrorList
	cp := field.NewPath("status", "conditions")
	approved, denied := false, false
	seen := sets.New[certificatesv1.RequestConditionType]()
	for i, c := range csr.Status.Conditions {
		if c.Type == "" {
			allErrs = append(allErrs, field.Required(cp.Index(i).Child("type"), ""))
		}
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		}
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed {
			if seen.Has(c.Type) {
				allErrs = append(allErrs, field.Duplicate(cp.Index(i).Child("type"), c.Type))
			}
			seen.Insert(c.Type)
			if c.Status != corev1.ConditionTrue {
				allErrs = append(allErrs, field.NotSupported(cp.Index(i).Child("status"), c.Status, []string{string(corev1.ConditionTrue)}))
			}
		}
	}
	if approved && denied {
		allErrs = append(allErrs, field.Invalid(cp, csr.Status.Conditions, "Approved and Denied conditions are mutually exclusive"))
	}
	if len(csr.Status.Certificate) > 0 && !approved {
		allErrs = append(allErrs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", "certificate can only be set if the Approved condition is present"))
	}
	return allErrs
}

// ValidateCertificateSigningRequestUpdate: an Approved or Denied condition
// once set stays, and a certificate once issued does not change.
func ValidateCertificateSigningRequestUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&csr.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateCertificateSigningRequest(csr)...)
	cp := field.NewPath("status", "conditions")
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		if hasCSRCondition(old, t) && !hasCSRCondition(csr, t) {
			allErrs = append(allErrs, field.Forbidden(cp, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if len(old.Status.Certificate) > 0 && string(old.Status.Certificate) != string(csr.Status.Certificate) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
	}
	return allErrs
}

func hasCSRCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}

// Flow control: plain objects with their basic invariants.

// ValidateFlowSchema checks the reference and the precedence range.
func ValidateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	allErrs := validateObjectMeta(&fs.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	if fs.Spec.PriorityLevelConfiguration.Name == "" {
		allErrs = append(allErrs, field.Required(spec.Child("priorityLevelConfiguration", "name"), "must reference a priority level"))
	}
	if fs.Spec.MatchingPrecedence <= 0 || fs.Spec.MatchingPrecedence > 10000 {
		allErrs = append(allErrs, field.Invalid(spec.Child("matchingPrecedence"), fs.Spec.MatchingPrecedence, "must be between 1 and 10000"))
	}
	if d := fs.Spec.DistinguisherMethod; d != nil && d.Type != flowcontrolv1.FlowDistinguisherMethodByUserType && d.Type != flowcontrolv1.FlowDistinguisherMethodByNamespaceType {
		allErrs = append(allErrs, field.NotSupported(spec.Child("distinguisherMethod", "type"), d.Type,
			[]string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}))
	}
	return allErrs
}

// ValidatePriorityLevelConfiguration checks that the type matches the
// configuration given.
func ValidatePriorityLevelConfiguration(p *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	allErrs := validateObjectMeta(&p.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	switch p.Spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if p.Spec.Limited != nil {
			allErrs = append(allErrs, field.Forbidden(spec.Child("limited"), "must be nil if the type is not Limited"))
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if p.Spec.Limited == nil {
			allErrs = append(allErrs, field.Required(spec.Child("limited"), "must not be empty when type is Limited"))
		} else {
			l := p.Spec.Limited
			if l.NominalConcurrencyShares != nil && *l.NominalConcurrencyShares < 0 {
				allErrs = append(allErrs, field.Invalid(spec.Child("limited", "nominalConcurrencyShares"), *l.NominalConcurrencyShares, "must be a non-negative integer"))
			}
			rp := spec.Child("limited", "limitResponse")
			switch l.LimitResponse.Type {
			case flowcontrolv1.LimitResponseTypeQueue:
				if l.LimitResponse.Queuing == nil {
					allErrs = append(allErrs, field.Required(rp.Child("queuing"), "must not be empty if limited.limitResponse.type is Queue"))
				}
			case flowcontrolv1.LimitResponseTypeReject:
				if l.LimitResponse.Queuing != nil {
					allErrs = append(allErrs, field.Forbidden(rp.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited"))
				}
			default:
				allErrs = append(allErrs, field.NotSupported(rp.Child("type"), l.LimitResponse.Type,
					[]string{string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject)}))
			}
		}
		if p.Spec.Exempt != nil {
			allErrs = append(allErrs, field.Forbidden(spec.Child("exempt"), "must be nil if the type is Limited"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(spec.Child("type"), p.Spec.Type,
			[]string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}))
	}
	return allErrs
}

// ValidateIngressUpdate validates an update of an Ingress: the metadata
// rules and the Ingress as on create.
func ValidateIngressUpdate(o, p *networkingv1.Ingress) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateIngress(o)...)
}

// ValidateNetworkPolicyUpdate validates an update of a NetworkPolicy: the
// metadata rules and the policy as on create.
func ValidateNetworkPolicyUpdate(o, p *networkingv1.NetworkPolicy) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateNetworkPolicy(o)...)
}

// ValidateCSINodeUpdate validates an update of a CSINode: the metadata
// rules and the CSINode as on create.
func ValidateCSINodeUpdate(o, p *storagev1.CSINode) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateCSINode(o)...)
}

// ValidateCSIStorageCapacityUpdate validates an update of a
// CSIStorageCapacity: the metadata rules, the object as on create, and
// storageClassName and nodeTopology unchanged.
func ValidateCSIStorageCapacityUpdate(o, p *storagev1.CSIStorageCapacity) field.ErrorList {
	errs := append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateCSIStorageCapacity(o)...)
	errs = append(errs, validateImmutableField(o.StorageClassName, p.StorageClassName, field.NewPath("storageClassName"))...)
	return append(errs, validateImmutableField(o.NodeTopology, p.NodeTopology, field.NewPath("nodeTopology"))...)
}

// ValidateFlowSchemaUpdate validates an update of a FlowSchema: the
// metadata rules and the FlowSchema as on create.
func ValidateFlowSchemaUpdate(o, p *flowcontrolv1.FlowSchema) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateFlowSchema(o)...)
}

// ValidatePriorityLevelConfigurationUpdate validates an update of a
// PriorityLevelConfiguration: the metadata rules and the object as on create.
func ValidatePriorityLevelConfigurationUpdate(o, p *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidatePriorityLevelConfiguration(o)...)
}
