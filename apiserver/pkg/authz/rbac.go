package authz

import (
	"context"
	"strconv"
	"strings"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/authn"
)

// RBAC authorizes from Roles, ClusterRoles and their bindings, kept in
// memory from watch events (Apply).
type RBAC struct {
	mu                  sync.RWMutex
	roles               map[string]*rbacv1.Role
	clusterRoles        map[string]*rbacv1.ClusterRole
	roleBindings        map[string]map[string]*rbacv1.RoleBinding // namespace -> name
	clusterRoleBindings map[string]*rbacv1.ClusterRoleBinding
}

// NewRBAC returns an empty RBAC authorizer.
func NewRBAC() *RBAC {
	return &RBAC{
		roles:               map[string]*rbacv1.Role{},
		clusterRoles:        map[string]*rbacv1.ClusterRole{},
		roleBindings:        map[string]map[string]*rbacv1.RoleBinding{},
		clusterRoleBindings: map[string]*rbacv1.ClusterRoleBinding{},
	}
}

// Apply records one watch event of an RBAC object.
func (r *RBAC) Apply(ev watch.Event) {
	del := ev.Type == watch.Deleted
	if ev.Type != watch.Added && ev.Type != watch.Modified && !del {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch o := ev.Object.(type) {
	case *rbacv1.Role:
		key := o.Namespace + "/" + o.Name
		if del {
			delete(r.roles, key)
		} else {
			r.roles[key] = o
		}
	case *rbacv1.ClusterRole:
		if del {
			delete(r.clusterRoles, o.Name)
		} else {
			r.clusterRoles[o.Name] = o
		}
	case *rbacv1.RoleBinding:
		m := r.roleBindings[o.Namespace]
		if m == nil {
			m = map[string]*rbacv1.RoleBinding{}
			r.roleBindings[o.Namespace] = m
		}
		if del {
			delete(m, o.Name)
		} else {
			m[o.Name] = o
		}
	case *rbacv1.ClusterRoleBinding:
		if del {
			delete(r.clusterRoleBindings, o.Name)
		} else {
			r.clusterRoleBindings[o.Name] = o
		}
	}
}

// HasClusterObjects reports whether every named ClusterRole and
// ClusterRoleBinding has reached the authorizer.
func (r *RBAC) HasClusterObjects(roles, bindings []string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, n := range roles {
		if _, ok := r.clusterRoles[n]; !ok {
			return false
		}
	}
	for _, n := range bindings {
		if _, ok := r.clusterRoleBindings[n]; !ok {
			return false
		}
	}
	return true
}

// Reset forgets every object of one resource (roles, clusterroles,
// rolebindings or clusterrolebindings), before its whole state is applied
// again.
func (r *RBAC) Reset(resource string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch resource {
	case "roles":
		r.roles = map[string]*rbacv1.Role{}
	case "clusterroles":
		r.clusterRoles = map[string]*rbacv1.ClusterRole{}
	case "rolebindings":
		r.roleBindings = map[string]map[string]*rbacv1.RoleBinding{}
	case "clusterrolebindings":
		r.clusterRoleBindings = map[string]*rbacv1.ClusterRoleBinding{}
	}
}

// Authorize implements Authorizer. RBAC never denies: it allows or abstains.
func (r *RBAC) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if a.User == nil {
		return NoOpinion, "", nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, b := range r.clusterRoleBindings {
		if b.RoleRef.Kind != "ClusterRole" || !subjectsMatch(b.Subjects, "", a.User) {
			continue
		}
		if RulesAllow(a, r.clusterRoleRules(b.RoleRef.Name)) {
			return Allow, "RBAC: allowed by ClusterRoleBinding " + strconv.Quote(b.Name) + " of ClusterRole " + strconv.Quote(b.RoleRef.Name) + " to " + describe(a.User), nil
		}
	}
	if a.Namespace != "" {
		for _, b := range r.roleBindings[a.Namespace] {
			if !subjectsMatch(b.Subjects, b.Namespace, a.User) {
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
				return Allow, "RBAC: allowed by RoleBinding " + strconv.Quote(b.Namespace+"/"+b.Name) + " of " + b.RoleRef.Kind + " " + strconv.Quote(b.RoleRef.Name) + " to " + describe(a.User), nil
			}
		}
	}
	return NoOpinion, "", nil
}

// clusterRoleRules returns a ClusterRole's rules; an aggregated ClusterRole
// has the rules of every ClusterRole its selectors match, as upstream's
// aggregation controller would write them.
func (r *RBAC) clusterRoleRules(name string) []rbacv1.PolicyRule {
	cr := r.clusterRoles[name]
	if cr == nil {
		return nil
	}
	if cr.AggregationRule == nil {
		return cr.Rules
	}
	rules := append([]rbacv1.PolicyRule(nil), cr.Rules...)
	for _, sel := range cr.AggregationRule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&sel)
		if err != nil {
			continue
		}
		for _, other := range r.clusterRoles {
			if other.Name != name && other.AggregationRule == nil && s.Matches(labels.Set(other.Labels)) {
				rules = append(rules, other.Rules...)
			}
		}
	}
	return rules
}

func describe(u *authn.User) string {
	return "User " + strconv.Quote(u.Name)
}

func subjectsMatch(subjects []rbacv1.Subject, bindingNamespace string, u *authn.User) bool {
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

// RulesAllow reports whether any rule allows the request.
func RulesAllow(a Attributes, rules []rbacv1.PolicyRule) bool {
	for i := range rules {
		if ruleAllows(a, &rules[i]) {
			return true
		}
	}
	return false
}

func has(list []string, v string) bool {
	for _, x := range list {
		if x == v || x == rbacv1.VerbAll {
			return true
		}
	}
	return false
}

func ruleAllows(a Attributes, rule *rbacv1.PolicyRule) bool {
	if !has(rule.Verbs, a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		for _, u := range rule.NonResourceURLs {
			if u == rbacv1.NonResourceAll || u == a.Path ||
				(strings.HasSuffix(u, "*") && strings.HasPrefix(a.Path, strings.TrimSuffix(u, "*"))) {
				return true
			}
		}
		return false
	}
	if !has(rule.APIGroups, a.APIGroup) {
		return false
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined += "/" + a.Subresource
	}
	resourceOK := false
	for _, res := range rule.Resources {
		if res == rbacv1.ResourceAll || res == combined || (a.Subresource != "" && res == "*/"+a.Subresource) {
			resourceOK = true
			break
		}
	}
	if !resourceOK {
		return false
	}
	if len(rule.ResourceNames) == 0 {
		return true
	}
	for _, n := range rule.ResourceNames {
		if n == a.Name && a.Name != "" {
			return true
		}
	}
	return false
}

// RBACKinds are the objects RBAC reads.
func RBACKinds() []runtime.Object {
	return []runtime.Object{&rbacv1.Role{}, &rbacv1.ClusterRole{}, &rbacv1.RoleBinding{}, &rbacv1.ClusterRoleBinding{}}
}
