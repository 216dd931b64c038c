package tables

import (
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"skiff.dev/apiserver/pkg/apis/convert"
)

const (
	// loadBalancerWidth is where upstream clips load balancer addresses in
	// non-wide output. The server always prints wide, so it never clips.
	loadBalancerWidth = 16

	// labelNodeRolePrefix marks a node role: node-role.kubernetes.io/<role>="".
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	// nodeLabelRole is the older form: kubernetes.io/role=<role>.
	nodeLabelRole = "kubernetes.io/role"
)

func (p *printer) printNamespace(obj *corev1.Namespace) metav1.TableRow {
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells:  []interface{}{obj.Name, string(obj.Status.Phase), p.since(obj.CreationTimestamp)},
	}
}

func (p *printer) printConfigMap(obj *corev1.ConfigMap) metav1.TableRow {
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells:  []interface{}{obj.Name, int64(len(obj.Data) + len(obj.BinaryData)), p.since(obj.CreationTimestamp)},
	}
}

// printSecret counts the keys of data, and of stringData, which upstream's
// conversion to the internal type merges into data.
func (p *printer) printSecret(obj *corev1.Secret) metav1.TableRow {
	keys := len(obj.Data)
	for k := range obj.StringData {
		if _, ok := obj.Data[k]; !ok {
			keys++
		}
	}
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells:  []interface{}{obj.Name, string(obj.Type), int64(keys), p.since(obj.CreationTimestamp)},
	}
}

func (p *printer) printServiceAccount(obj *corev1.ServiceAccount) metav1.TableRow {
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells:  []interface{}{obj.Name, int64(len(obj.Secrets)), p.since(obj.CreationTimestamp)},
	}
}

// printNode shows Ready/NotReady/Unknown from the Ready condition, plus
// SchedulingDisabled when cordoned.
func (p *printer) printNode(obj *corev1.Node) metav1.TableRow {
	var status []string
	for i := range obj.Status.Conditions {
		cond := obj.Status.Conditions[i]
		if cond.Type != corev1.NodeReady {
			continue
		}
		// Upstream keeps the last Ready condition when there are several.
		status = status[:0]
		if cond.Status == corev1.ConditionTrue {
			status = append(status, string(cond.Type))
		} else {
			status = append(status, "Not"+string(cond.Type))
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if obj.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}

	roles := strings.Join(findNodeRoles(obj), ",")
	if roles == "" {
		roles = none
	}

	info := obj.Status.NodeInfo
	osImage, kernelVersion, crVersion := info.OSImage, info.KernelVersion, info.ContainerRuntimeVersion
	if osImage == "" {
		osImage = unknown
	}
	if kernelVersion == "" {
		kernelVersion = unknown
	}
	if crVersion == "" {
		crVersion = unknown
	}
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells: []interface{}{
			obj.Name,
			strings.Join(status, ","),
			roles,
			p.since(obj.CreationTimestamp),
			info.KubeletVersion,
			nodeAddress(obj, corev1.NodeInternalIP),
			nodeAddress(obj, corev1.NodeExternalIP),
			osImage,
			kernelVersion,
			crVersion,
		},
	}
}

// nodeAddress returns the node's first address of the given type, or "<none>".
func nodeAddress(node *corev1.Node, addressType corev1.NodeAddressType) string {
	for _, address := range node.Status.Addresses {
		if address.Type == addressType {
			return address.Address
		}
	}
	return none
}

// findNodeRoles returns the sorted roles of a node, from
// node-role.kubernetes.io/<role> labels and the kubernetes.io/role label.
func findNodeRoles(node *corev1.Node) []string {
	roles := sets.New[string]()
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix):
			if role := strings.TrimPrefix(k, labelNodeRolePrefix); role != "" {
				roles.Insert(role)
			}
		case k == nodeLabelRole && v != "":
			roles.Insert(v)
		}
	}
	return sets.List(roles)
}

func (p *printer) printService(obj *corev1.Service) metav1.TableRow {
	svcPorts := makePortString(obj.Spec.Ports)
	if svcPorts == "" {
		svcPorts = none
	}
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells: []interface{}{
			obj.Name,
			string(obj.Spec.Type),
			orNone(clusterIP(&obj.Spec)),
			serviceExternalIP(obj, true),
			svcPorts,
			p.since(obj.CreationTimestamp),
			labels.FormatLabels(obj.Spec.Selector),
		},
	}
}

