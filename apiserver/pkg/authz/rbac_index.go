package authz

import (
	"sort"
	"strconv"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// serviceAccountUserPrefix starts the user name of a service account.
const serviceAccountUserPrefix = "system:serviceaccount:"

// subjectKind is what a subjectKey names: a user or a group. A service
// account subject is indexed as its user, system:serviceaccount:<ns>:<name>,
// which is exactly the user name upstream's RBAC matches it against.
type subjectKind uint8

const (
	userSubject subjectKind = iota
	groupSubject
)

// subjectKey is one user or group a binding names.
type subjectKey struct {
	kind subjectKind
	name string
}

// binding is a RoleBinding or ClusterRoleBinding as the index keeps it.
type binding struct {
	name string
	// namespace is the RoleBinding's; "" for a ClusterRoleBinding.
	namespace string
	roleKind  string
	roleName  string
	// reason is the allow reason up to the user's description.
	reason string
	// subjects are the distinct keys the binding is indexed under.
	subjects []subjectKey
}

func newBinding(name, namespace string, ref rbacv1.RoleRef, subjects []rbacv1.Subject) *binding {
	b := &binding{name: name, namespace: namespace, roleKind: ref.Kind, roleName: ref.Name, subjects: subjectKeys(subjects, namespace)}
	if namespace == "" {
		b.reason = "RBAC: allowed by ClusterRoleBinding " + strconv.Quote(name) + " of ClusterRole " + strconv.Quote(ref.Name) + " to "
	} else {
		b.reason = "RBAC: allowed by RoleBinding " + strconv.Quote(namespace+"/"+name) + " of " + ref.Kind + " " + strconv.Quote(ref.Name) + " to "
	}
	return b
}

// subjectKeys are the distinct keys that match the subjects, as upstream's
// appliesToUser: a user by name, a group by name, a service account (whose
// namespace defaults to the binding's) by its user name; other kinds, and a
// service account of no namespace, match nobody.
func subjectKeys(subjects []rbacv1.Subject, bindingNamespace string) []subjectKey {
	out := make([]subjectKey, 0, len(subjects))
	add := func(k subjectKey) {
		for _, have := range out {
			if have == k {
				return
			}
		}
		out = append(out, k)
	}
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			add(subjectKey{userSubject, s.Name})
		case rbacv1.GroupKind:
			add(subjectKey{groupSubject, s.Name})
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = bindingNamespace
			}
			if ns != "" {
				add(subjectKey{userSubject, serviceAccountUserPrefix + ns + ":" + s.Name})
			}
		}
	}
	return out
}

// bindingIndex holds the bindings of one scope (the cluster, or one
// namespace) by name and by the users and groups they name.
type bindingIndex struct {
	byName map[string]*binding
	// bySubject lists, in name order, the bindings naming a subject.
	bySubject map[subjectKey][]*binding
}

func newBindingIndex() *bindingIndex {
	return &bindingIndex{byName: map[string]*binding{}, bySubject: map[subjectKey][]*binding{}}
}

// put adds b, replacing the binding of the same name.
func (x *bindingIndex) put(b *binding) {
	x.remove(b.name)
	x.byName[b.name] = b
	for _, k := range b.subjects {
		list := x.bySubject[k]
		i := sort.Search(len(list), func(i int) bool { return list[i].name >= b.name })
		list = append(list, nil)
		copy(list[i+1:], list[i:])
		list[i] = b
		x.bySubject[k] = list
	}
}

// remove forgets the binding called name, if there is one.
func (x *bindingIndex) remove(name string) {
	old := x.byName[name]
	if old == nil {
		return
	}
	delete(x.byName, name)
	for _, k := range old.subjects {
		list := x.bySubject[k]
		out := make([]*binding, 0, len(list))
		for _, b := range list {
			if b != old {
				out = append(out, b)
			}
		}
		if len(out) == 0 {
			delete(x.bySubject, k)
		} else {
			x.bySubject[k] = out
		}
	}
}

// clusterRoleSet holds the ClusterRoles and, for each, the rules it grants:
// its own, and for an aggregated ClusterRole also those of every
// ClusterRole its selectors match, as upstream's aggregation controller
// writes them; an aggregated ClusterRole that matches (edit, labelled
// aggregate-to-admin) brings what it grants, so the chain admin, edit,
// view holds before the controller has written it. The granted rules are
// recomputed when a ClusterRole changes, never while authorizing.
type clusterRoleSet struct {
	roles map[string]*rbacv1.ClusterRole
	// selectors of each aggregated ClusterRole (invalid ones left out).
	selectors map[string][]labels.Selector
	rules     map[string][]rbacv1.PolicyRule
	// ownKeys are the ruleKeys of each ClusterRole's own rules.
	ownKeys map[string][]string
}

