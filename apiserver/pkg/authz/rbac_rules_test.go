package authz

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/authn"
)

func TestRulesForAndRoleRefRules(t *testing.T) {
	r := NewRBAC()
	apply := func(obj runtime.Object) { r.Apply(watch.Event{Type: watch.Added, Object: obj}) }
	rule := func(res string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{res}}
	}
	apply(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "nodes"}, Rules: []rbacv1.PolicyRule{rule("nodes")}})
	apply(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "pods"}, Rules: []rbacv1.PolicyRule{rule("pods")}})
	apply(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"to": "agg"}}}}})
	apply(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cm", Labels: map[string]string{"to": "agg"}}, Rules: []rbacv1.PolicyRule{rule("configmaps")}})
	apply(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "secrets", Namespace: "ns"}, Rules: []rbacv1.PolicyRule{rule("secrets")}})
	// Cluster-wide through a group; in ns through the user, twice, and a
	// Role; in other through the aggregated ClusterRole.
	apply(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "n"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "nodes"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "ops"}}})
	apply(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "pods"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}, {Kind: rbacv1.GroupKind, Name: "ops"}}})
	apply(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "secrets"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}})
	apply(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "other"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "agg"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}})
	alice := &authn.User{Name: "alice", Groups: []string{"ops"}}
	for _, tc := range []struct {
		ns   string
		want []rbacv1.PolicyRule
	}{
		{"", []rbacv1.PolicyRule{rule("nodes")}},
		{"ns", []rbacv1.PolicyRule{rule("nodes"), rule("pods"), rule("secrets")}},
		{"other", []rbacv1.PolicyRule{rule("nodes"), rule("configmaps")}},
		{"none", []rbacv1.PolicyRule{rule("nodes")}},
	} {
		if got := r.RulesFor(alice, tc.ns); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("RulesFor(alice, %q) = %v, want %v", tc.ns, got, tc.want)
		}
	}
	if got := r.RulesFor(&authn.User{Name: "bob"}, "ns"); len(got) != 0 {
		t.Errorf("bob holds %v", got)
	}
	for _, tc := range []struct {
		ns   string
		ref  rbacv1.RoleRef
		want []rbacv1.PolicyRule
		ok   bool
	}{
		{"ns", rbacv1.RoleRef{Kind: "Role", Name: "secrets"}, []rbacv1.PolicyRule{rule("secrets")}, true},
		{"other", rbacv1.RoleRef{Kind: "Role", Name: "secrets"}, nil, false},
		{"", rbacv1.RoleRef{Kind: "Role", Name: "secrets"}, nil, false},
		{"", rbacv1.RoleRef{Kind: "ClusterRole", Name: "agg"}, []rbacv1.PolicyRule{rule("configmaps")}, true},
		{"ns", rbacv1.RoleRef{Kind: "ClusterRole", Name: "missing"}, nil, false},
	} {
		got, ok := r.RoleRefRules(tc.ns, tc.ref)
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("RoleRefRules(%q, %v) = %v, %v; want %v, %v", tc.ns, tc.ref, got, ok, tc.want, tc.ok)
		}
	}
	var none *RBAC
	if got := none.RulesFor(alice, "ns"); got != nil {
		t.Errorf("nil RBAC holds %v", got)
	}
}
