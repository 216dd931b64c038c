package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/apis/defaults"
)

func validService() *corev1.Service {
	return defaulted(defaults.DefaultService, &corev1.Service{
		ObjectMeta: meta("web"),
		Spec: corev1.ServiceSpec{
			Selector:   map[string]string{"app": "web"},
			Ports:      []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
			ClusterIP:  "10.96.0.10",
			ClusterIPs: []string{"10.96.0.10"},
		},
	})
}

func TestValidateServiceCreate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *corev1.Service)
		want   []want
	}{
		{name: "valid", mutate: func(s *corev1.Service) {}},
		{name: "before allocation", mutate: func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil }},
		{name: "name must be a DNS-1035 label", mutate: func(s *corev1.Service) { s.Name = "1web" }, want: []want{inv("metadata.name")}},
		{name: "no ports", mutate: func(s *corev1.Service) { s.Spec.Ports = nil }, want: []want{req("spec.ports")}},
		{name: "headless without ports", mutate: func(s *corev1.Service) {
			s.Spec.Ports = nil
			s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
		}},
		{name: "two unnamed ports", mutate: func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(443)})
		}, want: []want{req("spec.ports[0].name"), req("spec.ports[1].name")}},
		{name: "duplicate port names", mutate: func(s *corev1.Service) {
			s.Spec.Ports[0].Name = "http"
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "http", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(443)})
		}, want: []want{dup("spec.ports[1].name")}},
		{name: "duplicate port", mutate: func(s *corev1.Service) {
			s.Spec.Ports[0].Name = "a"
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "b", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(81)})
		}, want: []want{dup("spec.ports[1]")}},
		{name: "port out of range", mutate: func(s *corev1.Service) { s.Spec.Ports[0].Port = 0 }, want: []want{inv("spec.ports[0].port")}},
		{name: "target port name invalid", mutate: func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("-http-") }, want: []want{inv("spec.ports[0].targetPort")}},
		{name: "protocol unsupported", mutate: func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "HTTP" }, want: []want{nsup("spec.ports[0].protocol")}},
		{name: "node port on ClusterIP", mutate: func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30080 }, want: []want{forb("spec.ports[0].nodePort")}},
		{name: "node port on NodePort", mutate: func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
			s.Spec.Ports[0].NodePort = 30080
		}},
		{name: "type unsupported", mutate: func(s *corev1.Service) { s.Spec.Type = "Magic" }, want: []want{nsup("spec.type")}},
		{name: "selector invalid", mutate: func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "a b"} }, want: []want{inv("spec.selector")}},
		{name: "session affinity unsupported", mutate: func(s *corev1.Service) { s.Spec.SessionAffinity = "Cookie" }, want: []want{nsup("spec.sessionAffinity")}},
		{name: "client ip affinity without config", mutate: func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP },
			want: []want{req("spec.sessionAffinityConfig")}},
		{name: "invalid cluster ip", mutate: func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.300", []string{"10.96.0.300"} },
			want: []want{inv("spec.clusterIPs[0]")}},
		{name: "cluster ip without cluster ips", mutate: func(s *corev1.Service) { s.Spec.ClusterIPs = nil }, want: []want{req("spec.clusterIPs")}},
		{name: "cluster ips mismatch", mutate: func(s *corev1.Service) { s.Spec.ClusterIPs = []string{"10.96.0.11"} }, want: []want{inv("spec.clusterIPs")}},
		{name: "ip family mismatch", mutate: func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} }, want: []want{inv("spec.clusterIPs[0]")}},
		{name: "ip family unsupported", mutate: func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{"IPv5"} }, want: []want{nsup("spec.ipFamilies[0]")}},
		{name: "external ip loopback", mutate: func(s *corev1.Service) {
			s.Spec.ExternalIPs = []string{"127.0.0.1"}
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		}, want: []want{inv("spec.externalIPs[0]")}},
		{name: "external traffic policy on internal service", mutate: func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal },
			want: []want{inv("spec.externalTrafficPolicy")}},
		{name: "external name without name", mutate: func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, SessionAffinity: corev1.ServiceAffinityNone}
		}, want: []want{req("spec.externalName")}},
		{name: "external name with cluster ip", mutate: func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeExternalName
			s.Spec.ExternalName = "db.example.com."
		}, want: []want{forb("spec.clusterIPs")}},
		{name: "load balancer local without health check port", mutate: func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			s.Spec.AllocateLoadBalancerNodePorts = ptr.To(true)
		}, want: []want{req("spec.healthCheckNodePort")}},
		{name: "load balancer without allocate flag", mutate: func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		}, want: []want{req("allocateLoadBalancerNodePorts")}},
		{name: "source ranges on ClusterIP", mutate: func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} },
			want: []want{forb("spec.LoadBalancerSourceRanges")}},
		{name: "internal traffic policy missing", mutate: func(s *corev1.Service) { s.Spec.InternalTrafficPolicy = nil }, want: []want{req("spec.internalTrafficPolicy")}},
		{name: "load balancer class on ClusterIP", mutate: func(s *corev1.Service) { s.Spec.LoadBalancerClass = ptr.To("example.com/lb") },
			want: []want{forb("spec.loadBalancerClass")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validService()
			tc.mutate(s)
			checkErrs(t, ValidateService(s), tc.want)
		})
	}
}

func TestValidateServiceUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *corev1.Service)
		want   []want
	}{
		{name: "change ports", mutate: func(s *corev1.Service) { s.Spec.Ports[0].Port = 81 }},
		{name: "change cluster ip", mutate: func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.11", []string{"10.96.0.11"} },
			want: []want{inv("spec.clusterIPs[0]")}},
		{name: "clear cluster ip", mutate: func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil },
			want: []want{inv("spec.clusterIPs[0]")}},
		{name: "change ip family", mutate: func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} },
			want: []want{inv("spec.ipFamilies[0]"), inv("spec.clusterIPs[0]")}},
		{name: "to external name", mutate: func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com", SessionAffinity: corev1.ServiceAffinityNone}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validService()
			old.ObjectMeta = storedMeta(old.ObjectMeta)
			old.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
			old.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
			s := old.DeepCopy()
			tc.mutate(s)
			checkErrs(t, ValidateServiceUpdate(s, old), tc.want)
		})
	}
}

func TestValidateEndpoints(t *testing.T) {
	valid := func() *corev1.Endpoints {
		return defaulted(defaults.DefaultEndpoints, &corev1.Endpoints{
			ObjectMeta: meta("web"),
			Subsets: []corev1.EndpointSubset{{
				Addresses: []corev1.EndpointAddress{{IP: "10.244.0.5", NodeName: ptr.To("node-1")}},
				Ports:     []corev1.EndpointPort{{Port: 8080}},
			}},
		})
	}
	tests := []struct {
		name   string
		mutate func(e *corev1.Endpoints)
		want   []want
	}{
		{name: "valid", mutate: func(e *corev1.Endpoints) {}},
		{name: "no addresses", mutate: func(e *corev1.Endpoints) { e.Subsets[0].Addresses = nil }, want: []want{req("subsets[0]")}},
		{name: "bad ip", mutate: func(e *corev1.Endpoints) { e.Subsets[0].Addresses[0].IP = "nope" },
			want: []want{inv("subsets[0].addresses[0].ip"), inv("subsets[0].addresses[0].ip")}},
		{name: "loopback ip", mutate: func(e *corev1.Endpoints) { e.Subsets[0].Addresses[0].IP = "127.0.0.1" }, want: []want{inv("subsets[0].addresses[0].ip")}},
		{name: "bad node name", mutate: func(e *corev1.Endpoints) { e.Subsets[0].Addresses[0].NodeName = ptr.To("Node_1") }, want: []want{inv("subsets[0].addresses[0].nodeName")}},
		{name: "two unnamed ports", mutate: func(e *corev1.Endpoints) {
			e.Subsets[0].Ports = append(e.Subsets[0].Ports, corev1.EndpointPort{Port: 9090, Protocol: corev1.ProtocolTCP})
		}, want: []want{req("subsets[0].ports[0].name"), req("subsets[0].ports[1].name")}},
		{name: "port protocol missing", mutate: func(e *corev1.Endpoints) { e.Subsets[0].Ports[0].Protocol = "" }, want: []want{req("subsets[0].ports[0].protocol")}},
		{name: "port out of range", mutate: func(e *corev1.Endpoints) { e.Subsets[0].Ports[0].Port = 0 }, want: []want{inv("subsets[0].ports[0].port")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := valid()
			tc.mutate(e)
			checkErrs(t, ValidateEndpoints(e), tc.want)
		})
	}
	old := valid()
	old.ObjectMeta = storedMeta(old.ObjectMeta)
	renamed := old.DeepCopy()
	renamed.Name = "other"
	checkErrs(t, ValidateEndpointsUpdate(renamed, old), []want{inv("metadata.name")})
}
