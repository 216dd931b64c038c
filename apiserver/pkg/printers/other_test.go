package printers

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestPrintWorkloads(t *testing.T) {
	created := ago(7 * 24 * time.Hour)
	template := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "app", Image: "registry.example/app:1.2"},
		{Name: "proxy", Image: "envoy:v1.31"},
	}}}
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

	tests := []struct {
		name string
		obj  runtime.Object
		want []interface{}
	}{
		{
			name: "replicaset",
			obj: &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "web-5d4f", CreationTimestamp: created},
				Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Selector: selector, Template: template},
				Status:     appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 2},
			},
			want: []interface{}{"web-5d4f", int64(3), int64(3), int64(2), "7d", "app,proxy", "registry.example/app:1.2,envoy:v1.31", "app=web"},
		},
		{
			name: "replicaset without replicas or selector",
			obj: &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "bare", CreationTimestamp: created},
			},
			want: []interface{}{"bare", int64(0), int64(0), int64(0), "7d", "", "", "<none>"},
		},
		{
			name: "replicaset with a set-based selector",
			obj: &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "expr", CreationTimestamp: created},
				Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{
					MatchLabels:      map[string]string{"app": "web"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}},
				}},
			},
			want: []interface{}{"expr", int64(1), int64(0), int64(0), "7d", "", "", "app=web,tier in (a,b)"},
		},
		{
			name: "deployment",
			obj: &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: created},
				Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: selector, Template: template},
				Status:     appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2},
			},
			want: []interface{}{"web", "2/3", int64(3), int64(2), "7d", "app,proxy", "registry.example/app:1.2,envoy:v1.31", "app=web"},
		},
		{
			name: "deployment without selector",
			obj: &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "nosel", CreationTimestamp: created},
			},
			want: []interface{}{"nosel", "0/0", int64(0), int64(0), "7d", "", "", ""},
		},
		{
			name: "deployment with an empty selector",
			obj: &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "all", CreationTimestamp: created},
				Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{}},
			},
			want: []interface{}{"all", "0/1", int64(0), int64(0), "7d", "", "", ""},
		},
		{
			name: "deployment with an invalid selector",
			obj: &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "bad", CreationTimestamp: created},
				Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}},
				}},
			},
			want: []interface{}{"bad", "0/0", int64(0), int64(0), "7d", "", "", "<invalid>"},
		},
	}
	p := newTestPrinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCells(t, cells(t, p, tt.obj), tt.want)
		})
	}
}

func TestPrintCoordinationDiscoveryRBAC(t *testing.T) {
	created := ago(100 * time.Second)
	port := func(n int32) *int32 { return &n }

	tests := []struct {
		name string
		obj  runtime.Object
		want []interface{}
	}{
		{
			name: "lease with holder",
			obj: &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler", CreationTimestamp: created},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("cp-1_3f2a")},
			},
			want: []interface{}{"kube-scheduler", "cp-1_3f2a", "100s"},
		},
		{
			name: "lease without holder",
			obj:  &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "free", CreationTimestamp: created}},
			want: []interface{}{"free", "", "100s"},
		},
		{
			name: "endpointslice",
			obj: &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Name: "web-abcde", CreationTimestamp: created},
				AddressType: discoveryv1.AddressTypeIPv4,
				Ports: []discoveryv1.EndpointPort{
					{Name: ptr.To("http"), Port: port(80)},
					{Name: ptr.To("metrics")},
				},
				Endpoints: []discoveryv1.Endpoint{
					{Addresses: []string{"10.1.0.1"}},
					{Addresses: []string{"10.1.0.2"}},
				},
			},
			want: []interface{}{"web-abcde", "IPv4", "80,metrics", "10.1.0.1,10.1.0.2", "100s"},
		},
		{
			name: "endpointslice truncated",
			obj: &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Name: "big", CreationTimestamp: created},
				AddressType: discoveryv1.AddressTypeIPv6,
				Ports: []discoveryv1.EndpointPort{
					{Port: port(80)}, {Port: port(443)}, {}, {Port: port(8080)}, {Port: port(9090)},
				},
				Endpoints: []discoveryv1.Endpoint{
					{Addresses: []string{"fd00::1", "fd00::2"}},
					{Addresses: []string{"fd00::3", "fd00::4"}},
				},
			},
			want: []interface{}{"big", "IPv6", "80,443,* + 2 more...", "fd00::1,fd00::2,fd00::3 + 1 more...", "100s"},
		},
		{
			name: "endpointslice without ports or endpoints",
			obj: &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Name: "empty", CreationTimestamp: created},
				AddressType: discoveryv1.AddressTypeFQDN,
			},
			want: []interface{}{"empty", "FQDN", "<unset>", "<unset>", "100s"},
		},
		{
			name: "rolebinding",
			obj: &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "devs-edit", Namespace: "team", CreationTimestamp: created},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
				Subjects: []rbacv1.Subject{
					{Kind: rbacv1.UserKind, Name: "alice"},
					{Kind: rbacv1.UserKind, Name: "bob"},
					{Kind: rbacv1.GroupKind, Name: "devs"},
					{Kind: rbacv1.ServiceAccountKind, Namespace: "team", Name: "ci"},
					{Kind: "Robot", Name: "r2"},
				},
			},
			want: []interface{}{"devs-edit", "ClusterRole/edit", "100s", "alice, bob", "devs", "team/ci"},
		},
		{
			name: "clusterrolebinding without subjects",
			obj: &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "system:basic", CreationTimestamp: created},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:basic-user"},
			},
			want: []interface{}{"system:basic", "ClusterRole/system:basic-user", "100s", "", "", ""},
		},
		{
			name: "clusterrolebinding with groups and service accounts",
			obj: &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:nodes", CreationTimestamp: created},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node"},
				Subjects: []rbacv1.Subject{
					{Kind: rbacv1.GroupKind, Name: "system:nodes"},
					{Kind: rbacv1.GroupKind, Name: "system:bootstrappers"},
					{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "node-controller"},
				},
			},
			want: []interface{}{"kubeadm:nodes", "ClusterRole/system:node", "100s", "", "system:nodes, system:bootstrappers", "kube-system/node-controller"},
		},
	}
	p := newTestPrinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCells(t, cells(t, p, tt.obj), tt.want)
		})
	}
}

