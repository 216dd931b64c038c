package authz

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/authn"
)

// referenceRBAC is the unindexed evaluation RBAC had before the index: every
// binding of the cluster and of the namespace is matched against the user,
// and an aggregated ClusterRole's rules are gathered per request. The index
// must decide exactly as it does.
type referenceRBAC struct {
	roles               map[string]*rbacv1.Role
	clusterRoles        map[string]*rbacv1.ClusterRole
	roleBindings        map[string]*rbacv1.RoleBinding
	clusterRoleBindings map[string]*rbacv1.ClusterRoleBinding
}

func newReferenceRBAC() *referenceRBAC {
	return &referenceRBAC{map[string]*rbacv1.Role{}, map[string]*rbacv1.ClusterRole{}, map[string]*rbacv1.RoleBinding{}, map[string]*rbacv1.ClusterRoleBinding{}}
}

func (r *referenceRBAC) apply(ev watch.Event) {
	del := ev.Type == watch.Deleted
	switch o := ev.Object.(type) {
	case *rbacv1.Role:
		if del {
			delete(r.roles, o.Namespace+"/"+o.Name)
		} else {
			r.roles[o.Namespace+"/"+o.Name] = o
		}
	case *rbacv1.ClusterRole:
		if del {
			delete(r.clusterRoles, o.Name)
		} else {
			r.clusterRoles[o.Name] = o
		}
	case *rbacv1.RoleBinding:
		if del {
			delete(r.roleBindings, o.Namespace+"/"+o.Name)
		} else {
			r.roleBindings[o.Namespace+"/"+o.Name] = o
		}
	case *rbacv1.ClusterRoleBinding:
		if del {
			delete(r.clusterRoleBindings, o.Name)
		} else {
			r.clusterRoleBindings[o.Name] = o
		}
	}
}

func (r *referenceRBAC) reset(resource string) {
	fresh := newReferenceRBAC()
	switch resource {
	case "roles":
		r.roles = fresh.roles
	case "clusterroles":
		r.clusterRoles = fresh.clusterRoles
	case "rolebindings":
		r.roleBindings = fresh.roleBindings
	case "clusterrolebindings":
		r.clusterRoleBindings = fresh.clusterRoleBindings
	}
}

func (r *referenceRBAC) clusterRoleRules(name string) []rbacv1.PolicyRule {
	return r.gather(name, map[string]bool{})
}

// gather is what the ClusterRole called name grants: its rules and those
// of every ClusterRole its selectors match, aggregated ones through what
// they grant, except one already being gathered (a cycle).
func (r *referenceRBAC) gather(name string, visiting map[string]bool) []rbacv1.PolicyRule {
	cr := r.clusterRoles[name]
	if cr == nil {
		return nil
	}
	if cr.AggregationRule == nil || visiting[name] {
		return cr.Rules
	}
	visiting[name] = true
	defer delete(visiting, name)
	rules := append([]rbacv1.PolicyRule(nil), cr.Rules...)
	for _, sel := range cr.AggregationRule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&sel)
		if err != nil {
			continue
		}
		for _, other := range r.clusterRoles {
			if other.Name != name && s.Matches(labels.Set(other.Labels)) {
				rules = append(rules, r.gather(other.Name, visiting)...)
			}
		}
	}
	return rules
}

func referenceSubjectsMatch(subjects []rbacv1.Subject, bindingNamespace string, u *authn.User) bool {
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			if s.Name == u.Name {
				return true
			}
		case rbacv1.GroupKind:
			for _, g := range u.Groups {
				if g == s.Name {
					return true
				}
			}
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = bindingNamespace
			}
			if ns != "" && u.Name == "system:serviceaccount:"+ns+":"+s.Name {
				return true
			}
		}
	}
	return false
}