// clusterIP is the service's primary cluster IP. Upstream stores clusterIPs
// normalised from clusterIP, so clusterIP stands in when clusterIPs is empty.
func clusterIP(spec *corev1.ServiceSpec) string {
	if len(spec.ClusterIPs) > 0 {
		return spec.ClusterIPs[0]
	}
	return spec.ClusterIP
}

// serviceExternalIP prints the EXTERNAL-IP of a service by type.
func serviceExternalIP(svc *corev1.Service, wide bool) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return none
	case corev1.ServiceTypeLoadBalancer:
		lbIPs := loadBalancerStatusString(svc.Status.LoadBalancer, wide)
		if len(svc.Spec.ExternalIPs) > 0 {
			var results []string
			if lbIPs != "" {
				results = append(results, strings.Split(lbIPs, ",")...)
			}
			results = append(results, svc.Spec.ExternalIPs...)
			return strings.Join(results, ",")
		}
		if lbIPs != "" {
			return lbIPs
		}
		return pending
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return unknown
}

// loadBalancerStatusString joins the sorted, distinct ingress IPs (or
// hostnames) of a load balancer. Unless wide, it is clipped to 16 bytes.
func loadBalancerStatusString(s corev1.LoadBalancerStatus, wide bool) string {
	result := sets.New[string]()
	for _, ingress := range s.Ingress {
		if ingress.IP != "" {
			result.Insert(ingress.IP)
		} else if ingress.Hostname != "" {
			result.Insert(ingress.Hostname)
		}
	}
	r := strings.Join(sets.List(result), ",")
	if !wide && len(r) > loadBalancerWidth {
		r = r[0:(loadBalancerWidth-3)] + "..."
	}
	return r
}

// makePortString prints ports as port/protocol or port:nodePort/protocol.
func makePortString(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, port := range ports {
		pieces[i] = fmt.Sprintf("%d/%s", port.Port, port.Protocol)
		if port.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", port.Port, port.NodePort, port.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

func (p *printer) printEndpoints(obj *corev1.Endpoints) metav1.TableRow {
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells:  []interface{}{obj.Name, formatEndpoints(obj), p.since(obj.CreationTimestamp)},
	}
}

// formatEndpoints prints up to three ip:port pairs (bare IPs for subsets
// without ports) and how many more there are.
func formatEndpoints(endpoints *corev1.Endpoints) string {
	if len(endpoints.Subsets) == 0 {
		return none
	}
	const max = 3
	list := []string{}
	more := false
	count := 0
	for i := range endpoints.Subsets {
		ss := &endpoints.Subsets[i]
		if len(ss.Ports) == 0 {
			// Headless services may have no ports.
			count += len(ss.Addresses)
			for j := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, ss.Addresses[j].IP)
			}
			continue
		}
		for k := range ss.Ports {
			port := &ss.Ports[k]
			count += len(ss.Addresses)
			for j := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, net.JoinHostPort(ss.Addresses[j].IP, strconv.Itoa(int(port.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	return ret
}

// printEvent prints core/v1 events, taking the series and the newer
// eventTime/reportingController fields into account as upstream does.
func (p *printer) printEvent(obj *corev1.Event) metav1.TableRow {
	firstTimestamp := p.since(obj.FirstTimestamp)
	if obj.FirstTimestamp.IsZero() {
		firstTimestamp = p.sinceMicro(obj.EventTime)
	}

	lastTimestamp := p.since(obj.LastTimestamp)
	if obj.LastTimestamp.IsZero() {
		lastTimestamp = firstTimestamp
	}

	count := obj.Count
	if obj.Series != nil {
		lastTimestamp = p.sinceMicro(obj.Series.LastObservedTime)
		count = obj.Series.Count
	} else if count == 0 {
		// Singleton events don't have a count set in the new API.
		count = 1
	}

	target := strings.ToLower(obj.InvolvedObject.Kind)
	if obj.InvolvedObject.Name != "" {
		target = fmt.Sprintf("%s/%s", target, obj.InvolvedObject.Name)
	}

	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells: []interface{}{
			lastTimestamp,
			obj.Type,
			obj.Reason,
			target,
			obj.InvolvedObject.FieldPath,
			formatEventSource(obj.Source, obj.ReportingController, obj.ReportingInstance),
			strings.TrimSpace(obj.Message),
			firstTimestamp,
			int64(count),
			obj.Name,
		},
	}
}

// formatEventSource prints "component, host", falling back to the reporting
// controller and instance, and leaving out an empty host.
func formatEventSource(es corev1.EventSource, reportingController, reportingInstance string) string {
	component := firstNonEmpty(es.Component, reportingController)
	instance := firstNonEmpty(es.Host, reportingInstance)
	if instance == "" {
		return component
	}
	return component + ", " + instance
}

// Pod prints corev1.Pod objects and lists.
var Pod = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers(podColumns(), p.printPod, func(l *corev1.PodList) []corev1.Pod { return l.Items })
}}

// Namespace prints corev1.Namespace objects and lists.
var Namespace = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Status", Type: "string", Description: "The status of the namespace"},
		ageColumn(),
	}, p.printNamespace, func(l *corev1.NamespaceList) []corev1.Namespace { return l.Items })
}}

