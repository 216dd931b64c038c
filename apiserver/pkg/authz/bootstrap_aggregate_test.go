package authz

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/authn"
)

func bootstrapRole(t *testing.T, name string) *rbacv1.ClusterRole {
	t.Helper()
	for _, r := range BootstrapClusterRoles() {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no bootstrap ClusterRole %s", name)
	return nil
}

func TestUserFacingRolesAreUpstreams(t *testing.T) {
	for _, tc := range []struct{ name, labelledTo string }{{"admin", ""}, {"edit", "admin"}, {"view", "edit"}} {
		r := bootstrapRole(t, tc.name)
		if r.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" || r.Annotations[AutoUpdateAnnotation] != "true" {
			t.Errorf("%s: labels %v annotations %v", tc.name, r.Labels, r.Annotations)
		}
		want := &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-" + tc.name: "true"}}}}
		if !equality.Semantic.DeepEqual(r.AggregationRule, want) || len(r.Rules) != 0 {
			t.Errorf("%s: aggregationRule %+v rules %v", tc.name, r.AggregationRule, r.Rules)
		}
		wantLabels := 2
		if tc.labelledTo == "" {
			wantLabels = 1
		} else if r.Labels["rbac.authorization.k8s.io/aggregate-to-"+tc.labelledTo] != "true" {
			t.Errorf("%s is not labelled aggregate-to-%s: %v", tc.name, tc.labelledTo, r.Labels)
		}
		if len(r.Labels) != wantLabels {
			t.Errorf("%s: labels %v", tc.name, r.Labels)
		}
	}
	// Rules copied from upstream's v1.32 testdata/cluster-roles.yaml.
	verbatim := map[string][]rbacv1.PolicyRule{
		"system:aggregate-to-admin": {
			{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"localsubjectaccessreviews"}, Verbs: []string{"create"}},
			{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"rolebindings", "roles"},
				Verbs: []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}},
		},
	}
	for name, rules := range verbatim {
		if got := bootstrapRole(t, name).Rules; !equality.Semantic.DeepEqual(got, rules) {
			t.Errorf("%s rules:\n got %+v\nwant %+v", name, got, rules)
		}
	}
	some := []struct {
		role  string
		index int
		rule  rbacv1.PolicyRule
	}{
		{"system:aggregate-to-edit", 0, rbacv1.PolicyRule{APIGroups: []string{""}, Verbs: []string{"get", "list", "watch"},
			Resources: []string{"pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"}}},
		{"system:aggregate-to-edit", 2, rbacv1.PolicyRule{APIGroups: []string{""}, Verbs: []string{"create", "delete", "deletecollection", "patch", "update"},
			Resources: []string{"pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"}}},
		{"system:aggregate-to-edit", 6, rbacv1.PolicyRule{APIGroups: []string{"apps"}, Verbs: []string{"create", "delete", "deletecollection", "patch", "update"},
			Resources: []string{"daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"}}},
		{"system:aggregate-to-edit", 12, rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
			Verbs: []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}}},
		{"system:aggregate-to-view", 1, rbacv1.PolicyRule{APIGroups: []string{""}, Verbs: []string{"get", "list", "watch"},
			Resources: []string{"bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status", "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"}}},
		{"system:aggregate-to-view", 9, rbacv1.PolicyRule{APIGroups: []string{"networking.k8s.io"}, Verbs: []string{"get", "list", "watch"},
			Resources: []string{"ingresses", "ingresses/status", "networkpolicies"}}},
	}
	for _, s := range some {
		rules := bootstrapRole(t, s.role).Rules
		if s.index >= len(rules) || !equality.Semantic.DeepEqual(rules[s.index], s.rule) {
			t.Errorf("%s rule %d: got %+v, want %+v", s.role, s.index, rules, s.rule)
		}
	}
	for name, n := range map[string]int{"system:aggregate-to-admin": 2, "system:aggregate-to-edit": 13, "system:aggregate-to-view": 10} {
		r := bootstrapRole(t, name)
		if len(r.Rules) != n {
			t.Errorf("%s has %d rules, upstream %d", name, len(r.Rules), n)
		}
		if r.Labels["rbac.authorization.k8s.io/aggregate-to-"+name[len("system:aggregate-to-"):]] != "true" {
			t.Errorf("%s labels %v", name, r.Labels)
		}
	}
}