func (r *referenceRBAC) authorize(a Attributes) Decision {
	for _, b := range r.clusterRoleBindings {
		if b.RoleRef.Kind == "ClusterRole" && referenceSubjectsMatch(b.Subjects, "", a.User) && RulesAllow(a, r.clusterRoleRules(b.RoleRef.Name)) {
			return Allow
		}
	}
	if a.Namespace == "" {
		return NoOpinion
	}
	for _, b := range r.roleBindings {
		if b.Namespace != a.Namespace || !referenceSubjectsMatch(b.Subjects, b.Namespace, a.User) {
			continue
		}
		var rules []rbacv1.PolicyRule
		switch b.RoleRef.Kind {
		case "Role":
			if role := r.roles[b.Namespace+"/"+b.RoleRef.Name]; role != nil {
				rules = role.Rules
			}
		case "ClusterRole":
			rules = r.clusterRoleRules(b.RoleRef.Name)
		}
		if RulesAllow(a, rules) {
			return Allow
		}
	}
	return NoOpinion
}

// step is one change applied to both authorizers: a watch event, or a
// Reset when reset is set.
type step struct {
	ev    watch.EventType
	obj   runtime.Object
	reset string
}

func add(obj runtime.Object) step    { return step{ev: watch.Added, obj: obj} }
func modify(obj runtime.Object) step { return step{ev: watch.Modified, obj: obj} }
func remove(obj runtime.Object) step { return step{ev: watch.Deleted, obj: obj} }

func meta(ns, name string, lbls ...string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: ns, Name: name}
	for i := 0; i+1 < len(lbls); i += 2 {
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[lbls[i]] = lbls[i+1]
	}
	return m
}

func user(n string) rbacv1.Subject  { return rbacv1.Subject{Kind: rbacv1.UserKind, Name: n} }
func group(n string) rbacv1.Subject { return rbacv1.Subject{Kind: rbacv1.GroupKind, Name: n} }
func sa(ns, n string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: n}
}

func roleRef(kind, name string) rbacv1.RoleRef {
	return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
}

