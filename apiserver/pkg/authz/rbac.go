package authz

import (
	"context"
	"strconv"
	"strings"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/authn"
)

// RBAC authorizes from Roles, ClusterRoles and their bindings, kept in
// memory from watch events (Apply). The bindings are indexed by the users
// and groups they name (a service account as its user), so a decision looks
// only at the bindings of the request's user and groups, and resolves their
// roles by name; an aggregated ClusterRole's rules are gathered when a
// ClusterRole changes, not per request.
type RBAC struct {
	mu           sync.RWMutex
	roles        map[roleKey]*rbacv1.Role
	clusterRoles *clusterRoleSet
	// roleBindings has one index per namespace.
	roleBindings        map[string]*bindingIndex
	clusterRoleBindings *bindingIndex
}

// roleKey names a Role.
type roleKey struct{ namespace, name string }

// NewRBAC returns an empty RBAC authorizer.
func NewRBAC() *RBAC {
	return &RBAC{
		roles:               map[roleKey]*rbacv1.Role{},
		clusterRoles:        newClusterRoleSet(),
		roleBindings:        map[string]*bindingIndex{},
		clusterRoleBindings: newBindingIndex(),
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
		key := roleKey{o.Namespace, o.Name}
		if del {
			delete(r.roles, key)
		} else {
			r.roles[key] = o
		}
	case *rbacv1.ClusterRole:
		if del {
			r.clusterRoles.set(o.Name, nil)
		} else {
			r.clusterRoles.set(o.Name, o)
		}
	case *rbacv1.RoleBinding:
		x := r.roleBindings[o.Namespace]
		if x == nil {
			x = newBindingIndex()
			r.roleBindings[o.Namespace] = x
		}
		if del {
			x.remove(o.Name)
		} else {
			x.put(newBinding(o.Name, o.Namespace, o.RoleRef, o.Subjects))
		}
		if len(x.byName) == 0 {
			delete(r.roleBindings, o.Namespace)
		}
	case *rbacv1.ClusterRoleBinding:
		if del {
			r.clusterRoleBindings.remove(o.Name)
		} else {
			r.clusterRoleBindings.put(newBinding(o.Name, "", o.RoleRef, o.Subjects))
		}
	}
}

