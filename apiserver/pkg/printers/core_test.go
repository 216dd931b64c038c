package printers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestPrintNode(t *testing.T) {
	created := ago(400 * 24 * time.Hour)
	info := corev1.NodeSystemInfo{
		KubeletVersion:          "v1.32.4",
		OSImage:                 "Debian GNU/Linux 12 (bookworm)",
		KernelVersion:           "6.1.0-18-amd64",
		ContainerRuntimeVersion: "containerd://1.7.22",
	}
	tests := []struct {
		name string
		node *corev1.Node
		want []interface{}
	}{
		{
			name: "ready control plane with both role label styles",
			node: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "cp-1", CreationTimestamp: created, Labels: map[string]string{
					"node-role.kubernetes.io/control-plane": "",
					"node-role.kubernetes.io/etcd":          "true",
					"kubernetes.io/role":                    "master",
					"node-role.kubernetes.io/":              "",
					"kubernetes.io/hostname":                "cp-1",
				}},
				Status: corev1.NodeStatus{
					Conditions: []corev1.NodeCondition{
						{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
						{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
					},
					Addresses: []corev1.NodeAddress{
						{Type: corev1.NodeHostName, Address: "cp-1"},
						{Type: corev1.NodeInternalIP, Address: "192.168.1.10"},
						{Type: corev1.NodeInternalIP, Address: "fd00::10"},
						{Type: corev1.NodeExternalIP, Address: "203.0.113.10"},
					},
					NodeInfo: info,
				},
			},
			want: []interface{}{"cp-1", "Ready", "control-plane,etcd,master", "400d", "v1.32.4",
				"192.168.1.10", "203.0.113.10", "Debian GNU/Linux 12 (bookworm)", "6.1.0-18-amd64", "containerd://1.7.22"},
		},
		{
			name: "not ready and cordoned",
			node: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "worker-1", CreationTimestamp: ago(3 * time.Hour)},
				Spec:       corev1.NodeSpec{Unschedulable: true},
				Status: corev1.NodeStatus{
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}},
					NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.32.0"},
				},
			},
			want: []interface{}{"worker-1", "NotReady,SchedulingDisabled", "<none>", "3h", "v1.32.0",
				"<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		},
		{
			name: "ready condition unknown",
			node: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "worker-2", CreationTimestamp: ago(3 * time.Hour)},
				Status: corev1.NodeStatus{
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}},
				},
			},
			want: []interface{}{"worker-2", "NotReady", "<none>", "3h", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		},
		{
			name: "no ready condition yet, cordoned",
			node: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "fresh", CreationTimestamp: ago(5 * time.Second),
					Labels: map[string]string{"node-role.kubernetes.io/worker": ""}},
				Spec: corev1.NodeSpec{Unschedulable: true},
			},
			want: []interface{}{"fresh", "Unknown,SchedulingDisabled", "worker", "5s", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		},
		{
			name: "last ready condition wins",
			node: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "dup", CreationTimestamp: ago(time.Minute)},
				Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionFalse},
					{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
				}},
			},
			want: []interface{}{"dup", "Ready", "<none>", "60s", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		},
	}
	p := newTestPrinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCells(t, cells(t, p, tt.node), tt.want)
		})
	}
}

func TestPrintComponentStatus(t *testing.T) {
	cs := func(conditions ...corev1.ComponentCondition) *corev1.ComponentStatus {
		return &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "scheduler"}, Conditions: conditions}
	}
	tests := []struct {
		name string
		cs   *corev1.ComponentStatus
		want []interface{}
	}{
		{"healthy", cs(corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}),
			[]interface{}{"scheduler", "Healthy", "ok", ""}},
		{"unhealthy, the reason in the message", cs(corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Message: "HTTP probe failed with statuscode: 500"}),
			[]interface{}{"scheduler", "Unhealthy", "HTTP probe failed with statuscode: 500", ""}},
		{"unknown is unhealthy, with the error", cs(corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionUnknown, Error: "timeout"}),
			[]interface{}{"scheduler", "Unhealthy", "", "timeout"}},
		{"no Healthy condition", cs(), []interface{}{"scheduler", "Unknown", "", ""}},
	}
	p := newTestPrinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCells(t, cells(t, p, tt.cs), tt.want)
		})
	}
}

