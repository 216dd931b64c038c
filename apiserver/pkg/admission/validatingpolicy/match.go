package validatingpolicy

import (
	"context"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"skiff.dev/apiserver/pkg/admission"
)

// NamespaceLabels returns the labels of a namespace.
type NamespaceLabels func(ctx context.Context, namespace string) (map[string]string, error)

// matchResources reports whether m selects the request. rulesRequired is
// true for a policy's matchConstraints; a binding whose resourceRules are
// empty selects everything its policy does.
func matchResources(ctx context.Context, m *admissionregistrationv1.MatchResources, a *admission.Attributes, nsLabels NamespaceLabels, rulesRequired bool) (bool, error) {
	if m == nil {
		return !rulesRequired, nil
	}
	if len(m.ResourceRules) > 0 || rulesRequired {
		if !anyRuleMatches(m.ResourceRules, a) {
			return false, nil
		}
	}
	if anyRuleMatches(m.ExcludeResourceRules, a) {
		return false, nil
	}
	ok, err := matchObjectSelector(m.ObjectSelector, a)
	if err != nil || !ok {
		return false, err
	}
	return matchNamespaceSelector(ctx, m.NamespaceSelector, a, nsLabels)
}

func anyRuleMatches(rules []admissionregistrationv1.NamedRuleWithOperations, a *admission.Attributes) bool {
	for i := range rules {
		if ruleMatches(&rules[i], a) {
			return true
		}
	}
	return false
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == "*" || x == v {
			return true
		}
	}
	return false
}

// ruleMatches is upstream's rule matching: "*" matches every resource but
// no subresource, "*/*" everything, "pods/*" every subresource of pods,
// "*/status" the status of everything.
func ruleMatches(r *admissionregistrationv1.NamedRuleWithOperations, a *admission.Attributes) bool {
	ops := make([]string, len(r.Operations))
	for i, o := range r.Operations {
		ops[i] = string(o)
	}
	if !contains(ops, string(a.Operation)) || !contains(r.APIGroups, a.Resource.Group) || !contains(r.APIVersions, a.Resource.Version) {
		return false
	}
	if !resourceMatches(r.Resources, a.Resource.Resource, a.Subresource) {
		return false
	}
	if len(r.ResourceNames) > 0 && !nameIn(r.ResourceNames, requestName(a)) {
		return false
	}
	return scopeMatches(r.Scope, a)
}

func resourceMatches(resources []string, resource, sub string) bool {
	for _, res := range resources {
		parts := strings.SplitN(res, "/", 2)
		if len(parts) == 1 {
			if sub == "" && (res == "*" || res == resource) {
				return true
			}
			continue
		}
		if (parts[0] == "*" || parts[0] == resource) && (parts[1] == "*" || parts[1] == sub) {
			return true
		}
	}
	return false
}

func nameIn(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

func scopeMatches(scope *admissionregistrationv1.ScopeType, a *admission.Attributes) bool {
	if scope == nil {
		return true
	}
	isNamespace := a.Resource.Group == "" && a.Resource.Resource == "namespaces"
	switch *scope {
	case admissionregistrationv1.ClusterScope:
		return a.Namespace == "" || isNamespace
	case admissionregistrationv1.NamespacedScope:
		return a.Namespace != "" && !isNamespace
	}
	return true
}

// requestName is the name resourceNames are matched against: the request's,
// or on a create the object's.
func requestName(a *admission.Attributes) string {
	if a.Name != "" {
		return a.Name
	}
	if a.Object != nil {
		if m, err := meta.Accessor(a.Object); err == nil {
			return m.GetName()
		}
	}
	return ""
}

func matchObjectSelector(sel *metav1.LabelSelector, a *admission.Attributes) (bool, error) {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return true, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, err
	}
	return admission.ObjectSelected(s, a), nil
}

// matchNamespaceSelector: a namespace is matched by its own labels; other
// cluster-scoped objects are always matched.
func matchNamespaceSelector(ctx context.Context, sel *metav1.LabelSelector, a *admission.Attributes, nsLabels NamespaceLabels) (bool, error) {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return true, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, err
	}
	var l map[string]string
	switch {
	case a.Resource.Group == "" && a.Resource.Resource == "namespaces":
		var ok bool
		if l, ok = admission.LabelsOf(a.Object); !ok {
			l, _ = admission.LabelsOf(a.OldObject)
		}
	case a.Namespace == "":
		return true, nil
	default:
		if l, err = nsLabels(ctx, a.Namespace); err != nil {
			return false, err
		}
	}
	return s.Matches(labels.Set(l)), nil
}
