package endpointslice

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

// ShouldPodBeInEndpoints reports whether pod belongs in an Endpoints or
// EndpointSlice object at all, as upstream's function of the same name:
// never when it is terminal (Succeeded or Failed) or has no IP yet, and
// while it is terminating only when includeTerminating.
func ShouldPodBeInEndpoints(pod *corev1.Pod, includeTerminating bool) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return false
	}
	return includeTerminating || pod.DeletionTimestamp == nil
}

// ShouldSetHostname reports whether pod's endpoint carries its hostname:
// it has one and its subdomain is the Service's name (a headless Service
// giving pods DNS names).
func ShouldSetHostname(pod *corev1.Pod, svc *corev1.Service) bool {
	return pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && svc.Namespace == pod.Namespace
}

// FindPort resolves svcPort's targetPort on pod: a number is used as it
// is; a name is looked up among the pod's container ports (and its sidecar
// init containers') of the same protocol.
func FindPort(pod *corev1.Pod, svcPort *corev1.ServicePort) (int, error) {
	target := svcPort.TargetPort
	switch target.Type {
	case intstr.String:
		match := func(c *corev1.Container) (int, bool) {
			for _, p := range c.Ports {
				if p.Name == target.StrVal && p.Protocol == svcPort.Protocol {
					return int(p.ContainerPort), true
				}
			}
			return 0, false
		}
		for i := range pod.Spec.Containers {
			if n, ok := match(&pod.Spec.Containers[i]); ok {
				return n, nil
			}
		}
		for i := range pod.Spec.InitContainers {
			c := &pod.Spec.InitContainers[i]
			if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				continue
			}
			if n, ok := match(c); ok {
				return n, nil
			}
		}
	case intstr.Int:
		return target.IntValue(), nil
	}
	return 0, fmt.Errorf("pod %s/%s has no port %q for protocol %s", pod.Namespace, pod.Name, target.String(), svcPort.Protocol)
}

// isIPv6 reports whether s is an IPv6 address (an IPv4-mapped one counts
// as IPv4, as upstream's utilnet does).
func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Unmap().Is6()
}

// canonicalIP re-formats a parseable address, so irregular spellings
// compare equal; others are returned as they are.
func canonicalIP(s string) (string, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return "", false
	}
	return a.Unmap().String(), true
}

// podToEndpoint is pod's endpoint in a slice of addressType of svc.
func podToEndpoint(pod *corev1.Pod, node *corev1.Node, svc *corev1.Service, addressType discoveryv1.AddressType) discoveryv1.Endpoint {
	serving := controllerutil.IsPodReady(pod)
	terminating := pod.DeletionTimestamp != nil
	// Ready never holds for a terminating pod, unless the Service
	// publishes not-ready addresses.
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	ep := discoveryv1.Endpoint{
		Addresses: endpointAddresses(pod.Status, addressType),
		Conditions: discoveryv1.EndpointConditions{
			Ready:       &ready,
			Serving:     &serving,
			Terminating: &terminating,
		},
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if pod.Spec.NodeName != "" {
		ep.NodeName = &pod.Spec.NodeName
	}
	if node != nil && node.Labels[corev1.LabelTopologyZone] != "" {
		zone := node.Labels[corev1.LabelTopologyZone]
		ep.Zone = &zone
	}
	if ShouldSetHostname(pod, svc) {
		ep.Hostname = &pod.Spec.Hostname
	}
	return ep
}

// endpointAddresses are the pod's IPs of addressType.
func endpointAddresses(status corev1.PodStatus, addressType discoveryv1.AddressType) []string {
	addrs := []string{}
	for _, ip := range status.PodIPs {
		s, ok := canonicalIP(ip.IP)
		if !ok {
			continue
		}
		if isIPv6(s) == (addressType == discoveryv1.AddressTypeIPv6) {
			addrs = append(addrs, s)
		}
	}
	return addrs
}

// endpointPorts are svc's ports as pod serves them: a named targetPort is
// resolved against the pod's containers, and a port the pod does not have
// is left out.
func endpointPorts(logger klog.Logger, svc *corev1.Service, pod *corev1.Pod) []discoveryv1.EndpointPort {
	ports := []discoveryv1.EndpointPort{}
	// A headless Service may have no ports.
	if len(svc.Spec.Ports) == 0 && svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return ports
	}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		n, err := FindPort(pod, sp)
		if err != nil {
			logger.V(4).Info("Failed to find port for service", "service", klog.KObj(svc), "err", err)
			continue
		}
		name, proto, port := sp.Name, sp.Protocol, int32(n)
		ports = append(ports, discoveryv1.EndpointPort{Name: &name, Port: &port, Protocol: &proto, AppProtocol: sp.AppProtocol})
	}
	return ports
}

