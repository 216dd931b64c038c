package admission

import (
	"context"
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// webhookConfigs are n mutating and n validating configurations of two
// webhooks each, whose rules match pod creates and whose selectors (a
// namespace label, an object label) keep them from the chain bench's pods,
// as an injector's webhooks skip namespaces not opted in.
func webhookConfigs(n int) []watch.Event {
	var evs []watch.Event
	url := "https://127.0.0.1:1/never-called"
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods", "pods/ephemeralcontainers"}},
	}}
	nsSel := &metav1.LabelSelector{MatchLabels: map[string]string{"inject": "enabled"}}
	objSel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "sidecar", Operator: metav1.LabelSelectorOpExists}}}
	none := admissionregistrationv1.SideEffectClassNone
	for i := 0; i < n; i++ {
		evs = append(evs, watch.Event{Type: watch.Added, Object: &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("mutating-%d", i)},
			Webhooks: []admissionregistrationv1.MutatingWebhook{
				{Name: fmt.Sprintf("ns.m%d.example.com", i), ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url}, Rules: rules, NamespaceSelector: nsSel, SideEffects: &none},
				{Name: fmt.Sprintf("obj.m%d.example.com", i), ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url}, Rules: rules, ObjectSelector: objSel, SideEffects: &none},
			}}})
		evs = append(evs, watch.Event{Type: watch.Added, Object: &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("validating-%d", i)},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{
				{Name: fmt.Sprintf("ns.v%d.example.com", i), ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url}, Rules: rules, NamespaceSelector: nsSel, SideEffects: &none},
				{Name: fmt.Sprintf("obj.v%d.example.com", i), ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url}, Rules: rules, ObjectSelector: objSel, SideEffects: &none},
			}}})
	}
	return evs
}

// BenchmarkWebhooksPodCreate measures matching a pod create against
// registered webhooks that all decline it by selector (no call is made):
// the cost every create pays once a cluster has webhooks.
func BenchmarkWebhooksPodCreate(b *testing.B) {
	for _, n := range []int{0, 5} {
		b.Run(fmt.Sprintf("configs=%d", n), func(b *testing.B) {
			ns := NewNamespaceLifecycle(nil)
			ns.Apply(watch.Event{Type: watch.Added, Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}})
			w := NewWebhooks(ns.Labels, nil)
			for _, ev := range webhookConfigs(n) {
				w.Apply(ev)
			}
			m, v := MutatingWebhooks{Webhooks: w}, ValidatingWebhooks{Webhooks: w}
			pod := benchPod()
			a := &Attributes{Operation: Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: "bench", Name: pod.Name, Object: pod}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := m.Admit(ctx, a); err != nil {
					b.Fatal(err)
				}
				if err := v.Validate(ctx, a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
