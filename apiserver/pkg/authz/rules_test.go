package authz

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/authn"
)

// The rules a SelfSubjectRulesReview reports: RBAC's bound roles (cluster
// and the namespace's, aggregated, each binding once however many of its
// subjects match), a missing role as an error beside what resolved, a
// node's list incomplete, AlwaysAllow's everything, and the chain's union
// of them in order.
func TestResolveRules(t *testing.T) {
	r := NewRBAC()
	apply := func(obj runtime.Object) { r.Apply(watch.Event{Type: watch.Added, Object: obj}) }
	apply(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "basic"}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectrulesreviews"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/version", "/healthz"}},
	}})
	apply(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"agg": "view"}}}}})
	apply(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view-pods", Labels: map[string]string{"agg": "view"}},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}})
	apply(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "one-map", Namespace: "team"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"settings"}}}})
	apply(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "basic"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "basic"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "system:authenticated"}}})
	// Names alice twice, as herself and by her group: listed once. A
	// subject's bindings come in the order of their names.
	apply(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "view", Namespace: "team"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}, {Kind: rbacv1.GroupKind, Name: "devs"}}})
	apply(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "map", Namespace: "team"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "one-map"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}})
	apply(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: "team"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "not-yet"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}, {Kind: rbacv1.GroupKind, Name: "devs"}}})

	alice := &authn.User{Name: "alice", Groups: []string{"devs", "system:authenticated"}}
	node := &authn.User{Name: "system:node:vm", Groups: []string{"system:nodes", "system:authenticated"}}
	basicResource := authorizationv1.ResourceRule{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectrulesreviews"}}
	basicURLs := authorizationv1.NonResourceRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/version", "/healthz"}}
	viewPods := authorizationv1.ResourceRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	oneMap := authorizationv1.ResourceRule{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"settings"}}
	everything := Rules{
		Resource:    []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		NonResource: []authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}

	tests := []struct {
		name      string
		resolver  RuleResolver
		user      *authn.User
		namespace string
		want      Rules
		wantErr   string
	}{
		{name: "RBAC in the namespace of the bindings", resolver: r, user: alice, namespace: "team",
			want:    Rules{Resource: []authorizationv1.ResourceRule{basicResource, oneMap, viewPods}, NonResource: []authorizationv1.NonResourceRule{basicURLs}},
			wantErr: `role.rbac.authorization.k8s.io "not-yet" not found`},
		{name: "RBAC in another namespace", resolver: r, user: alice, namespace: "other",
			want: Rules{Resource: []authorizationv1.ResourceRule{basicResource}, NonResource: []authorizationv1.NonResourceRule{basicURLs}}},
		{name: "RBAC, a user bound to nothing", resolver: r, user: &authn.User{Name: "bob"}, namespace: "team"},
		{name: "Node, a node", resolver: NewNode(), user: node, namespace: "team",
			want: Rules{Incomplete: true}, wantErr: "node authorizer does not support user rule resolution"},
		{name: "Node, not a node", resolver: NewNode(), user: alice, namespace: "team"},
		{name: "AlwaysAllow", resolver: AlwaysAllow{}, user: alice, namespace: "team", want: everything},
		{name: "the chain, a node", resolver: Union{Privileged{}, NewNode(), r}, user: node, namespace: "team",
			want:    Rules{Resource: []authorizationv1.ResourceRule{basicResource}, NonResource: []authorizationv1.NonResourceRule{basicURLs}, Incomplete: true},
			wantErr: "node authorizer does not support user rule resolution"},
		{name: "the chain, system:masters through Privileged alone lists nothing", resolver: Union{Privileged{}, NewNode(), NewRBAC()},
			user: &authn.User{Name: "root", Groups: []string{"system:masters"}}, namespace: "team"},
		{name: "the chain, a node bound to a missing role: both errors", resolver: Union{Privileged{}, NewNode(), r},
			user: &authn.User{Name: "system:node:vm", Groups: []string{"system:nodes", "devs"}}, namespace: "team",
			want:    Rules{Resource: []authorizationv1.ResourceRule{viewPods}, Incomplete: true},
			wantErr: `[node authorizer does not support user rule resolution, role.rbac.authorization.k8s.io "not-yet" not found]`},
		{name: "the chain with AlwaysAllow", resolver: Union{Privileged{}, r, AlwaysAllow{}}, user: &authn.User{Name: "bob"}, namespace: "team", want: everything},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.resolver.ResolveRules(context.Background(), tc.user, tc.namespace)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tc.wantErr {
				t.Errorf("error %q, want %q", gotErr, tc.wantErr)
			}
		})
	}

}