// portMapKey identifies a set of endpoint ports regardless of order: the
// endpoints of pods that serve the same ports share slices.
type portMapKey string

func newPortMapKey(ports []discoveryv1.EndpointPort) portMapKey {
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = fmt.Sprintf("%q/%q/%d/%q", deref(p.Name), deref(p.Protocol), derefInt(p.Port), deref(p.AppProtocol))
	}
	slices.Sort(parts)
	return portMapKey(strings.Join(parts, ","))
}

func deref[T ~string](p *T) string {
	if p == nil {
		return "<nil>"
	}
	return string(*p)
}

func derefInt(p *int32) int64 {
	if p == nil {
		return -1
	}
	return int64(*p)
}

// endpointKey identifies an endpoint as upstream's endpoint hash does: its
// addresses, hostname and target. Two endpoints with the same key are the
// same endpoint, perhaps with other conditions, node or zone, so it is
// updated in place.
type endpointKey struct {
	namespace, name string
	addresses       string
	hostname        string
}

func keyOf(ep *discoveryv1.Endpoint) endpointKey {
	addrs := slices.Clone(ep.Addresses)
	slices.Sort(addrs)
	k := endpointKey{addresses: strings.Join(addrs, ",")}
	if ep.Hostname != nil {
		k.hostname = *ep.Hostname
	}
	if ep.TargetRef != nil {
		k.namespace, k.name = ep.TargetRef.Namespace, ep.TargetRef.Name
	}
	return k
}

func compareKeys(a, b endpointKey) int {
	return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name),
		cmp.Compare(a.addresses, b.addresses), cmp.Compare(a.hostname, b.hostname))
}

// endpointSet is a set of desired endpoints by key.
type endpointSet map[endpointKey]*discoveryv1.Endpoint

// sorted returns the endpoints in key order, so slices are filled the same
// way every time.
func (s endpointSet) sorted() []*discoveryv1.Endpoint {
	keys := make([]endpointKey, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	out := make([]*discoveryv1.Endpoint, len(keys))
	for i, k := range keys {
		out[i] = s[k]
	}
	return out
}

// endpointsEqualBeyondKey compares what endpointKey leaves out; the
// target's resourceVersion is ignored.
func endpointsEqualBeyondKey(a, b *discoveryv1.Endpoint) bool {
	if !equalPtr(a.NodeName, b.NodeName) || !equalPtr(a.Zone, b.Zone) ||
		!equalPtr(a.Conditions.Ready, b.Conditions.Ready) || !equalPtr(a.Conditions.Serving, b.Conditions.Serving) ||
		!equalPtr(a.Conditions.Terminating, b.Conditions.Terminating) {
		return false
	}
	if (a.TargetRef == nil) != (b.TargetRef == nil) {
		return false
	}
	if a.TargetRef != nil {
		ra, rb := *a.TargetRef, *b.TargetRef
		ra.ResourceVersion, rb.ResourceVersion = "", ""
		if ra != rb {
			return false
		}
	}
	return true
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// newEndpointSlice is an empty slice of svc for meta's ports and address
// type.
func newEndpointSlice(logger klog.Logger, svc *corev1.Service, meta *endpointMeta) *discoveryv1.EndpointSlice {
	ref := metav1.NewControllerRef(svc, corev1.SchemeGroupVersion.WithKind("Service"))
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Labels:          map[string]string{},
			GenerateName:    slicePrefix(svc.Name),
			OwnerReferences: []metav1.OwnerReference{*ref},
			Namespace:       svc.Namespace,
		},
		Ports:       meta.ports,
		AddressType: meta.addressType,
		Endpoints:   []discoveryv1.Endpoint{},
	}
	slice.Labels, _ = sliceLabels(logger, slice, svc)
	return slice
}

// slicePrefix is "<svc>-", or the name alone when the dash would make the
// prefix invalid.
func slicePrefix(name string) string {
	prefix := name + "-"
	if len(apimachineryvalidation.NameIsDNSSubdomain(prefix, true)) != 0 {
		prefix = name
	}
	return prefix
}