// TestRBACIndexMatchesReference applies a history of adds, updates,
// deletes and resets and, after every step, compares the decisions of the
// indexed authorizer with the unindexed reference for every user and request
// of a grid covering users, groups, service accounts, Roles, ClusterRoles,
// aggregation, resourceNames, subresources, nonResourceURLs and wildcards.
func TestRBACIndexMatchesReference(t *testing.T) {
	getPods := rule([]string{"get"}, []string{""}, "pods")
	history := []step{
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "agg"), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"agg": "yes"}},
			{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}},
		}}}),
		add(&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "to-agg"), RoleRef: roleRef("ClusterRole", "agg"), Subjects: []rbacv1.Subject{group("readers")}}),
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "pods-reader", "agg", "yes"), Rules: []rbacv1.PolicyRule{getPods}}),
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "cm-named", "tier", "b"), Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get", "update"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cfg"}}}}),
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "status", "tier", "c"), Rules: []rbacv1.PolicyRule{
			rule([]string{"update"}, []string{""}, "pods/status"), rule([]string{"get"}, []string{"*"}, "*/scale")}}),
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "urls"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/apis/*"}}}}),
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "all"), Rules: []rbacv1.PolicyRule{rule([]string{"*"}, []string{"*"}, "*")}}),
		add(&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "urls"), RoleRef: roleRef("ClusterRole", "urls"),
			Subjects: []rbacv1.Subject{group("system:authenticated"), sa("", "nobody")}}),
		add(&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "robot-all"), RoleRef: roleRef("ClusterRole", "all"), Subjects: []rbacv1.Subject{sa("ops", "robot")}}),
		add(&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "bad-ref"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{user("alice")}}),
		add(&rbacv1.Role{ObjectMeta: meta("team", "writer"), Rules: []rbacv1.PolicyRule{rule([]string{"create", "delete"}, []string{""}, "pods")}}),
		add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "alice-writer"), RoleRef: roleRef("Role", "writer"),
			Subjects: []rbacv1.Subject{user("alice"), user("alice")}}),
		add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "builder-agg"), RoleRef: roleRef("ClusterRole", "agg"), Subjects: []rbacv1.Subject{sa("", "builder")}}),
		add(&rbacv1.RoleBinding{ObjectMeta: meta("other", "status"), RoleRef: roleRef("ClusterRole", "status"),
			Subjects: []rbacv1.Subject{group("devs"), sa("team", "builder"), {Kind: "Unknown", Name: "alice"}}}),
		// A labelled role changes, stops feeding, and a new one feeds.
		modify(&rbacv1.ClusterRole{ObjectMeta: meta("", "pods-reader", "agg", "yes"), Rules: []rbacv1.PolicyRule{rule([]string{"get", "list"}, []string{""}, "pods", "services")}}),
		modify(&rbacv1.ClusterRole{ObjectMeta: meta("", "cm-named", "tier", "z"), Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get", "update"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cfg"}}}}),
		modify(&rbacv1.ClusterRole{ObjectMeta: meta("", "status", "tier", "a"), Rules: []rbacv1.PolicyRule{
			rule([]string{"update"}, []string{""}, "pods/status"), rule([]string{"get"}, []string{"*"}, "*/scale")}}),
		// A binding changes subjects, another its roleRef.
		modify(&rbacv1.RoleBinding{ObjectMeta: meta("team", "alice-writer"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{group("devs")}}),
		modify(&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "to-agg"), RoleRef: roleRef("ClusterRole", "urls"), Subjects: []rbacv1.Subject{group("readers")}}),
		// The Role changes, then goes; the aggregated role turns plain.
		modify(&rbacv1.Role{ObjectMeta: meta("team", "writer"), Rules: []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, "secrets")}}),
		modify(&rbacv1.ClusterRole{ObjectMeta: meta("", "agg", "agg", "yes"), Rules: []rbacv1.PolicyRule{rule([]string{"watch"}, []string{""}, "pods")}}),
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "agg2"), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"agg": "yes"}}}}}),
		add(&rbacv1.RoleBinding{ObjectMeta: meta("other", "devs-agg2"), RoleRef: roleRef("ClusterRole", "agg2"), Subjects: []rbacv1.Subject{group("devs")}}),
		// A chain as admin, edit, view: top aggregates mid (an aggregated
		// role) which aggregates leaf; then mid and top select each other.
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "top"), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"to": "top"}}}}}),
		add(&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "nobody-top"), RoleRef: roleRef("ClusterRole", "top"), Subjects: []rbacv1.Subject{user("nobody")}}),
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "mid", "to", "top"), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"to": "mid"}}}}}),
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "leaf", "to", "mid"), Rules: []rbacv1.PolicyRule{rule([]string{"delete"}, []string{"apps"}, "deployments")}}),
		modify(&rbacv1.ClusterRole{ObjectMeta: meta("", "leaf", "to", "mid"), Rules: []rbacv1.PolicyRule{rule([]string{"create"}, []string{""}, "secrets")}}),
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "top-own", "to", "top"), Rules: []rbacv1.PolicyRule{rule([]string{"list"}, []string{""}, "configmaps")}}),
		modify(&rbacv1.ClusterRole{ObjectMeta: meta("", "top", "to", "mid"), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"to": "top"}}}}, Rules: []rbacv1.PolicyRule{rule([]string{"watch"}, []string{""}, "services")}}),
		add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "carol-mid"), RoleRef: roleRef("ClusterRole", "mid"), Subjects: []rbacv1.Subject{user("carol")}}),
		modify(&rbacv1.ClusterRole{ObjectMeta: meta("", "mid"), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"to": "mid"}}}}}),
		remove(&rbacv1.ClusterRole{ObjectMeta: meta("", "leaf")}),
		remove(&rbacv1.Role{ObjectMeta: meta("team", "writer")}),
		remove(&rbacv1.ClusterRole{ObjectMeta: meta("", "pods-reader")}),
		remove(&rbacv1.RoleBinding{ObjectMeta: meta("team", "builder-agg")}),
		remove(&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "robot-all")}),
		{reset: "clusterroles"},
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "status", "agg", "yes"), Rules: []rbacv1.PolicyRule{rule([]string{"update"}, []string{""}, "pods/status")}}),
		add(&rbacv1.ClusterRole{ObjectMeta: meta("", "agg2"), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"agg": "yes"}}}}}),
		{reset: "rolebindings"},
		{reset: "clusterrolebindings"},
		add(&rbacv1.RoleBinding{ObjectMeta: meta("other", "devs-agg2"), RoleRef: roleRef("ClusterRole", "agg2"), Subjects: []rbacv1.Subject{group("devs")}}),
	}
	users := []*authn.User{
		{Name: "alice", Groups: []string{"system:authenticated"}},
		{Name: "bob", Groups: []string{"readers", "system:authenticated"}},
		{Name: "carol", Groups: []string{"devs"}},
		{Name: "system:serviceaccount:team:builder", Groups: []string{"system:serviceaccounts", "system:authenticated"}},
		{Name: "system:serviceaccount:ops:robot"},
		{Name: "system:serviceaccount::nobody"},
		{Name: "nobody"},
	}
	var requests []Attributes
	for _, ns := range []string{"", "team", "other"} {
		for _, verb := range []string{"get", "list", "watch", "create", "update", "delete"} {
			for _, res := range [][3]string{{"", "pods", ""}, {"", "pods", "status"}, {"", "services", ""}, {"", "configmaps", ""},
				{"", "secrets", ""}, {"apps", "deployments", "scale"}, {"apps", "deployments", ""}} {
				for _, name := range []string{"", "cfg"} {
					requests = append(requests, Attributes{ResourceRequest: true, Verb: verb, APIGroup: res[0], Resource: res[1], Subresource: res[2], Namespace: ns, Name: name})
				}
			}
		}
	}
	for _, path := range []string{"/healthz", "/apis/apps", "/metrics"} {
		requests = append(requests, Attributes{Verb: "get", Path: path})
	}

	indexed, ref := NewRBAC(), newReferenceRBAC()
	allowed := 0
	for i, s := range history {
		if s.reset != "" {
			indexed.Reset(s.reset)
			ref.reset(s.reset)
		} else {
			ev := watch.Event{Type: s.ev, Object: s.obj}
			indexed.Apply(ev)
			ref.apply(ev)
		}
		for _, u := range users {
			for _, a := range requests {
				a.User = u
				got, reason, err := indexed.Authorize(context.Background(), a)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if want := ref.authorize(a); got != want {
					t.Fatalf("step %d (%s): %s %s: got %v, want %v", i, describeStep(s), u.Name, describeRequest(a), got, want)
				}
				if got == Allow {
					allowed++
					if !strings.HasPrefix(reason, "RBAC: allowed by ") || !strings.HasSuffix(reason, " to User "+fmt.Sprintf("%q", u.Name)) {
						t.Fatalf("step %d: reason %q", i, reason)
					}
				}
			}
		}
	}
	if allowed == 0 {
		t.Fatal("the history never allowed anything: the comparison proves nothing")
	}
}

