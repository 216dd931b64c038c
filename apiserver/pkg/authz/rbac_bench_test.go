package authz

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/authn"
)

// benchCluster fills an RBAC authorizer with the bootstrap objects plus, when
// large, what a busy cluster holds: aggregated admin/edit/view roles, 200
// ClusterRoleBindings of other users and groups, and 100 namespaces with 5
// RoleBindings each. The namespace "bench" always has the chain bench's
// Role and RoleBinding for bench-writer (test/bench/chain.go).
func benchCluster(large bool) *RBAC {
	r := NewRBAC()
	add := func(obj runtime.Object) { r.Apply(watch.Event{Type: watch.Added, Object: obj}) }
	for _, cr := range BootstrapClusterRoles() {
		add(cr)
	}
	for _, b := range BootstrapClusterRoleBindings() {
		add(b)
	}
	add(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-writer", Namespace: "bench"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"create", "get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}})
	add(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pod-writer", Namespace: "bench"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-writer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bench-writer"}}})
	if !large {
		return r
	}
	for _, name := range []string{"admin", "edit", "view"} {
		add(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
				{MatchLabels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-" + name: "true"}}}}})
	}
	for i := 0; i < 30; i++ {
		add(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("part-%d", i),
			Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-edit": "true", "rbac.authorization.k8s.io/aggregate-to-admin": "true"}},
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "create", "update"}, APIGroups: []string{fmt.Sprintf("g%d.example.com", i)}, Resources: []string{"things"}}}})
	}
	add(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "part-pods",
		Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-edit": "true"}},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"create", "update", "delete"}, APIGroups: []string{""}, Resources: []string{"pods"}}}})
	for i := 0; i < 200; i++ {
		add(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("crb-%d", i)},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: fmt.Sprintf("user-%d", i)},
				{Kind: rbacv1.GroupKind, Name: fmt.Sprintf("group-%d", i)}}})
	}
	for n := 0; n < 100; n++ {
		ns := fmt.Sprintf("ns-%d", n)
		for i := 0; i < 5; i++ {
			add(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rb-%d", i), Namespace: ns},
				RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "edit"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: fmt.Sprintf("team-%d", i)},
					{Kind: rbacv1.ServiceAccountKind, Name: fmt.Sprintf("sa-%d", i)}}})
		}
	}
	return r
}

// BenchmarkRBACAuthorize measures one decision: bench-writer's pod create
// (the chain bench's request), a pod create allowed through an aggregated
// ClusterRole bound to a group in a namespace, and a request nothing
// allows (every binding of the user's groups is looked at).
func BenchmarkRBACAuthorize(b *testing.B) {
	podCreate := func(u *authn.User, ns string) Attributes {
		return Attributes{User: u, ResourceRequest: true, Verb: "create", APIVersion: "v1", Resource: "pods", Namespace: ns}
	}
	writer := &authn.User{Name: "bench-writer", Groups: []string{"system:authenticated"}}
	teamMember := &authn.User{Name: "carol", Groups: []string{"team-3", "system:authenticated"}}
	stranger := &authn.User{Name: "mallory", Groups: []string{"system:authenticated"}}
	cases := []struct {
		name  string
		large bool
		a     Attributes
		want  Decision
	}{
		{"bootstrap/bench-writer", false, podCreate(writer, "bench"), Allow},
		{"bootstrap/denied", false, podCreate(stranger, "bench"), NoOpinion},
		{"large/bench-writer", true, podCreate(writer, "bench"), Allow},
		{"large/aggregated-group", true, podCreate(teamMember, "ns-42"), Allow},
		{"large/denied", true, podCreate(stranger, "ns-42"), NoOpinion},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			r := benchCluster(tc.large)
			ctx := context.Background()
			if d, _, _ := r.Authorize(ctx, tc.a); d != tc.want {
				b.Fatalf("decision %v, want %v", d, tc.want)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.Authorize(ctx, tc.a)
			}
		})
	}
}
