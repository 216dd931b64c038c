package servicemap

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestServicePorts(t *testing.T) {
	base := func(mods ...func(*corev1.Service)) *corev1.Service {
		s := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
				Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}},
		}
		for _, m := range mods {
			m(s)
		}
		return s
	}
	tests := []struct {
		name      string
		svc       *corev1.Service
		wantPorts int
		wantErr   string
	}{
		{name: "clusterIP", svc: base(), wantPorts: 1},
		{name: "service-proxy-name, any value", svc: base(func(s *corev1.Service) { s.Labels = map[string]string{LabelServiceProxyName: ""} })},
		{name: "headless label", svc: base(func(s *corev1.Service) { s.Labels = map[string]string{LabelHeadless: ""} })},
		{name: "clusterIP None", svc: base(func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, nil })},
		{name: "ExternalName", svc: base(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeExternalName })},
		{name: "dual-stack: the IPv4 address is used", svc: base(func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "fd00::10", []string{"fd00::10", "10.96.0.10"}
		}), wantPorts: 1},
		{name: "IPv6 only", svc: base(func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "fd00::10", nil }), wantErr: "not an IPv4 address"},
		{name: "unknown protocol", svc: base(func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "ICMP" }), wantErr: `protocol "ICMP"`},
		{name: "port out of range", svc: base(func(s *corev1.Service) { s.Spec.Ports[0].Port = 70000 }), wantErr: "out of range"},
		{name: "nodePort out of range", svc: base(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = -1
		}), wantErr: "nodePort -1"},
		{name: "bad external IP", svc: base(func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"x"} }), wantErr: "externalIPs"},
		{name: "bad affinity timeout", svc: base(func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](0)}}
		}), wantErr: "timeoutSeconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ports, err := ServicePorts(tt.svc)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(ports) != tt.wantPorts {
				t.Fatalf("ServicePorts = %d ports, %v; want %d", len(ports), err, tt.wantPorts)
			}
		})
	}
}

func TestEndpointsMergeAndSkip(t *testing.T) {
	mk := func(name string, family discoveryv1.AddressType, port int32, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: "s"}},
			AddressType: family, Endpoints: eps,
			Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}
	}
	ready := func(ip string, r bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(r)}}
	}
	m, errs := Endpoints([]*discoveryv1.EndpointSlice{
		mk("a", discoveryv1.AddressTypeIPv4, 8080, ready("10.244.0.10", false), ready("10.244.0.9", true)),
		mk("b", discoveryv1.AddressTypeIPv4, 8080, ready("10.244.0.10", true)),
		mk("c", discoveryv1.AddressTypeIPv6, 8080, ready("fd00::1", true)),
		mk("d", discoveryv1.AddressTypeIPv4, 0, ready("10.244.0.11", true)),
	})
	if len(errs) != 2 || errs[0].Slice.Name != "c" || errs[1].Slice.Name != "d" {
		t.Fatalf("errors %v; want slices c (IPv6) and d (port 0)", errs)
	}
	var got []string
	for name, list := range m {
		if name.Name != "s" || name.Port != "http" {
			t.Fatalf("unexpected port %v", name)
		}
		for _, e := range list {
			got = append(got, e.String()+map[bool]string{true: " ready", false: " not ready"}[e.Ready])
		}
	}
	want := "10.244.0.9:8080 ready,10.244.0.10:8080 ready"
	if strings.Join(got, ",") != want {
		t.Fatalf("endpoints %q, want %q (sorted by address, a duplicate counted once and ready)", strings.Join(got, ","), want)
	}
}

func TestCategorize(t *testing.T) {
	e := func(ip, node string, ready, serving, terminating bool) *Endpoint {
		// "a" is 10.0.0.1, "b" 10.0.0.2: real addresses, sorted as such.
		return &Endpoint{IP: fmt.Sprintf("10.0.0.%d", ip[0]-'a'+1), Port: 80, NodeName: node, Ready: ready, Serving: serving, Terminating: terminating}
	}
	ips := func(eps []*Endpoint) string {
		var s []string
		for _, e := range eps {
			s = append(s, string(rune('a'+e.IP[len(e.IP)-1]-'1')))
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		name                string
		port                ServicePort
		eps                 []*Endpoint
		cluster, local, all string
		hasAny              bool
	}{
		{name: "ready endpoints, cluster policy", eps: []*Endpoint{e("a", "n1", true, true, false), e("b", "n2", false, false, false)},
			cluster: "a", all: "a", hasAny: true},
		{name: "none ready: serving and terminating ones", eps: []*Endpoint{e("a", "n1", false, true, true), e("b", "n2", false, false, true)},
			cluster: "a", all: "a", hasAny: true},
		{name: "none usable", eps: []*Endpoint{e("a", "n1", false, false, true)}},
		{name: "internal Local", port: ServicePort{InternalPolicyLocal: true},
			eps:   []*Endpoint{e("a", "me", true, true, false), e("b", "n2", true, true, false)},
			local: "a", all: "a", hasAny: true},
		{name: "internal Local, none here", port: ServicePort{InternalPolicyLocal: true},
			eps: []*Endpoint{e("b", "n2", true, true, false)}, hasAny: true},
		{name: "external Local with a NodePort: both sets", port: ServicePort{NodePort: 30000, ExternalPolicyLocal: true},
			eps:     []*Endpoint{e("a", "me", true, true, false), e("b", "n2", true, true, false)},
			cluster: "a,b", local: "a", all: "a,b", hasAny: true},
		{name: "external Local, only a terminating one here", port: ServicePort{NodePort: 30000, ExternalPolicyLocal: true},
			eps:     []*Endpoint{e("a", "me", false, true, true), e("b", "n2", true, true, false)},
			cluster: "b", local: "a", all: "a,b", hasAny: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, l, a, any := Categorize(tt.eps, &tt.port, "me")
			if ips(c) != tt.cluster || ips(l) != tt.local || ips(a) != tt.all || any != tt.hasAny {
				t.Fatalf("cluster %q local %q all %q hasAny %v; want %q %q %q %v", ips(c), ips(l), ips(a), any, tt.cluster, tt.local, tt.all, tt.hasAny)
			}
		})
	}
}
