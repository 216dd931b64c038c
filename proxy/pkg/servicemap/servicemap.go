package servicemap

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// LabelServiceProxyName marks a Service handled by another proxy; the
	// proxy ignores Services that carry it, whatever its value.
	LabelServiceProxyName = "service.kubernetes.io/service-proxy-name"
	// LabelHeadless marks a headless Service's slices (and Services).
	LabelHeadless = "service.kubernetes.io/headless"
	// AnnotationLastChangeTriggerTime is the time of the change that made
	// the EndpointSlice controller write a slice.
	AnnotationLastChangeTriggerTime = "endpoints.kubernetes.io/last-change-trigger-time"
)

// ServicePortName names one port of one Service, as upstream's
// proxy.ServicePortName does.
type ServicePortName struct {
	types.NamespacedName
	Port     string
	Protocol corev1.Protocol
}

// String is "namespace/name:port" ("namespace/name" for an unnamed port).
func (n ServicePortName) String() string {
	if n.Port == "" {
		return n.NamespacedName.String()
	}
	return n.NamespacedName.String() + ":" + n.Port
}

// ServicePort is one port of a Service, with what the rules need.
type ServicePort struct {
	Name                     ServicePortName
	ClusterIP                net.IP
	Port                     int
	Protocol                 corev1.Protocol
	NodePort                 int
	ExternalIPs              []net.IP
	LoadBalancerVIPs         []net.IP
	LoadBalancerSourceRanges []*net.IPNet
	HealthCheckNodePort      int
	// StickyMaxAgeSeconds > 0 means sessionAffinity ClientIP.
	StickyMaxAgeSeconds int
	ExternalPolicyLocal bool
	InternalPolicyLocal bool
}

// ClientIPAffinity reports whether the port has sessionAffinity ClientIP.
func (p *ServicePort) ClientIPAffinity() bool { return p.StickyMaxAgeSeconds > 0 }

// ExternallyAccessible reports whether the port has any destination that
// externalTrafficPolicy applies to.
func (p *ServicePort) ExternallyAccessible() bool {
	return p.NodePort != 0 || len(p.LoadBalancerVIPs) > 0 || len(p.ExternalIPs) > 0
}

// UsesClusterEndpoints reports whether some traffic to the port is sent to
// endpoints on any node: with internalTrafficPolicy Cluster, or when it
// takes external traffic at all (pods and the node itself reach even an
// externalTrafficPolicy Local port through the cluster-wide chain).
func (p *ServicePort) UsesClusterEndpoints() bool {
	return !p.InternalPolicyLocal || p.ExternallyAccessible()
}

// UsesLocalEndpoints reports whether some traffic to the port is sent only
// to endpoints on this node.
func (p *ServicePort) UsesLocalEndpoints() bool {
	return p.InternalPolicyLocal || (p.ExternallyAccessible() && p.ExternalPolicyLocal)
}

// Hash is upstream's portProtoHash: the first 16 characters of the base32
// of the SHA-256 of the port's name and its lower-case protocol (and, for
// an endpoint chain, the endpoint).
func Hash(portName string, protocol corev1.Protocol, endpoint string) string {
	sum := sha256.Sum256([]byte(portName + strings.ToLower(string(protocol)) + endpoint))
	return base32.StdEncoding.EncodeToString(sum[:])[:16]
}