// HasClusterObjects reports whether every named ClusterRole and
// ClusterRoleBinding has reached the authorizer.
func (r *RBAC) HasClusterObjects(roles, bindings []string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, n := range roles {
		if _, ok := r.clusterRoles.roles[n]; !ok {
			return false
		}
	}
	for _, n := range bindings {
		if _, ok := r.clusterRoleBindings.byName[n]; !ok {
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
		r.roles = map[roleKey]*rbacv1.Role{}
	case "clusterroles":
		r.clusterRoles = newClusterRoleSet()
	case "rolebindings":
		r.roleBindings = map[string]*bindingIndex{}
	case "clusterrolebindings":
		r.clusterRoleBindings = newBindingIndex()
	}
}

// Authorize implements Authorizer. RBAC never denies: it allows or abstains.
// As upstream, ClusterRoleBindings are looked at first, then the
// RoleBindings of the request's namespace.
func (r *RBAC) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if a.User == nil {
		return NoOpinion, "", nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	b := r.allowingBinding(r.clusterRoleBindings, &a)
	if b == nil && a.Namespace != "" {
		if x := r.roleBindings[a.Namespace]; x != nil {
			b = r.allowingBinding(x, &a)
		}
	}
	if b == nil {
		return NoOpinion, "", nil
	}
	return Allow, b.reason + describe(a.User), nil
}

// allowingBinding returns a binding of x that names the user or one of its
// groups and whose role allows the request, or nil.
func (r *RBAC) allowingBinding(x *bindingIndex, a *Attributes) *binding {
	if b := r.firstAllowing(x.bySubject[subjectKey{userSubject, a.User.Name}], a); b != nil {
		return b
	}
	for _, g := range a.User.Groups {
		if b := r.firstAllowing(x.bySubject[subjectKey{groupSubject, g}], a); b != nil {
			return b
		}
	}
	return nil
}

func (r *RBAC) firstAllowing(list []*binding, a *Attributes) *binding {
	for _, b := range list {
		if rulesAllow(a, r.bindingRules(b)) {
			return b
		}
	}
	return nil
}

// bindingRules resolves a binding's roleRef: a ClusterRoleBinding grants
// only a ClusterRole, a RoleBinding a ClusterRole or a Role of its own
// namespace.
func (r *RBAC) bindingRules(b *binding) []rbacv1.PolicyRule {
	rules, _ := r.roleRules(b.namespace, b.roleKind, b.roleName)
	return rules
}

// roleRules returns the rules of the role a binding in namespace ("" for
// a ClusterRoleBinding) refers to: a ClusterRole's (with what it
// aggregates) or a Role of that namespace; ok is false when no such role
// has reached the authorizer. The caller holds r.mu.
func (r *RBAC) roleRules(namespace, kind, name string) (rules []rbacv1.PolicyRule, ok bool) {
	switch kind {
	case "ClusterRole":
		if _, ok := r.clusterRoles.roles[name]; ok {
			return r.clusterRoles.rules[name], true
		}
	case "Role":
		if role := r.roles[roleKey{namespace, name}]; role != nil && namespace != "" {
			return role.Rules, true
		}
	}
	return nil, false
}

func describe(u *authn.User) string {
	return "User " + strconv.Quote(u.Name)
}

// RulesAllow reports whether any rule allows the request.
func RulesAllow(a Attributes, rules []rbacv1.PolicyRule) bool {
	return rulesAllow(&a, rules)
}

func rulesAllow(a *Attributes, rules []rbacv1.PolicyRule) bool {
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

func ruleAllows(a *Attributes, rule *rbacv1.PolicyRule) bool {
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
	resourceOK := false
	for _, res := range rule.Resources {
		if res == rbacv1.ResourceAll || resourceMatches(res, a.Resource, a.Subresource) {
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

// resourceMatches reports whether a rule's resource names resource (with
// subresource, "resource/subresource"), or is "*/subresource"; it compares
// in place rather than building "resource/subresource" per rule.
func resourceMatches(res, resource, subresource string) bool {
	if subresource == "" {
		return res == resource
	}
	prefix, sub, ok := strings.Cut(res, "/")
	return ok && sub == subresource && (prefix == resource || prefix == rbacv1.ResourceAll)
}

// RBACKinds are the objects RBAC reads.
func RBACKinds() []runtime.Object {
	return []runtime.Object{&rbacv1.Role{}, &rbacv1.ClusterRole{}, &rbacv1.RoleBinding{}, &rbacv1.ClusterRoleBinding{}}
}

// RulesFor returns the rules u holds in namespace: those of the roles of
// the ClusterRoleBindings naming u or one of its groups and, when
// namespace is not "", of that namespace's RoleBindings naming them, as
// upstream's rule resolver's RulesFor (the escalation checks compare a new
// role's rules with these). A nil RBAC holds no rules.
func (r *RBAC) RulesFor(u *authn.User, namespace string) []rbacv1.PolicyRule {
	if r == nil || u == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	var rules []rbacv1.PolicyRule
	for _, b := range r.bindingsOf(u, namespace) {
		rules = append(rules, r.bindingRules(b)...)
	}
	return rules
}

// bindingsOf returns, once each, the ClusterRoleBindings naming u or one
// of its groups and, when namespace is not "", that namespace's
// RoleBindings naming them. The caller holds r.mu.
func (r *RBAC) bindingsOf(u *authn.User, namespace string) []*binding {
	var out []*binding
	seen := map[*binding]bool{}
	keys := make([]subjectKey, 0, 1+len(u.Groups))
	keys = append(keys, subjectKey{userSubject, u.Name})
	for _, g := range u.Groups {
		keys = append(keys, subjectKey{groupSubject, g})
	}
	collect := func(x *bindingIndex) {
		if x == nil {
			return
		}
		for _, k := range keys {
			for _, b := range x.bySubject[k] {
				if !seen[b] {
					seen[b] = true
					out = append(out, b)
				}
			}
		}
	}
	collect(r.clusterRoleBindings)
	if namespace != "" {
		collect(r.roleBindings[namespace])
	}
	return out
}

// RoleRefRules returns the rules of the role a binding in namespace ("" for
// a ClusterRoleBinding) refers to: a ClusterRole's (with what it
// aggregates) or a Role of that namespace; ok is false when no such role
// has reached the authorizer.
func (r *RBAC) RoleRefRules(namespace string, ref rbacv1.RoleRef) (rules []rbacv1.PolicyRule, ok bool) {
	if r == nil {
		return nil, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.roleRules(namespace, ref.Kind, ref.Name)
}
