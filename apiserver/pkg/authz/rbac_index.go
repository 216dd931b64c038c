package authz

import (
	"slices"
	"sort"
	"strconv"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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
}

func newClusterRoleSet() *clusterRoleSet {
	return &clusterRoleSet{roles: map[string]*rbacv1.ClusterRole{}, selectors: map[string][]labels.Selector{}, rules: map[string][]rbacv1.PolicyRule{}}
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
	} else {
		s.roles[name] = cr
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
	for n, ok := range affected {
		if ok {
			s.rules[n] = s.granted(n, map[string]bool{})
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

// granted computes what the ClusterRole called name grants. visiting holds
// the aggregated ClusterRoles being computed: one met again (selectors that
// select each other) brings only its own rules.
func (s *clusterRoleSet) granted(name string, visiting map[string]bool) []rbacv1.PolicyRule {
	cr := s.roles[name]
	if cr.AggregationRule == nil || visiting[name] {
		return cr.Rules
	}
	visiting[name] = true
	defer delete(visiting, name)
	sels := s.selectors[name]
	rules := append([]rbacv1.PolicyRule(nil), cr.Rules...)
	others := make([]string, 0, len(s.roles))
	for other := range s.roles {
		if other != name && feeds(s.roles[other], sels) {
			others = append(others, other)
		}
	}
	sort.Strings(others)
	for _, other := range others {
		for _, r := range s.granted(other, visiting) {
			// The controller's union in cr.Rules repeats what is
			// gathered here; keep each rule once.
			if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, r) }) {
				rules = append(rules, r)
			}
		}
	}
	return rules
}