// Ignored reports why the proxy does not handle svc ("" when it does).
func Ignored(svc *corev1.Service) string {
	switch {
	case hasKey(svc.Labels, LabelServiceProxyName):
		return "it is labelled " + LabelServiceProxyName
	case hasKey(svc.Labels, LabelHeadless):
		return "it is headless (" + LabelHeadless + ")"
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		return "it is an ExternalName Service"
	case svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone:
		return "it has no cluster IP"
	}
	return ""
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// ServicePorts converts a Service to its ports. An ignored Service has
// none and no error; a Service that cannot be programmed has none and an
// error saying why.
func ServicePorts(svc *corev1.Service) ([]*ServicePort, error) {
	if Ignored(svc) != "" {
		return nil, nil
	}
	clusterIP := ipv4Of(svc.Spec.ClusterIPs, svc.Spec.ClusterIP)
	if clusterIP == nil {
		return nil, fmt.Errorf("cluster IP %q is not an IPv4 address (this proxy programs IPv4 only)", svc.Spec.ClusterIP)
	}
	var externalIPs []net.IP
	for _, s := range svc.Spec.ExternalIPs {
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, fmt.Errorf("externalIPs: %q is not an IP address", s)
		}
		if ip.To4() != nil {
			externalIPs = append(externalIPs, ip.To4())
		}
	}
	var lbIPs []net.IP
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			if ip := net.ParseIP(ing.IP); ip != nil && ip.To4() != nil {
				lbIPs = append(lbIPs, ip.To4())
			}
		}
	}
	var ranges []*net.IPNet
	for _, s := range svc.Spec.LoadBalancerSourceRanges {
		_, cidr, err := net.ParseCIDR(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("loadBalancerSourceRanges: %q is not a CIDR", s)
		}
		if cidr.IP.To4() != nil {
			ranges = append(ranges, cidr)
		}
	}
	sticky := 0
	if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		sticky = int(corev1.DefaultClientIPServiceAffinitySeconds)
		if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
			sticky = int(*c.ClientIP.TimeoutSeconds)
		}
		if sticky <= 0 || sticky > 86400 {
			return nil, fmt.Errorf("sessionAffinityConfig.clientIP.timeoutSeconds %d must be between 1 and 86400", sticky)
		}
	}
	externalLocal := svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal &&
		(svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer || len(svc.Spec.ExternalIPs) > 0)
	internalLocal := svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal
	hcPort := 0
	if externalLocal && svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		hcPort = int(svc.Spec.HealthCheckNodePort)
		if hcPort < 0 || hcPort > 65535 {
			return nil, fmt.Errorf("healthCheckNodePort %d is out of range", hcPort)
		}
	}
	name := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	var out []*ServicePort
	for i, p := range svc.Spec.Ports {
		if err := checkProtocol(p.Protocol); err != nil {
			return nil, fmt.Errorf("ports[%d]: %w", i, err)
		}
		if p.Port < 1 || p.Port > 65535 {
			return nil, fmt.Errorf("ports[%d]: port %d is out of range 1-65535", i, p.Port)
		}
		if p.NodePort < 0 || p.NodePort > 65535 {
			return nil, fmt.Errorf("ports[%d]: nodePort %d is out of range 1-65535", i, p.NodePort)
		}
		nodePort := 0
		if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			nodePort = int(p.NodePort)
		}
		out = append(out, &ServicePort{
			Name:      ServicePortName{NamespacedName: name, Port: p.Name, Protocol: p.Protocol},
			ClusterIP: clusterIP, Port: int(p.Port), Protocol: p.Protocol, NodePort: nodePort,
			ExternalIPs: externalIPs, LoadBalancerVIPs: lbIPs, LoadBalancerSourceRanges: ranges,
			HealthCheckNodePort: hcPort, StickyMaxAgeSeconds: sticky,
			ExternalPolicyLocal: externalLocal, InternalPolicyLocal: internalLocal,
		})
	}
	return out, nil
}

func ipv4Of(ips []string, ip string) net.IP {
	if len(ips) == 0 {
		ips = []string{ip}
	}
	for _, s := range ips {
		if p := net.ParseIP(s); p != nil && p.To4() != nil {
			return p.To4()
		}
	}
	return nil
}

func checkProtocol(p corev1.Protocol) error {
	switch p {
	case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		return nil
	}
	return fmt.Errorf("protocol %q is not TCP, UDP or SCTP", p)
}

// Endpoint is one address and port serving a ServicePort.
type Endpoint struct {
	IP          string
	Port        int
	Ready       bool
	Serving     bool
	Terminating bool
	NodeName    string
	// Pod names the endpoint's pod (its targetRef), when it is one.
	Pod string
}

// String is "ip:port".
func (e *Endpoint) String() string { return net.JoinHostPort(e.IP, strconv.Itoa(e.Port)) }

// EndpointsMap is the endpoints of a Service's ports.
type EndpointsMap map[ServicePortName][]*Endpoint

// SliceError is a slice the proxy could not use, with the reason.
type SliceError struct {
	Slice *discoveryv1.EndpointSlice
	Err   error
}

// Endpoints merges the slices of one Service into its ports' endpoints,
// each port's sorted by address; an address listed twice counts once,
// ready if any listing is. A slice that cannot be used (another address
// family, a port out of range, an address that does not parse) is left
// out and reported.
func Endpoints(slices []*discoveryv1.EndpointSlice) (EndpointsMap, []SliceError) {
	out := EndpointsMap{}
	var errs []SliceError
	for _, s := range slices {
		m, err := sliceEndpoints(s)
		if err != nil {
			errs = append(errs, SliceError{Slice: s, Err: err})
			continue
		}
		for name, eps := range m {
			out[name] = append(out[name], eps...)
		}
	}
	for name, eps := range out {
		sort.SliceStable(eps, func(i, j int) bool { return less(eps[i], eps[j]) })
		dedup := eps[:0]
		for _, e := range eps {
			if n := len(dedup); n > 0 && dedup[n-1].IP == e.IP && dedup[n-1].Port == e.Port {
				prev := dedup[n-1]
				if !prev.Ready && e.Ready {
					dedup[n-1] = e
				}
				continue
			}
			dedup = append(dedup, e)
		}
		out[name] = dedup
	}
	return out, errs
}

