package defaults

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultValidatingAdmissionPolicy applies upstream's v1 defaults:
// failurePolicy Fail and the matchConstraints' defaults.
func DefaultValidatingAdmissionPolicy(obj *admissionregistrationv1.ValidatingAdmissionPolicy) {
	if obj.Spec.FailurePolicy == nil {
		p := admissionregistrationv1.Fail
		obj.Spec.FailurePolicy = &p
	}
	defaultMatchResources(obj.Spec.MatchConstraints)
}

// DefaultValidatingAdmissionPolicyBinding applies upstream's v1 defaults to
// the binding's matchResources, when it has them.
func DefaultValidatingAdmissionPolicyBinding(obj *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	defaultMatchResources(obj.Spec.MatchResources)
}

// defaultMatchResources: matchPolicy Equivalent, empty (match-all)
// selectors, and scope "*" on every rule.
func defaultMatchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		p := admissionregistrationv1.Equivalent
		m.MatchPolicy = &p
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for _, rules := range [][]admissionregistrationv1.NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rules {
			if rules[i].Scope == nil {
				s := admissionregistrationv1.AllScopes
				rules[i].Scope = &s
			}
		}
	}
}
