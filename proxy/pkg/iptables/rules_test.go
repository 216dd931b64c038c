package iptables

import (
	"bytes"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"skiff.dev/proxy/pkg/servicemap"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const testNode = "node-a"

func testRuleOptions() *RuleOptions {
	_, cidr, _ := net.ParseCIDR("10.244.0.0/16")
	return &RuleOptions{
		NodeName: testNode, NodeIPs: []net.IP{net.ParseIP("192.168.10.2")}, ClusterCIDR: cidr,
		MasqueradeBit: 14, LocalhostNodePorts: true, MasqueradePodEgress: true,
	}
}

// svc builds a Service; mods change it.
func svc(name, clusterIP string, ports []corev1.ServicePort, mods ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP, ClusterIPs: []string{clusterIP}, Ports: ports,
			SessionAffinity: corev1.ServiceAffinityNone,
		},
	}
	for _, m := range mods {
		m(s)
	}
	return s
}

func tcp(name string, port, target int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(target)}
}

func nodePort(np int32) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		s.Spec.Ports[0].NodePort = np
	}
}

// ep is an endpoint: ready unless cond says otherwise.
type ep struct {
	ip, node                    string
	notReady, serving, terminat bool
}

type slicePort struct {
	name  string
	port  int32
	proto corev1.Protocol
}

func slice(svcName, name string, ports []slicePort, eps ...ep) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svcName}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, p := range ports {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(p.name), Port: ptr.To(p.port), Protocol: ptr.To(p.proto)})
	}
	for _, e := range eps {
		c := discoveryv1.EndpointConditions{Ready: ptr.To(!e.notReady)}
		if e.notReady {
			c.Serving, c.Terminating = ptr.To(e.serving), ptr.To(e.terminat)
		}
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.ip}, NodeName: ptr.To(e.node), Conditions: c})
	}
	return s
}

func tcpPort(name string, port int32) []slicePort {
	return []slicePort{{name: name, port: port, proto: corev1.ProtocolTCP}}
}

// snapshotOf converts Services and slices as the proxier does.
func snapshotOf(t *testing.T, svcs []*corev1.Service, slices []*discoveryv1.EndpointSlice) *Snapshot {
	t.Helper()
	snap := &Snapshot{Endpoints: map[servicemap.ServicePortName][]*servicemap.Endpoint{}}
	for _, s := range svcs {
		ports, err := servicemap.ServicePorts(s)
		if err != nil {
			t.Fatalf("service %s: %v", s.Name, err)
		}
		snap.Ports = append(snap.Ports, ports...)
		var mine []*discoveryv1.EndpointSlice
		for _, sl := range slices {
			if sl.Labels[discoveryv1.LabelServiceName] == s.Name {
				mine = append(mine, sl)
			}
		}
		eps, errs := servicemap.Endpoints(mine)
		if len(errs) > 0 {
			t.Fatalf("slices of %s: %v", s.Name, errs[0].Err)
		}
		for _, p := range ports {
			if len(eps[p.Name]) > 0 {
				snap.Endpoints[p.Name] = eps[p.Name]
			}
		}
	}
	return snap
}

type ruleCase struct {
	name   string
	svcs   []*corev1.Service
	slices []*discoveryv1.EndpointSlice
}