func TestPrintService(t *testing.T) {
	created := ago(26 * time.Hour)
	tests := []struct {
		name string
		svc  *corev1.Service
		want []interface{}
	}{
		{
			name: "cluster IP with ports and selector",
			svc: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: created},
				Spec: corev1.ServiceSpec{
					Type:       corev1.ServiceTypeClusterIP,
					ClusterIP:  "10.96.0.20",
					ClusterIPs: []string{"10.96.0.20", "fd00:10:96::20"},
					Ports: []corev1.ServicePort{
						{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP},
						{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
					},
					Selector: map[string]string{"app": "web", "tier": "front"},
				},
			},
			want: []interface{}{"web", "ClusterIP", "10.96.0.20", "<none>", "80/TCP,53/UDP", "26h", "app=web,tier=front"},
		},
		{
			name: "cluster IP set without clusterIPs",
			svc: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "legacy", CreationTimestamp: created},
				Spec: corev1.ServiceSpec{
					Type:      corev1.ServiceTypeClusterIP,
					ClusterIP: "10.96.0.21",
					Ports:     []corev1.ServicePort{{Port: 8080, Protocol: corev1.ProtocolTCP}},
				},
			},
			want: []interface{}{"legacy", "ClusterIP", "10.96.0.21", "<none>", "8080/TCP", "26h", "<none>"},
		},
		{
			name: "headless",
			svc: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "db", CreationTimestamp: created},
				Spec: corev1.ServiceSpec{
					Type:       corev1.ServiceTypeClusterIP,
					ClusterIP:  corev1.ClusterIPNone,
					ClusterIPs: []string{corev1.ClusterIPNone},
					Ports:      []corev1.ServicePort{{Port: 5432, Protocol: corev1.ProtocolTCP}},
					Selector:   map[string]string{"app": "db"},
				},
			},
			want: []interface{}{"db", "ClusterIP", "None", "<none>", "5432/TCP", "26h", "app=db"},
		},
		{
			name: "cluster IP with external IPs",
			svc: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "ext", CreationTimestamp: created},
				Spec: corev1.ServiceSpec{
					Type:        corev1.ServiceTypeClusterIP,
					ClusterIPs:  []string{"10.96.0.22"},
					ExternalIPs: []string{"198.51.100.1", "198.51.100.2"},
					Ports:       []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}},
				},
			},
			want: []interface{}{"ext", "ClusterIP", "10.96.0.22", "198.51.100.1,198.51.100.2", "80/TCP", "26h", "<none>"},
		},
		{
			name: "node port",
			svc: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "np", CreationTimestamp: created},
				Spec: corev1.ServiceSpec{
					Type:       corev1.ServiceTypeNodePort,
					ClusterIPs: []string{"10.96.0.23"},
					Ports: []corev1.ServicePort{
						{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
						{Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP},
					},
					Selector: map[string]string{"app": "np"},
				},
			},
			want: []interface{}{"np", "NodePort", "10.96.0.23", "<none>", "80:30080/TCP,443:30443/TCP", "26h", "app=np"},
		},
		{
			name: "load balancer pending",
			svc: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "lb", CreationTimestamp: created},
				Spec: corev1.ServiceSpec{
					Type:       corev1.ServiceTypeLoadBalancer,
					ClusterIPs: []string{"10.96.0.24"},
					Ports:      []corev1.ServicePort{{Port: 443, NodePort: 31443, Protocol: corev1.ProtocolTCP}},
				},
			},
			want: []interface{}{"lb", "LoadBalancer", "10.96.0.24", "<pending>", "443:31443/TCP", "26h", "<none>"},
		},
		{
			name: "load balancer with ingress, sorted and unclipped",
			svc: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "lb2", CreationTimestamp: created},
				Spec: corev1.ServiceSpec{
					Type:       corev1.ServiceTypeLoadBalancer,
					ClusterIPs: []string{"10.96.0.25"},
					Ports:      []corev1.ServicePort{{Port: 80, NodePort: 30000, Protocol: corev1.ProtocolTCP}},
				},
				Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
					{IP: "203.0.113.9"},
					{Hostname: "lb.example.com"},
					{IP: "203.0.113.10", Hostname: "ignored.example.com"},
					{IP: "203.0.113.9"},
				}}},
			},
			want: []interface{}{"lb2", "LoadBalancer", "10.96.0.25", "203.0.113.10,203.0.113.9,lb.example.com", "80:30000/TCP", "26h", "<none>"},
		},
		{
			name: "load balancer with ingress and external IPs",
			svc: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "lb3", CreationTimestamp: created},
				Spec: corev1.ServiceSpec{
					Type:        corev1.ServiceTypeLoadBalancer,
					ClusterIPs:  []string{"10.96.0.26"},
					ExternalIPs: []string{"198.51.100.7"},
					Ports:       []corev1.ServicePort{{Port: 80, NodePort: 30001, Protocol: corev1.ProtocolTCP}},
				},
				Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.1"}}}},
			},
			want: []interface{}{"lb3", "LoadBalancer", "10.96.0.26", "203.0.113.1,198.51.100.7", "80:30001/TCP", "26h", "<none>"},
		},
		{
			name: "load balancer pending with external IPs",
			svc: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "lb4", CreationTimestamp: created},
				Spec: corev1.ServiceSpec{
					Type:        corev1.ServiceTypeLoadBalancer,
					ClusterIPs:  []string{"10.96.0.27"},
					ExternalIPs: []string{"198.51.100.8"},
				},
			},
			want: []interface{}{"lb4", "LoadBalancer", "10.96.0.27", "198.51.100.8", "<none>", "26h", "<none>"},
		},
		{
			name: "external name",
			svc: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "alias", CreationTimestamp: created},
				Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"},
			},
			want: []interface{}{"alias", "ExternalName", "<none>", "db.example.com", "<none>", "26h", "<none>"},
		},
		{
			name: "no type",
			svc: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "typeless", CreationTimestamp: created},
			},
			want: []interface{}{"typeless", "", "<none>", "<unknown>", "<none>", "26h", "<none>"},
		},
	}
	p := newTestPrinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCells(t, cells(t, p, tt.svc), tt.want)
		})
	}
}