func describeStep(s step) string {
	if s.reset != "" {
		return "reset " + s.reset
	}
	m := s.obj.(metav1.Object)
	return fmt.Sprintf("%s %T %s/%s", s.ev, s.obj, m.GetNamespace(), m.GetName())
}

func describeRequest(a Attributes) string {
	if !a.ResourceRequest {
		return a.Verb + " " + a.Path
	}
	return fmt.Sprintf("%s %s/%s/%s ns=%q name=%q", a.Verb, a.APIGroup, a.Resource, a.Subresource, a.Namespace, a.Name)
}

// TestRBACIndexUpdates checks, case by case, that watch events reach the
// decisions: a removed binding, a changed Role, group and service account
// subjects, a binding whose subjects change, and a labelled ClusterRole
// joining an aggregated one.
func TestRBACIndexUpdates(t *testing.T) {
	createPods := Attributes{ResourceRequest: true, Verb: "create", Resource: "pods", Namespace: "team"}
	as := func(a Attributes, name string, groups ...string) Attributes {
		a.User = &authn.User{Name: name, Groups: groups}
		return a
	}
	writer := &rbacv1.Role{ObjectMeta: meta("team", "writer"), Rules: []rbacv1.PolicyRule{rule([]string{"create"}, []string{""}, "pods")}}
	tests := []struct {
		name  string
		steps []step
		a     Attributes
		want  Decision
	}{
		{"user binding", []step{add(writer), add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{user("alice")}})},
			as(createPods, "alice"), Allow},
		{"binding removed", []step{add(writer), add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{user("alice")}}),
			remove(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b")})},
			as(createPods, "alice"), NoOpinion},
		{"cluster binding removed", []step{add(&rbacv1.ClusterRole{ObjectMeta: meta("", "w"), Rules: writer.Rules}),
			add(&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "b"), RoleRef: roleRef("ClusterRole", "w"), Subjects: []rbacv1.Subject{user("alice")}}),
			remove(&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "b")})},
			as(createPods, "alice"), NoOpinion},
		{"role changed", []step{add(writer), add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{user("alice")}}),
			modify(&rbacv1.Role{ObjectMeta: meta("team", "writer"), Rules: []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, "pods")}})},
			as(createPods, "alice"), NoOpinion},
		{"role added after its binding", []step{add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{user("alice")}}), add(writer)},
			as(createPods, "alice"), Allow},
		{"group subject", []step{add(writer), add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{group("devs")}})},
			as(createPods, "carol", "system:authenticated", "devs"), Allow},
		{"group subject, user not in it", []step{add(writer), add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{group("devs")}})},
			as(createPods, "devs", "system:authenticated"), NoOpinion},
		{"service account of the binding's namespace", []step{add(writer),
			add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{sa("", "builder")}})},
			as(createPods, "system:serviceaccount:team:builder"), Allow},
		{"service account of another namespace", []step{add(writer),
			add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{sa("ci", "builder")}})},
			as(createPods, "system:serviceaccount:team:builder"), NoOpinion},
		{"service account in a ClusterRoleBinding", []step{add(&rbacv1.ClusterRole{ObjectMeta: meta("", "w"), Rules: writer.Rules}),
			add(&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "b"), RoleRef: roleRef("ClusterRole", "w"), Subjects: []rbacv1.Subject{sa("ci", "builder")}})},
			as(createPods, "system:serviceaccount:ci:builder"), Allow},
		{"service account of no namespace in a ClusterRoleBinding", []step{add(&rbacv1.ClusterRole{ObjectMeta: meta("", "w"), Rules: writer.Rules}),
			add(&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "b"), RoleRef: roleRef("ClusterRole", "w"), Subjects: []rbacv1.Subject{sa("", "builder")}})},
			as(createPods, "system:serviceaccount::builder"), NoOpinion},
		{"subjects changed", []step{add(writer), add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{user("alice")}}),
			modify(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{user("bob")}})},
			as(createPods, "alice"), NoOpinion},
		{"labelled role joins an aggregated role", []step{
			add(&rbacv1.ClusterRole{ObjectMeta: meta("", "edit"), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"to-edit": "true"}}}}}),
			add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("ClusterRole", "edit"), Subjects: []rbacv1.Subject{user("alice")}}),
			add(&rbacv1.ClusterRole{ObjectMeta: meta("", "pods", "to-edit", "true"), Rules: writer.Rules})},
			as(createPods, "alice"), Allow},
		{"labelled role leaves an aggregated role", []step{
			add(&rbacv1.ClusterRole{ObjectMeta: meta("", "edit"), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"to-edit": "true"}}}}}),
			add(&rbacv1.RoleBinding{ObjectMeta: meta("team", "b"), RoleRef: roleRef("ClusterRole", "edit"), Subjects: []rbacv1.Subject{user("alice")}}),
			add(&rbacv1.ClusterRole{ObjectMeta: meta("", "pods", "to-edit", "true"), Rules: writer.Rules}),
			modify(&rbacv1.ClusterRole{ObjectMeta: meta("", "pods"), Rules: writer.Rules})},
			as(createPods, "alice"), NoOpinion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRBAC()
			for _, s := range tc.steps {
				r.Apply(watch.Event{Type: s.ev, Object: s.obj})
			}
			if got, reason, _ := r.Authorize(context.Background(), tc.a); got != tc.want {
				t.Errorf("decision %v (%q), want %v", got, reason, tc.want)
			}
		})
	}
}