func ruleCases() []ruleCase {
	local := func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal }
	internalLocal := func(s *corev1.Service) {
		s.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
	}
	return []ruleCase{
		{name: "clusterip",
			svcs:   []*corev1.Service{svc("web", "10.96.0.10", []corev1.ServicePort{tcp("http", 80, 8080)})},
			slices: []*discoveryv1.EndpointSlice{slice("web", "web-1", tcpPort("http", 8080), ep{ip: "10.244.1.5", node: "node-b"}, ep{ip: "10.244.0.7", node: testNode})}},
		{name: "nodeport",
			svcs:   []*corev1.Service{svc("np", "10.96.0.11", []corev1.ServicePort{tcp("", 80, 8080)}, nodePort(30080))},
			slices: []*discoveryv1.EndpointSlice{slice("np", "np-1", tcpPort("", 8080), ep{ip: "10.244.1.6", node: "node-b"})}},
		{name: "no-endpoints",
			svcs: []*corev1.Service{svc("empty", "10.96.0.12", []corev1.ServicePort{tcp("http", 80, 8080)}, nodePort(30081),
				func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"192.0.2.10"} })}},
		{name: "affinity",
			svcs: []*corev1.Service{svc("sticky", "10.96.0.13", []corev1.ServicePort{tcp("http", 80, 8080)}, func(s *corev1.Service) {
				s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
				s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](600)}}
			})},
			slices: []*discoveryv1.EndpointSlice{slice("sticky", "sticky-1", tcpPort("http", 8080), ep{ip: "10.244.1.8", node: "node-b"}, ep{ip: "10.244.2.9", node: "node-c"})}},
		{name: "external-local",
			svcs: []*corev1.Service{svc("local", "10.96.0.14", []corev1.ServicePort{tcp("http", 80, 8080)}, nodePort(30082), local)},
			slices: []*discoveryv1.EndpointSlice{slice("local", "local-1", tcpPort("http", 8080),
				ep{ip: "10.244.0.20", node: testNode}, ep{ip: "10.244.1.20", node: "node-b"})}},
		{name: "external-local-none-here",
			svcs:   []*corev1.Service{svc("remote", "10.96.0.15", []corev1.ServicePort{tcp("http", 80, 8080)}, nodePort(30083), local)},
			slices: []*discoveryv1.EndpointSlice{slice("remote", "remote-1", tcpPort("http", 8080), ep{ip: "10.244.1.21", node: "node-b"})}},
		{name: "internal-local",
			svcs: []*corev1.Service{
				svc("itp", "10.96.0.16", []corev1.ServicePort{tcp("http", 80, 8080)}, internalLocal),
				svc("itp-none", "10.96.0.17", []corev1.ServicePort{tcp("http", 80, 8080)}, internalLocal),
			},
			slices: []*discoveryv1.EndpointSlice{
				slice("itp", "itp-1", tcpPort("http", 8080), ep{ip: "10.244.0.30", node: testNode}, ep{ip: "10.244.1.30", node: "node-b"}),
				slice("itp-none", "itp-none-1", tcpPort("http", 8080), ep{ip: "10.244.1.31", node: "node-b"}),
			}},
		{name: "named-ports",
			svcs: []*corev1.Service{svc("named", "10.96.0.18", []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromString("web")},
				{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090, TargetPort: intstr.FromString("prom")},
			})},
			slices: []*discoveryv1.EndpointSlice{slice("named", "named-1",
				[]slicePort{{name: "http", port: 8080, proto: corev1.ProtocolTCP}, {name: "metrics", port: 9100, proto: corev1.ProtocolTCP}},
				ep{ip: "10.244.1.40", node: "node-b"})}},
		{name: "terminating-only",
			svcs: []*corev1.Service{svc("term", "10.96.0.19", []corev1.ServicePort{tcp("http", 80, 8080)})},
			slices: []*discoveryv1.EndpointSlice{slice("term", "term-1", tcpPort("http", 8080),
				ep{ip: "10.244.1.50", node: "node-b", notReady: true, serving: true, terminat: true},
				ep{ip: "10.244.1.51", node: "node-b", notReady: true, serving: false, terminat: true})}},
		{name: "multiple-ports",
			svcs: []*corev1.Service{svc("multi", "10.96.0.20", []corev1.ServicePort{tcp("http", 80, 8080), tcp("https", 443, 8443)})},
			slices: []*discoveryv1.EndpointSlice{slice("multi", "multi-1",
				[]slicePort{{name: "http", port: 8080, proto: corev1.ProtocolTCP}, {name: "https", port: 8443, proto: corev1.ProtocolTCP}},
				ep{ip: "10.244.1.60", node: "node-b"}, ep{ip: "10.244.1.61", node: "node-b"}, ep{ip: "10.244.1.62", node: "node-b"})}},
		{name: "udp-sctp",
			svcs: []*corev1.Service{svc("dns", "10.96.0.21", []corev1.ServicePort{
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(5353)},
				{Name: "sig", Protocol: corev1.ProtocolSCTP, Port: 3868, TargetPort: intstr.FromInt32(3868)},
			})},
			slices: []*discoveryv1.EndpointSlice{slice("dns", "dns-1",
				[]slicePort{{name: "dns", port: 5353, proto: corev1.ProtocolUDP}, {name: "sig", port: 3868, proto: corev1.ProtocolSCTP}},
				ep{ip: "10.244.1.70", node: "node-b"})}},
		{name: "external-ips",
			svcs: []*corev1.Service{svc("ext", "10.96.0.22", []corev1.ServicePort{tcp("http", 80, 8080)},
				func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"192.0.2.20", "192.0.2.21"} })},
			slices: []*discoveryv1.EndpointSlice{slice("ext", "ext-1", tcpPort("http", 8080), ep{ip: "10.244.1.80", node: "node-b"})}},
		{name: "loadbalancer-source-ranges",
			svcs: []*corev1.Service{svc("lb", "10.96.0.23", []corev1.ServicePort{tcp("http", 80, 8080)}, nodePort(30084), func(s *corev1.Service) {
				s.Spec.Type = corev1.ServiceTypeLoadBalancer
				s.Spec.LoadBalancerSourceRanges = []string{"203.0.113.0/25", "192.168.10.0/24"}
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.7"}}
			})},
			slices: []*discoveryv1.EndpointSlice{slice("lb", "lb-1", tcpPort("http", 8080), ep{ip: "10.244.1.90", node: "node-b"})}},
		{name: "skipped-service-proxy-name",
			svcs: []*corev1.Service{svc("other", "10.96.0.24", []corev1.ServicePort{tcp("http", 80, 8080)},
				func(s *corev1.Service) { s.Labels = map[string]string{servicemap.LabelServiceProxyName: "other-proxy"} })},
			slices: []*discoveryv1.EndpointSlice{slice("other", "other-1", tcpPort("http", 8080), ep{ip: "10.244.1.99", node: "node-b"})}},
	}
}

// TestWriteGolden pins the rules of each case, byte for byte, to
// testdata/<case>.golden; -update rewrites them.
func TestWriteGolden(t *testing.T) {
	for _, tt := range ruleCases() {
		t.Run(tt.name, func(t *testing.T) {
			res := Write(snapshotOf(t, tt.svcs, tt.slices), testRuleOptions(), Plan{Full: true})
			compareGolden(t, filepath.Join("testdata", tt.name+".golden"), res.Data)
		})
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the golden file (run with -update to write it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("rules differ from %s (run with -update to accept):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := map[string]int{}, map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		w[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		g[l]++
	}
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if g[l] < w[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if w[l] < g[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "(same lines, different order)"
	}
	return b.String()
}

// TestWriteAllGolden pins every case's Services programmed together.
func TestWriteAllGolden(t *testing.T) {
	var svcs []*corev1.Service
	var slices []*discoveryv1.EndpointSlice
	for _, tt := range ruleCases() {
		svcs = append(svcs, tt.svcs...)
		slices = append(slices, tt.slices...)
	}
	res := Write(snapshotOf(t, svcs, slices), testRuleOptions(), Plan{Full: true})
	compareGolden(t, filepath.Join("testdata", "all.golden"), res.Data)
}