// TestUserFacingRolesAuthorize binds admin, edit and view in a namespace
// with every bootstrap ClusterRole applied, as the server holds them before
// the aggregation controller has written any rules.
func TestUserFacingRolesAuthorize(t *testing.T) {
	r := NewRBAC()
	for _, cr := range BootstrapClusterRoles() {
		r.Apply(watch.Event{Type: watch.Added, Object: cr})
	}
	for _, who := range []string{"admin", "edit", "view"} {
		r.Apply(watch.Event{Type: watch.Added, Object: &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "dev", Name: who},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: who}, Subjects: []rbacv1.Subject{user(who + "-user")}}})
	}
	type req struct {
		verb, group, resource, sub string
	}
	cases := []struct {
		who   string
		r     req
		allow bool
	}{
		{"edit", req{"create", "apps", "deployments", ""}, true},
		{"edit", req{"create", "", "pods", "exec"}, true},
		{"edit", req{"get", "", "pods", "exec"}, true},
		{"edit", req{"get", "", "secrets", ""}, true},
		{"edit", req{"list", "", "pods", ""}, true}, // view's, through edit's label
		{"edit", req{"create", "rbac.authorization.k8s.io", "rolebindings", ""}, false},
		{"edit", req{"update", "", "pods", "status"}, false},
		{"edit", req{"create", "", "resourcequotas", ""}, false},
		{"edit", req{"patch", "", "pods", "ephemeralcontainers"}, false}, // not upstream's either
		{"view", req{"list", "", "pods", ""}, true},
		{"view", req{"get", "", "pods", "log"}, true},
		{"view", req{"list", "metrics.k8s.io", "pods", ""}, true}, // system:aggregated-metrics-reader
		{"view", req{"get", "", "secrets", ""}, false},
		{"view", req{"create", "", "pods", "exec"}, false},
		{"view", req{"create", "apps", "deployments", ""}, false},
		{"admin", req{"create", "rbac.authorization.k8s.io", "rolebindings", ""}, true},
		{"admin", req{"create", "apps", "deployments", ""}, true},
		{"admin", req{"list", "", "configmaps", ""}, true},
		{"admin", req{"create", "authorization.k8s.io", "localsubjectaccessreviews", ""}, true},
		{"admin", req{"update", "", "resourcequotas", ""}, false},
	}
	for _, c := range cases {
		for _, ns := range []string{"dev", "prod"} {
			a := Attributes{User: &authn.User{Name: c.who + "-user"}, ResourceRequest: true, Namespace: ns,
				Verb: c.r.verb, APIGroup: c.r.group, Resource: c.r.resource, Subresource: c.r.sub}
			got, _, err := r.Authorize(context.Background(), a)
			if err != nil {
				t.Fatal(err)
			}
			if want := c.allow && ns == "dev"; (got == Allow) != want {
				t.Errorf("%s %s %+v in %s: %v, want allowed %v", c.who, c.r.verb, c.r, ns, got, want)
			}
		}
	}
}

func TestClusterRoleUpToDate(t *testing.T) {
	edit := bootstrapRole(t, "edit")
	withRules := edit.DeepCopy()
	withRules.Rules = bootstrapRole(t, "system:aggregate-to-edit").Rules
	noLabel := edit.DeepCopy()
	delete(noLabel.Labels, AggregateToLabel("admin"))
	extraSelector := edit.DeepCopy()
	extraSelector.AggregationRule.ClusterRoleSelectors = append(extraSelector.AggregationRule.ClusterRoleSelectors,
		metav1.LabelSelector{MatchLabels: map[string]string{"mine": "true"}})
	otherSelector := edit.DeepCopy()
	otherSelector.AggregationRule.ClusterRoleSelectors = []metav1.LabelSelector{{MatchLabels: map[string]string{"mine": "true"}}}
	plain := edit.DeepCopy()
	plain.AggregationRule = nil

	view := bootstrapRole(t, "system:aggregate-to-view")
	viewChanged := view.DeepCopy()
	viewChanged.Rules = viewChanged.Rules[1:]
	viewAggregated := view.DeepCopy()
	viewAggregated.AggregationRule = &rbacv1.AggregationRule{}
	for _, c := range []struct {
		name      string
		cur, want *rbacv1.ClusterRole
		ok        bool
	}{
		{"aggregated as created", edit, edit, true},
		{"aggregated with the controller's rules", withRules, edit, true},
		{"aggregated with a selector added", extraSelector, edit, true},
		{"aggregated without its label", noLabel, edit, false},
		{"aggregated without its selector", otherSelector, edit, false},
		{"aggregation removed", plain, edit, false},
		{"plain as created", view, view, true},
		{"plain with rules changed", viewChanged, view, false},
		{"plain made aggregated", viewAggregated, view, false},
	} {
		if got := ClusterRoleUpToDate(c.cur, c.want); got != c.ok {
			t.Errorf("%s: %v, want %v", c.name, got, c.ok)
		}
	}
}
