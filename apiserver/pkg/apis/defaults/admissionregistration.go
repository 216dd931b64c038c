package defaults

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Upstream's admissionregistration/v1 defaults for one webhook.
func defaultWebhookCommon(failurePolicy **admissionregistrationv1.FailurePolicyType, matchPolicy **admissionregistrationv1.MatchPolicyType,
	namespaceSelector, objectSelector **metav1.LabelSelector, timeout **int32, rules []admissionregistrationv1.RuleWithOperations,
	clientConfig *admissionregistrationv1.WebhookClientConfig) {
	if *failurePolicy == nil {
		p := admissionregistrationv1.Fail
		*failurePolicy = &p
	}
	if *matchPolicy == nil {
		p := admissionregistrationv1.Equivalent
		*matchPolicy = &p
	}
	if *namespaceSelector == nil {
		*namespaceSelector = &metav1.LabelSelector{}
	}
	if *objectSelector == nil {
		*objectSelector = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		t := int32(10)
		*timeout = &t
	}
	for i := range rules {
		if rules[i].Scope == nil {
			s := admissionregistrationv1.AllScopes
			rules[i].Scope = &s
		}
	}
	if clientConfig.Service != nil && clientConfig.Service.Port == nil {
		p := int32(443)
		clientConfig.Service.Port = &p
	}
}

// DefaultMutatingWebhookConfiguration applies upstream's defaults.
func DefaultMutatingWebhookConfiguration(obj *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range obj.Webhooks {
		w := &obj.Webhooks[i]
		defaultWebhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
		if w.ReinvocationPolicy == nil {
			p := admissionregistrationv1.NeverReinvocationPolicy
			w.ReinvocationPolicy = &p
		}
	}
}

// DefaultValidatingWebhookConfiguration applies upstream's defaults.
func DefaultValidatingWebhookConfiguration(obj *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range obj.Webhooks {
		w := &obj.Webhooks[i]
		defaultWebhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
	}
}
