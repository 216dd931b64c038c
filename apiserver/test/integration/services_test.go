package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
)

// allocated reports whether the allocation key of a cluster IP or node port
// is in etcd, and whose it is.
func allocated(t *testing.T, ts *testserver.TestServer, kind, value string) (string, bool) {
	t.Helper()
	resp, err := ts.Server.EtcdClient().Get(context.Background(), "/registry/skiff/allocations/"+kind+"/"+value)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return "", false
	}
	return string(resp.Kvs[0].Value), true
}

func nodePortHeld(t *testing.T, ts *testserver.TestServer, port int32) bool {
	_, ok := allocated(t, ts, "nodeports", fmt.Sprint(port))
	return ok
}

func ipHeld(t *testing.T, ts *testserver.TestServer, ip string) bool {
	_, ok := allocated(t, ts, "serviceips", ip)
	return ok
}

// The Service types as upstream's registry serves them: what each type
// allocates, what a type change releases, and the IP family fields of a
// single-stack IPv4 cluster.
func TestServiceTypes(t *testing.T) {
	ts := start(t, nil)
	svcs := ts.Client.CoreV1().Services("default")
	mk := func(name string, typ corev1.ServiceType, mutate func(*corev1.Service)) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
			Type: typ, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}},
		}}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	create := func(s *corev1.Service) *corev1.Service {
		t.Helper()
		out, err := svcs.Create(ctx(t), s, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", s.Name, err)
		}
		return out
	}

	t.Run("LoadBalancer gets node ports and an empty load balancer status", func(t *testing.T) {
		lb := create(mk("lb", corev1.ServiceTypeLoadBalancer, nil))
		for _, p := range lb.Spec.Ports {
			if p.NodePort < 30000 || p.NodePort > 32767 || !nodePortHeld(t, ts, p.NodePort) {
				t.Errorf("port %s: nodePort %d not allocated", p.Name, p.NodePort)
			}
		}
		if lb.Spec.AllocateLoadBalancerNodePorts == nil || !*lb.Spec.AllocateLoadBalancerNodePorts {
			t.Errorf("allocateLoadBalancerNodePorts = %v, want true", lb.Spec.AllocateLoadBalancerNodePorts)
		}
		if len(lb.Status.LoadBalancer.Ingress) != 0 || lb.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster || lb.Spec.HealthCheckNodePort != 0 {
			t.Errorf("status %+v, externalTrafficPolicy %q, healthCheckNodePort %d", lb.Status.LoadBalancer, lb.Spec.ExternalTrafficPolicy, lb.Spec.HealthCheckNodePort)
		}
		code, body := raw(t, ts, "GET", "/api/v1/namespaces/default/services/lb", "", nil)
		if code != 200 || !strings.Contains(string(body), `"status":{"loadBalancer":{}}`) {
			t.Errorf("GET lb: %d %s", code, body)
		}
	})

	t.Run("allocateLoadBalancerNodePorts false allocates none and keeps those asked for", func(t *testing.T) {
		s := create(mk("lb-noports", corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
			s.Spec.AllocateLoadBalancerNodePorts = ptr.To(false)
			s.Spec.Ports[1].NodePort = 31053
		}))
		if s.Spec.Ports[0].NodePort != 0 || s.Spec.Ports[1].NodePort != 31053 || !nodePortHeld(t, ts, 31053) {
			t.Errorf("ports %+v", s.Spec.Ports)
		}
	})

	t.Run("externalTrafficPolicy Local gets a health check node port, released on delete", func(t *testing.T) {
		s := create(mk("lb-local", corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}))
		hc := s.Spec.HealthCheckNodePort
		if hc < 30000 || hc > 32767 || !nodePortHeld(t, ts, hc) {
			t.Fatalf("healthCheckNodePort %d not allocated", hc)
		}
		// Back to Cluster: the health check port goes.
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		s.Spec.HealthCheckNodePort = 0
		upd, err := svcs.Update(ctx(t), s, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if upd.Spec.HealthCheckNodePort != 0 || nodePortHeld(t, ts, hc) {
			t.Errorf("healthCheckNodePort %d after Cluster; %d still held: %v", upd.Spec.HealthCheckNodePort, hc, nodePortHeld(t, ts, hc))
		}
		ports := nodePortsOf(upd)
		if err := svcs.Delete(ctx(t), "lb-local", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if nodePortHeld(t, ts, p) {
				t.Errorf("node port %d still held after delete", p)
			}
		}
	})

	t.Run("NodePort to ClusterIP releases the node ports", func(t *testing.T) {
		s := create(mk("np", corev1.ServiceTypeNodePort, nil))
		ports := nodePortsOf(s)
		if ports[0] == 0 || ports[1] == 0 {
			t.Fatalf("node ports %v", ports)
		}
		s.Spec.Type = corev1.ServiceTypeClusterIP
		upd, err := svcs.Update(ctx(t), s, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range upd.Spec.Ports {
			if p.NodePort != 0 {
				t.Errorf("port %d kept nodePort %d", i, p.NodePort)
			}
		}
		for _, p := range ports {
			if nodePortHeld(t, ts, p) {
				t.Errorf("node port %d still held", p)
			}
		}
		// Another Service may have it now.
		other := create(mk("np-reuse", corev1.ServiceTypeNodePort, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = ports[0] }))
		if other.Spec.Ports[0].NodePort != ports[0] {
			t.Errorf("reuse: %+v", other.Spec.Ports)
		}
		// Changing a node port releases the old one and takes the new one.
		other.Spec.Ports[0].NodePort = ports[1]
		if _, err := svcs.Update(ctx(t), other, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if nodePortHeld(t, ts, ports[0]) || !nodePortHeld(t, ts, ports[1]) {
			t.Errorf("after changing the node port: %d held %v, %d held %v", ports[0], nodePortHeld(t, ts, ports[0]), ports[1], nodePortHeld(t, ts, ports[1]))
		}
	})

	t.Run("ExternalName has no cluster IP; a type change releases and allocates it", func(t *testing.T) {
		_, err := svcs.Create(ctx(t), mk("ext-ip", corev1.ServiceTypeExternalName, func(s *corev1.Service) {
			s.Spec.ExternalName = "example.com"
			s.Spec.ClusterIP = "10.96.10.10"
		}), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "may not be set for ExternalName services") {
			t.Errorf("ExternalName with a clusterIP: %v", err)
		}
		ext := create(mk("ext", corev1.ServiceTypeExternalName, func(s *corev1.Service) { s.Spec.ExternalName = "example.com" }))
		if ext.Spec.ClusterIP != "" || len(ext.Spec.ClusterIPs) != 0 || ext.Spec.IPFamilyPolicy != nil || len(ext.Spec.IPFamilies) != 0 {
			t.Errorf("ExternalName spec: %+v", ext.Spec)
		}
		c := create(mk("to-ext", corev1.ServiceTypeClusterIP, nil))
		ip := c.Spec.ClusterIP
		c.Spec.Type, c.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
		upd, err := svcs.Update(ctx(t), c, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if upd.Spec.ClusterIP != "" || len(upd.Spec.ClusterIPs) != 0 || upd.Spec.IPFamilyPolicy != nil || ipHeld(t, ts, ip) {
			t.Errorf("ClusterIP to ExternalName: %+v; %s held %v", upd.Spec, ip, ipHeld(t, ts, ip))
		}
		upd.Spec.Type, upd.Spec.ExternalName = corev1.ServiceTypeClusterIP, ""
		back, err := svcs.Update(ctx(t), upd, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if back.Spec.ClusterIP == "" || !ipHeld(t, ts, back.Spec.ClusterIP) || *back.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
			t.Errorf("ExternalName to ClusterIP: %+v", back.Spec)
		}
	})

	t.Run("creating a Service that exists leaves its allocations alone", func(t *testing.T) {
		first := create(mk("twice", corev1.ServiceTypeNodePort, func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.77.77" }))
		_, err := svcs.Create(ctx(t), mk("twice", corev1.ServiceTypeNodePort, func(s *corev1.Service) {
			s.Spec.ClusterIP = "10.96.77.77"
			s.Spec.Ports[0].NodePort = first.Spec.Ports[0].NodePort
		}), metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			t.Fatalf("second create: %v, want 409 AlreadyExists", err)
		}
		if owner, ok := allocated(t, ts, "serviceips", "10.96.77.77"); !ok || owner != "default/twice" {
			t.Errorf("the existing Service's IP: held %v by %q", ok, owner)
		}
		if !nodePortHeld(t, ts, first.Spec.Ports[0].NodePort) {
			t.Errorf("the existing Service's node port %d was released", first.Spec.Ports[0].NodePort)
		}
	})

	t.Run("a dry run shows what would be allocated and keeps nothing", func(t *testing.T) {
		dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		s, err := svcs.Create(ctx(t), mk("dry", corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}), dry)
		if err != nil {
			t.Fatal(err)
		}
		if s.Spec.ClusterIP == "" || s.Spec.HealthCheckNodePort == 0 || s.Spec.Ports[0].NodePort == 0 || s.Spec.Ports[1].NodePort == 0 {
			t.Fatalf("dry run: %+v", s.Spec)
		}
		if ipHeld(t, ts, s.Spec.ClusterIP) || nodePortHeld(t, ts, s.Spec.HealthCheckNodePort) || nodePortHeld(t, ts, s.Spec.Ports[0].NodePort) {
			t.Errorf("a dry run kept an allocation: %+v", s.Spec)
		}
		// What is taken is refused in a dry run too.
		lb, err := svcs.Get(ctx(t), "lb", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = svcs.Create(ctx(t), mk("dry-taken", corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ClusterIP = lb.Spec.ClusterIP }), dry)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided IP is already allocated") {
			t.Errorf("dry run with a taken IP: %v", err)
		}
		// A dry-run update to NodePort shows node ports, keeps none.
		c := create(mk("dry-upd", corev1.ServiceTypeClusterIP, nil))
		c.Spec.Type = corev1.ServiceTypeNodePort
		upd, err := svcs.Update(ctx(t), c, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil || upd.Spec.Ports[0].NodePort == 0 || nodePortHeld(t, ts, upd.Spec.Ports[0].NodePort) {
			t.Errorf("dry-run update: %v %+v", err, upd)
		}
	})

	t.Run("IP families on a single-stack IPv4 cluster", func(t *testing.T) {
		tests := []struct {
			name       string
			mutate     func(*corev1.Service)
			wantPolicy corev1.IPFamilyPolicy
			wantFams   []corev1.IPFamily
			wantErr    string
		}{
			{name: "fam-default", wantPolicy: corev1.IPFamilyPolicySingleStack, wantFams: []corev1.IPFamily{corev1.IPv4Protocol}},
			{name: "fam-prefer", mutate: func(s *corev1.Service) { s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack) },
				wantPolicy: corev1.IPFamilyPolicyPreferDualStack, wantFams: []corev1.IPFamily{corev1.IPv4Protocol}},
			{name: "fam-require", mutate: func(s *corev1.Service) { s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack) },
				wantErr: `spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`},
			{name: "fam-v6", mutate: func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} },
				wantErr: `spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster`},
			{name: "fam-headless-selectorless", mutate: func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.Selector = corev1.ClusterIPNone, nil },
				wantPolicy: corev1.IPFamilyPolicyRequireDualStack, wantFams: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}},
			{name: "fam-headless", mutate: func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone },
				wantPolicy: corev1.IPFamilyPolicySingleStack, wantFams: []corev1.IPFamily{corev1.IPv4Protocol}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got, err := svcs.Create(ctx(t), mk(tc.name, corev1.ServiceTypeClusterIP, tc.mutate), metav1.CreateOptions{})
				if tc.wantErr != "" {
					if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("err = %v, want 422 with %q", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got.Spec.IPFamilyPolicy == nil || *got.Spec.IPFamilyPolicy != tc.wantPolicy || fmt.Sprint(got.Spec.IPFamilies) != fmt.Sprint(tc.wantFams) {
					t.Errorf("policy %v families %v, want %s %v", got.Spec.IPFamilyPolicy, got.Spec.IPFamilies, tc.wantPolicy, tc.wantFams)
				}
				if got.Spec.ClusterIP != corev1.ClusterIPNone && (len(got.Spec.ClusterIPs) != 1 || got.Spec.ClusterIPs[0] != got.Spec.ClusterIP) {
					t.Errorf("clusterIPs %v, clusterIP %s", got.Spec.ClusterIPs, got.Spec.ClusterIP)
				}
			})
		}
	})
}

func nodePortsOf(s *corev1.Service) []int32 {
	var out []int32
	for _, p := range s.Spec.Ports {
		out = append(out, p.NodePort)
	}
	if s.Spec.HealthCheckNodePort != 0 {
		out = append(out, s.Spec.HealthCheckNodePort)
	}
	return out
}