func newClusterRoleSet() *clusterRoleSet {
	return &clusterRoleSet{roles: map[string]*rbacv1.ClusterRole{}, selectors: map[string][]labels.Selector{}, rules: map[string][]rbacv1.PolicyRule{},
		ownKeys: map[string][]string{}}
}

// set records cr (nil: the ClusterRole called name is gone) and updates the
// rules of every ClusterRole the change concerns: itself, and the
// aggregated ClusterRoles it fed before or feeds now, directly or through
// other aggregated ClusterRoles.
func (s *clusterRoleSet) set(name string, cr *rbacv1.ClusterRole) {
	old := s.roles[name]
	delete(s.selectors, name)
	delete(s.rules, name)
	if cr == nil {
		delete(s.roles, name)
		delete(s.ownKeys, name)
	} else {
		s.roles[name] = cr
		s.ownKeys[name] = ruleKeys(cr.Rules)
		if cr.AggregationRule != nil {
			s.selectors[name] = parseSelectors(cr.AggregationRule.ClusterRoleSelectors)
		}
	}
	affected := map[string]bool{name: cr != nil}
	queue := []*rbacv1.ClusterRole{old, cr}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		for agg, sels := range s.selectors {
			if !affected[agg] && agg != c.Name && feeds(c, sels) {
				affected[agg] = true
				queue = append(queue, s.roles[agg])
			}
		}
	}
	pass := s.newPass()
	for n, ok := range affected {
		if ok {
			g, _ := pass.grant(n)
			s.rules[n] = g.rules
		}
	}
}

func parseSelectors(in []metav1.LabelSelector) []labels.Selector {
	out := make([]labels.Selector, 0, len(in))
	for i := range in {
		if sel, err := metav1.LabelSelectorAsSelector(&in[i]); err == nil {
			out = append(out, sel)
		}
	}
	return out
}

// feeds reports whether cr matches one of sels.
func feeds(cr *rbacv1.ClusterRole, sels []labels.Selector) bool {
	if cr == nil {
		return false
	}
	set := labels.Set(cr.Labels)
	for _, sel := range sels {
		if sel.Matches(set) {
			return true
		}
	}
	return false
}

// granted is what an aggregated ClusterRole grants, with its rules' keys.
type granted struct {
	rules []rbacv1.PolicyRule
	keys  []string
}

// grantPass computes what ClusterRoles grant after one change. visiting
// holds the aggregated ClusterRoles being computed: one met again
// (selectors that select each other) brings only its own rules. done keeps
// the results that met no such cycle, which are the same wherever they
// are asked for (edit's, when admin's is computed after it).
type grantPass struct {
	s        *clusterRoleSet
	visiting map[string]bool
	done     map[string]granted
}

func (s *clusterRoleSet) newPass() *grantPass {
	return &grantPass{s: s, visiting: map[string]bool{}, done: map[string]granted{}}
}

// grant computes what the ClusterRole called name grants; cyclic reports
// whether a cycle cut it short.
func (p *grantPass) grant(name string) (g granted, cyclic bool) {
	cr := p.s.roles[name]
	if cr.AggregationRule == nil || p.visiting[name] {
		return granted{rules: cr.Rules, keys: p.s.ownKeys[name]}, cr.AggregationRule != nil
	}
	if g, ok := p.done[name]; ok {
		return g, false
	}
	p.visiting[name] = true
	defer delete(p.visiting, name)
	sels := p.s.selectors[name]
	g.rules = append([]rbacv1.PolicyRule(nil), cr.Rules...)
	g.keys = append([]string(nil), p.s.ownKeys[name]...)
	seen := make(map[string]bool, len(g.keys))
	for _, k := range g.keys {
		seen[k] = true
	}
	others := make([]string, 0, len(p.s.roles))
	for other := range p.s.roles {
		if other != name && feeds(p.s.roles[other], sels) {
			others = append(others, other)
		}
	}
	sort.Strings(others)
	for _, other := range others {
		o, c := p.grant(other)
		cyclic = cyclic || c
		for i, k := range o.keys {
			// The controller's union in cr.Rules repeats what is
			// gathered here; keep each rule once.
			if !seen[k] {
				seen[k] = true
				g.rules = append(g.rules, o.rules[i])
				g.keys = append(g.keys, k)
			}
		}
	}
	if !cyclic {
		p.done[name] = g
	}
	return g, cyclic
}

func ruleKeys(rules []rbacv1.PolicyRule) []string {
	keys := make([]string, len(rules))
	for i := range rules {
		keys[i] = ruleKey(&rules[i])
	}
	return keys
}

// ruleKey identifies a rule by its lists (a nil list as an empty one).
func ruleKey(r *rbacv1.PolicyRule) string {
	var b strings.Builder
	for _, list := range [][]string{r.Verbs, r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs} {
		for _, v := range list {
			b.WriteString(v)
			b.WriteByte(0)
		}
		b.WriteByte(1)
	}
	return b.String()
}