// ComponentStatus prints corev1.ComponentStatus objects and lists, which
// the server answers without storing (no row of the resource table).
var ComponentStatus = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Status", Type: "string", Description: "Status of the component conditions"},
		{Name: "Message", Type: "string", Description: "Message of the component conditions"},
		{Name: "Error", Type: "string", Description: "Error of the component conditions"},
	}, p.printComponentStatus, func(l *corev1.ComponentStatusList) []corev1.ComponentStatus { return l.Items })
}}

// printComponentStatus is upstream's: the Healthy condition as Healthy or
// Unhealthy (Unknown without one), with its message and error.
func (p *printer) printComponentStatus(obj *corev1.ComponentStatus) metav1.TableRow {
	status, message, errText := "Unknown", "", ""
	for _, c := range obj.Conditions {
		if c.Type == corev1.ComponentHealthy {
			status = "Unhealthy"
			if c.Status == corev1.ConditionTrue {
				status = "Healthy"
			}
			message, errText = c.Message, c.Error
			break
		}
	}
	return metav1.TableRow{Object: runtime.RawExtension{Object: obj}, Cells: []interface{}{obj.Name, status, message, errText}}
}

// Node prints corev1.Node objects and lists.
var Node = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		ageColumn(),
		{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
	}, p.printNode, func(l *corev1.NodeList) []corev1.Node { return l.Items })
}}

// Service prints corev1.Service objects and lists.
var Service = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Type", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["type"]},
		{Name: "Cluster-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]},
		{Name: "External-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]},
		{Name: "Port(s)", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["ports"]},
		ageColumn(),
		{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ServiceSpec{}.SwaggerDoc()["selector"]},
	}, p.printService, func(l *corev1.ServiceList) []corev1.Service { return l.Items })
}}

// Endpoints prints corev1.Endpoints objects and lists.
var Endpoints = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
		ageColumn(),
	}, p.printEndpoints, func(l *corev1.EndpointsList) []corev1.Endpoints { return l.Items })
}}

// ConfigMap prints corev1.ConfigMap objects and lists.
var ConfigMap = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
		ageColumn(),
	}, p.printConfigMap, func(l *corev1.ConfigMapList) []corev1.ConfigMap { return l.Items })
}}

// Secret prints corev1.Secret objects and lists.
var Secret = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
		{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
		ageColumn(),
	}, p.printSecret, func(l *corev1.SecretList) []corev1.Secret { return l.Items })
}}

// ServiceAccount prints corev1.ServiceAccount objects and lists.
var ServiceAccount = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Secrets", Type: "string", Description: corev1.ServiceAccount{}.SwaggerDoc()["secrets"]},
		ageColumn(),
	}, p.printServiceAccount, func(l *corev1.ServiceAccountList) []corev1.ServiceAccount { return l.Items })
}}

// Event prints corev1.Event objects and lists.
var Event = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers(eventColumns(), p.printEvent, func(l *corev1.EventList) []corev1.Event { return l.Items })
}}

// EventV1 prints events.k8s.io Events as the core Events they are stored as.
var EventV1 = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers(eventColumns(), func(e *eventsv1.Event) metav1.TableRow {
		r := p.printEvent(convert.EventToCore(e))
		r.Object = runtime.RawExtension{Object: e}
		return r
	}, func(l *eventsv1.EventList) []eventsv1.Event { return l.Items })
}}

// eventColumns are the columns of Events of both groups.
func eventColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		{Name: "Last Seen", Type: "string", Description: corev1.Event{}.SwaggerDoc()["lastTimestamp"]},
		{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
		{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
		{Name: "Object", Type: "string", Description: corev1.Event{}.SwaggerDoc()["involvedObject"]},
		{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
		{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
		{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
		{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
		{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
		{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: objectMetaDoc["name"]},
	}
}