func TestPrintEvent(t *testing.T) {
	tests := []struct {
		name  string
		event *corev1.Event
		want  []interface{}
	}{
		{
			name: "core event with count and source",
			event: &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: "web-1.17b", Namespace: "default"},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-1", FieldPath: "spec.containers{app}"},
				Reason:         "BackOff",
				Message:        "  Back-off restarting failed container\n",
				Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
				FirstTimestamp: ago(10 * time.Minute),
				LastTimestamp:  ago(time.Minute),
				Count:          3,
				Type:           corev1.EventTypeWarning,
			},
			want: []interface{}{"60s", "Warning", "BackOff", "pod/web-1", "spec.containers{app}", "kubelet, node-1",
				"Back-off restarting failed container", "10m", int64(3), "web-1.17b"},
		},
		{
			name: "new-style event without timestamps or count",
			event: &corev1.Event{
				ObjectMeta:          metav1.ObjectMeta{Name: "sched.1"},
				InvolvedObject:      corev1.ObjectReference{Kind: "Pod", Name: "web-2"},
				Reason:              "Scheduled",
				Message:             "Successfully assigned default/web-2 to node-2",
				EventTime:           metav1.NewMicroTime(now.Add(-30 * time.Second)),
				ReportingController: "default-scheduler",
				Type:                corev1.EventTypeNormal,
			},
			want: []interface{}{"30s", "Normal", "Scheduled", "pod/web-2", "", "default-scheduler",
				"Successfully assigned default/web-2 to node-2", "30s", int64(1), "sched.1"},
		},
		{
			name: "series overrides last seen and count",
			event: &corev1.Event{
				ObjectMeta:          metav1.ObjectMeta{Name: "probe.2"},
				InvolvedObject:      corev1.ObjectReference{Kind: "Pod", Name: "web-3"},
				Reason:              "Unhealthy",
				Message:             "Readiness probe failed",
				EventTime:           metav1.NewMicroTime(now.Add(-20 * time.Minute)),
				Series:              &corev1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(now.Add(-5 * time.Second))},
				ReportingController: "kubelet",
				ReportingInstance:   "node-3",
				Source:              corev1.EventSource{Component: "kubelet-override"},
				Type:                corev1.EventTypeWarning,
			},
			want: []interface{}{"5s", "Warning", "Unhealthy", "pod/web-3", "", "kubelet-override, node-3",
				"Readiness probe failed", "20m", int64(7), "probe.2"},
		},
		{
			name: "object without a name and no times",
			event: &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: "node.3"},
				InvolvedObject: corev1.ObjectReference{Kind: "Node"},
				Reason:         "Starting",
				Count:          2,
			},
			want: []interface{}{"<unknown>", "", "Starting", "node", "", "", "", "<unknown>", int64(2), "node.3"},
		},
	}
	p := newTestPrinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCells(t, cells(t, p, tt.event), tt.want)
		})
	}
}