// The reason names the binding that allowed, with the bindings of a subject
// looked at in name order.
func TestRBACIndexReason(t *testing.T) {
	r := NewRBAC()
	for _, obj := range []runtime.Object{
		&rbacv1.Role{ObjectMeta: meta("team", "writer"), Rules: []rbacv1.PolicyRule{rule([]string{"create"}, []string{""}, "pods")}},
		&rbacv1.RoleBinding{ObjectMeta: meta("team", "z"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{user("alice")}},
		&rbacv1.RoleBinding{ObjectMeta: meta("team", "a"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{user("alice")}},
	} {
		r.Apply(watch.Event{Type: watch.Added, Object: obj})
	}
	_, reason, _ := r.Authorize(context.Background(), Attributes{User: &authn.User{Name: "alice"}, ResourceRequest: true, Verb: "create", Resource: "pods", Namespace: "team"})
	want := `RBAC: allowed by RoleBinding "team/a" of Role "writer" to User "alice"`
	if reason != want {
		t.Errorf("reason %q, want %q", reason, want)
	}
}

// Watch events arrive while requests are authorized (run with -race); a
// binding that stays throughout keeps allowing.
func TestRBACConcurrentApplyAndAuthorize(t *testing.T) {
	r := NewRBAC()
	writer := &rbacv1.Role{ObjectMeta: meta("team", "writer"), Rules: []rbacv1.PolicyRule{rule([]string{"create"}, []string{""}, "pods")}}
	r.Apply(watch.Event{Type: watch.Added, Object: writer})
	r.Apply(watch.Event{Type: watch.Added, Object: &rbacv1.RoleBinding{ObjectMeta: meta("team", "stays"), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{group("devs")}}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 300; i++ {
			b := &rbacv1.RoleBinding{ObjectMeta: meta("team", fmt.Sprintf("b%d", i%7)), RoleRef: roleRef("Role", "writer"), Subjects: []rbacv1.Subject{group("devs"), user("alice")}}
			r.Apply(watch.Event{Type: watch.Added, Object: b})
			r.Apply(watch.Event{Type: watch.Added, Object: &rbacv1.ClusterRole{ObjectMeta: meta("", fmt.Sprintf("c%d", i%5), "agg", "yes"), Rules: writer.Rules}})
			r.Apply(watch.Event{Type: watch.Added, Object: &rbacv1.ClusterRole{ObjectMeta: meta("", "agg"),
				AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"agg": "yes"}}}}}})
			r.Apply(watch.Event{Type: watch.Deleted, Object: b})
		}
	}()
	a := Attributes{User: &authn.User{Name: "alice", Groups: []string{"devs"}}, ResourceRequest: true, Verb: "create", Resource: "pods", Namespace: "team"}
	for i := 0; i < 300; i++ {
		if d, _, _ := r.Authorize(context.Background(), a); d != Allow {
			t.Fatalf("request %d: %v", i, d)
		}
	}
	<-done
}