// ownedBy reports whether slice's ownerReferences name svc (by UID).
func ownedBy(slice *discoveryv1.EndpointSlice, svc *corev1.Service) bool {
	for _, o := range slice.OwnerReferences {
		if o.UID == svc.UID && o.Kind == "Service" && o.APIVersion == "v1" {
			return true
		}
	}
	return false
}

// sliceLabels returns the labels slice should have (the Service's, except
// the reserved keys, plus service-name, managed-by and, for a headless
// Service, service.kubernetes.io/headless) and whether the copied Service
// labels differ from the slice's.
func sliceLabels(logger klog.Logger, slice *discoveryv1.EndpointSlice, svc *corev1.Service) (map[string]string, bool) {
	have := map[string]string{}
	for k, v := range slice.Labels {
		if !isReservedLabel(k) {
			have[k] = v
		}
	}
	want := map[string]string{}
	for k, v := range svc.Labels {
		if isReservedLabel(k) {
			logger.Info("Service using reserved endpoint slices label", "service", klog.KObj(svc), "skipping", k, "label", v)
			continue
		}
		want[k] = v
	}
	changed := !maps.Equal(have, want)
	if !isServiceIPSet(svc) {
		want[corev1.IsHeadlessService] = ""
	}
	want[discoveryv1.LabelServiceName] = svc.Name
	want[discoveryv1.LabelManagedBy] = ManagedBy
	return want, changed
}

func isReservedLabel(k string) bool {
	return k == discoveryv1.LabelServiceName || k == discoveryv1.LabelManagedBy || k == corev1.IsHeadlessService
}

// isServiceIPSet reports whether svc has a cluster IP (is not headless).
func isServiceIPSet(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP != corev1.ClusterIPNone && svc.Spec.ClusterIP != ""
}

// addressTypesForService are the slice address types svc gets: one per
// entry of spec.ipFamilies; without them (an API server that does not set
// them), the family of the cluster IP, or both for a headless Service.
func addressTypesForService(logger klog.Logger, svc *corev1.Service) sets.Set[discoveryv1.AddressType] {
	types := sets.New[discoveryv1.AddressType]()
	for _, f := range svc.Spec.IPFamilies {
		switch f {
		case corev1.IPv4Protocol:
			types.Insert(discoveryv1.AddressTypeIPv4)
		case corev1.IPv6Protocol:
			types.Insert(discoveryv1.AddressTypeIPv6)
		}
	}
	if types.Len() > 0 {
		return types
	}
	if isServiceIPSet(svc) {
		t := discoveryv1.AddressTypeIPv4
		if isIPv6(svc.Spec.ClusterIP) {
			t = discoveryv1.AddressTypeIPv6
		}
		logger.V(2).Info("Service has no ipFamilies; using the family of its cluster IP", "service", klog.KObj(svc), "addressType", t)
		return types.Insert(t)
	}
	logger.V(2).Info("Headless Service has no ipFamilies; using both families", "service", klog.KObj(svc))
	return types.Insert(discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6)
}

// sliceToFill returns the slice that comes closest to full when n
// endpoints are added, or nil when none has room.
func sliceToFill(candidates []*discoveryv1.EndpointSlice, n, maxEndpoints int) *discoveryv1.EndpointSlice {
	closestDiff := maxEndpoints
	var closest *discoveryv1.EndpointSlice
	for _, s := range candidates {
		diff := maxEndpoints - (n + len(s.Endpoints))
		if diff >= 0 && diff < closestDiff {
			closestDiff, closest = diff, s
			if diff == 0 {
				break
			}
		}
	}
	return closest
}

// ServiceKeyForSlice is the work-queue key of the Service a slice belongs
// to, from its kubernetes.io/service-name label.
func ServiceKeyForSlice(slice *discoveryv1.EndpointSlice) (string, error) {
	if slice == nil {
		return "", errors.New("nil EndpointSlice")
	}
	name := slice.Labels[discoveryv1.LabelServiceName]
	if name == "" {
		return "", fmt.Errorf("EndpointSlice %s/%s has no %s label", slice.Namespace, slice.Name, discoveryv1.LabelServiceName)
	}
	return slice.Namespace + "/" + name, nil
}