func TestPrintSmallCoreKinds(t *testing.T) {
	created := ago(45 * time.Minute)
	tests := []struct {
		name string
		obj  runtime.Object
		want []interface{}
	}{
		{
			name: "namespace",
			obj:  &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod", CreationTimestamp: created}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
			want: []interface{}{"prod", "Active", "45m"},
		},
		{
			name: "terminating namespace",
			obj:  &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "old", CreationTimestamp: created}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
			want: []interface{}{"old", "Terminating", "45m"},
		},
		{
			name: "configmap counts data and binary data",
			obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", CreationTimestamp: created},
				Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": {0}}},
			want: []interface{}{"cfg", int64(3), "45m"},
		},
		{
			name: "secret counts data and string data keys once",
			obj: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", CreationTimestamp: created},
				Type:       corev1.SecretTypeOpaque,
				Data:       map[string][]byte{"user": []byte("u"), "pass": []byte("p")},
				StringData: map[string]string{"pass": "q", "token": "t"}},
			want: []interface{}{"creds", "Opaque", int64(3), "45m"},
		},
		{
			name: "tls secret",
			obj: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", CreationTimestamp: created},
				Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}},
			want: []interface{}{"tls", "kubernetes.io/tls", int64(2), "45m"},
		},
		{
			name: "service account",
			obj: &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", CreationTimestamp: created},
				Secrets: []corev1.ObjectReference{{Name: "default-token"}}},
			want: []interface{}{"default", int64(1), "45m"},
		},
		{
			name: "endpoints without subsets",
			obj:  &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "empty", CreationTimestamp: created}},
			want: []interface{}{"empty", "<none>", "45m"},
		},
		{
			name: "endpoints with ports, truncated",
			obj: &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: created},
				Subsets: []corev1.EndpointSubset{{
					Addresses: []corev1.EndpointAddress{{IP: "10.1.0.1"}, {IP: "10.1.0.2"}},
					Ports:     []corev1.EndpointPort{{Name: "http", Port: 80}, {Name: "https", Port: 443}},
				}}},
			want: []interface{}{"web", "10.1.0.1:80,10.1.0.2:80,10.1.0.1:443 + 1 more...", "45m"},
		},
		{
			name: "endpoints with IPv6 and a headless subset",
			obj: &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "mixed", CreationTimestamp: created},
				Subsets: []corev1.EndpointSubset{
					{Addresses: []corev1.EndpointAddress{{IP: "fd00::1"}}, Ports: []corev1.EndpointPort{{Port: 8080}}},
					{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.7"}}},
				}},
			want: []interface{}{"mixed", "[fd00::1]:8080,10.1.0.7", "45m"},
		},
		{
			name: "endpoints with subsets but no addresses",
			obj: &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "notready", CreationTimestamp: created},
				Subsets: []corev1.EndpointSubset{{
					NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.1.0.9"}},
					Ports:             []corev1.EndpointPort{{Port: 80}},
				}}},
			want: []interface{}{"notready", "", "45m"},
		},
	}
	p := newTestPrinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCells(t, cells(t, p, tt.obj), tt.want)
		})
	}
}