func TestListsUseTheirKindsPrinter(t *testing.T) {
	p := newTestPrinter()
	created := ago(2 * time.Minute)
	tests := []struct {
		name  string
		list  runtime.Object
		first []interface{}
	}{
		{
			name:  "namespaces",
			list:  &corev1.NamespaceList{Items: []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: created}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}}},
			first: []interface{}{"a", "Active", "2m"},
		},
		{
			name:  "secrets",
			list:  &corev1.SecretList{Items: []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: "s", CreationTimestamp: created}, Type: corev1.SecretTypeOpaque}}},
			first: []interface{}{"s", "Opaque", int64(0), "2m"},
		},
		{
			name:  "serviceaccounts",
			list:  &corev1.ServiceAccountList{Items: []corev1.ServiceAccount{{ObjectMeta: metav1.ObjectMeta{Name: "sa", CreationTimestamp: created}}}},
			first: []interface{}{"sa", int64(0), "2m"},
		},
		{
			name:  "endpoints",
			list:  &corev1.EndpointsList{Items: []corev1.Endpoints{{ObjectMeta: metav1.ObjectMeta{Name: "e", CreationTimestamp: created}}}},
			first: []interface{}{"e", "<none>", "2m"},
		},
		{
			name: "services",
			list: &corev1.ServiceList{Items: []corev1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "svc", CreationTimestamp: created},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.96.0.1"}, Ports: []corev1.ServicePort{{Port: 443, Protocol: corev1.ProtocolTCP}}}}}},
			first: []interface{}{"svc", "ClusterIP", "10.96.0.1", "<none>", "443/TCP", "2m", "<none>"},
		},
		{
			name:  "nodes",
			list:  &corev1.NodeList{Items: []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n", CreationTimestamp: created}}}},
			first: []interface{}{"n", "Unknown", "<none>", "2m", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		},
		{
			name: "events",
			list: &corev1.EventList{Items: []corev1.Event{{ObjectMeta: metav1.ObjectMeta{Name: "ev"}, LastTimestamp: created, FirstTimestamp: created,
				InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Name: "web"}, Reason: "ScalingReplicaSet", Type: corev1.EventTypeNormal, Count: 1,
				Source: corev1.EventSource{Component: "deployment-controller"}, Message: "Scaled up replica set web-5d4f to 3"}}},
			first: []interface{}{"2m", "Normal", "ScalingReplicaSet", "deployment/web", "", "deployment-controller", "Scaled up replica set web-5d4f to 3", "2m", int64(1), "ev"},
		},
		{
			name:  "replicasets",
			list:  &appsv1.ReplicaSetList{Items: []appsv1.ReplicaSet{{ObjectMeta: metav1.ObjectMeta{Name: "rs", CreationTimestamp: created}, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2)}}}},
			first: []interface{}{"rs", int64(2), int64(0), int64(0), "2m", "", "", "<none>"},
		},
		{
			name:  "deployments",
			list:  &appsv1.DeploymentList{Items: []appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Name: "d", CreationTimestamp: created}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}}}},
			first: []interface{}{"d", "0/2", int64(0), int64(0), "2m", "", "", ""},
		},
		{
			name:  "leases",
			list:  &coordinationv1.LeaseList{Items: []coordinationv1.Lease{{ObjectMeta: metav1.ObjectMeta{Name: "l", CreationTimestamp: created}}}},
			first: []interface{}{"l", "", "2m"},
		},
		{
			name:  "endpointslices",
			list:  &discoveryv1.EndpointSliceList{Items: []discoveryv1.EndpointSlice{{ObjectMeta: metav1.ObjectMeta{Name: "es", CreationTimestamp: created}, AddressType: discoveryv1.AddressTypeIPv4}}},
			first: []interface{}{"es", "IPv4", "<unset>", "<unset>", "2m"},
		},
		{
			name: "rolebindings",
			list: &rbacv1.RoleBindingList{Items: []rbacv1.RoleBinding{{ObjectMeta: metav1.ObjectMeta{Name: "rb", CreationTimestamp: created},
				RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "reader"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "carol"}}}}},
			first: []interface{}{"rb", "Role/reader", "2m", "carol", "", ""},
		},
		{
			name: "clusterrolebindings",
			list: &rbacv1.ClusterRoleBindingList{Items: []rbacv1.ClusterRoleBinding{{ObjectMeta: metav1.ObjectMeta{Name: "crb", CreationTimestamp: created},
				RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}}}},
			first: []interface{}{"crb", "ClusterRole/view", "2m", "", "", ""},
		},
		{
			name:  "roles",
			list:  &rbacv1.RoleList{Items: []rbacv1.Role{{ObjectMeta: metav1.ObjectMeta{Name: "reader", CreationTimestamp: created}}}},
			first: []interface{}{"reader", "2024-03-10T11:58:00Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := p.Table(tt.list, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows = %d, want 1", len(table.Rows))
			}
			if len(table.Rows[0].Cells) != len(table.ColumnDefinitions) {
				t.Errorf("%d cells for %d columns", len(table.Rows[0].Cells), len(table.ColumnDefinitions))
			}
			assertCells(t, table.Rows[0].Cells, tt.first)
		})
	}
}