func less(a, b *Endpoint) bool {
	if a.IP != b.IP {
		return bytesLess(net.ParseIP(a.IP).To16(), net.ParseIP(b.IP).To16())
	}
	return a.Port < b.Port
}

func bytesLess(a, b net.IP) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func sliceEndpoints(s *discoveryv1.EndpointSlice) (EndpointsMap, error) {
	if s.AddressType != discoveryv1.AddressTypeIPv4 {
		return nil, fmt.Errorf("address type %q: this proxy programs IPv4 only", s.AddressType)
	}
	svc := s.Labels[discoveryv1.LabelServiceName]
	if svc == "" {
		return nil, fmt.Errorf("no %s label", discoveryv1.LabelServiceName)
	}
	nn := types.NamespacedName{Namespace: s.Namespace, Name: svc}
	var eps []Endpoint
	for i, e := range s.Endpoints {
		if len(e.Addresses) == 0 {
			continue
		}
		ip := net.ParseIP(e.Addresses[0])
		if ip == nil || ip.To4() == nil {
			return nil, fmt.Errorf("endpoints[%d]: %q is not an IPv4 address", i, e.Addresses[0])
		}
		ready := e.Conditions.Ready == nil || *e.Conditions.Ready
		serving := ready
		if e.Conditions.Serving != nil {
			serving = *e.Conditions.Serving
		}
		terminating := e.Conditions.Terminating != nil && *e.Conditions.Terminating
		node := ""
		if e.NodeName != nil {
			node = *e.NodeName
		}
		pod := ""
		if e.TargetRef != nil && e.TargetRef.Kind == "Pod" {
			pod = e.TargetRef.Name
		}
		eps = append(eps, Endpoint{IP: ip.To4().String(), Ready: ready, Serving: serving, Terminating: terminating, NodeName: node, Pod: pod})
	}
	out := EndpointsMap{}
	for i, p := range s.Ports {
		if p.Port == nil {
			continue
		}
		proto := corev1.ProtocolTCP
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		if err := checkProtocol(proto); err != nil {
			return nil, fmt.Errorf("ports[%d]: %w", i, err)
		}
		if *p.Port < 1 || *p.Port > 65535 {
			return nil, fmt.Errorf("ports[%d]: port %d is out of range 1-65535", i, *p.Port)
		}
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		spn := ServicePortName{NamespacedName: nn, Port: name, Protocol: proto}
		for _, e := range eps {
			e := e
			e.Port = int(*p.Port)
			out[spn] = append(out[spn], &e)
		}
	}
	return out, nil
}

// Categorize returns the endpoints of p that traffic under the cluster
// policy uses, those that traffic under the local policy uses, all of
// them (the endpoints that need chains), and whether the port has any
// usable endpoint anywhere. Ready endpoints are preferred; when there is
// none, serving and terminating ones are used, as upstream's
// CategorizeEndpoints does (topology hints are not used).
func Categorize(eps []*Endpoint, p *ServicePort, nodeName string) (cluster, local, all []*Endpoint, hasAny bool) {
	isLocal := func(e *Endpoint) bool { return nodeName != "" && e.NodeName == nodeName }
	if p.UsesClusterEndpoints() {
		cluster = filter(eps, func(e *Endpoint) bool { return e.Ready })
		if len(cluster) == 0 {
			cluster = filter(eps, func(e *Endpoint) bool { return e.Serving && e.Terminating })
		}
		hasAny = len(cluster) > 0
	}
	if !p.UsesLocalEndpoints() {
		return cluster, nil, cluster, hasAny
	}
	var localReady, localServingTerminating bool
	for _, e := range eps {
		if e.Ready {
			hasAny = true
			localReady = localReady || isLocal(e)
		} else if e.Serving && e.Terminating {
			hasAny = true
			localServingTerminating = localServingTerminating || isLocal(e)
		}
	}
	switch {
	case localReady:
		local = filter(eps, func(e *Endpoint) bool { return e.Ready && isLocal(e) })
	case localServingTerminating:
		local = filter(eps, func(e *Endpoint) bool { return e.Serving && e.Terminating && isLocal(e) })
	}
	if !p.UsesClusterEndpoints() {
		return nil, local, local, hasAny
	}
	seen := map[*Endpoint]bool{}
	for _, e := range cluster {
		seen[e] = true
	}
	all = append([]*Endpoint(nil), cluster...)
	for _, e := range local {
		if !seen[e] {
			all = append(all, e)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return less(all[i], all[j]) })
	return cluster, local, all, hasAny
}

func filter(eps []*Endpoint, keep func(*Endpoint) bool) []*Endpoint {
	var out []*Endpoint
	for _, e := range eps {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}
