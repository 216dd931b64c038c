package admission

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// A webhook's matchConditions decide whether it is called, as upstream's:
// any false skips it; an error, with none false, fails the request under
// failurePolicy Fail and skips the webhook under Ignore.
func TestWebhookMatchConditions(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var review admissionv1.AdmissionReview
		_ = json.NewDecoder(r.Body).Decode(&review)
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: false,
			Result: &metav1.Status{Message: "denied by the test"}}
		_ = json.NewEncoder(w).Encode(review)
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	configure := func(fp admissionregistrationv1.FailurePolicyType, conds ...admissionregistrationv1.MatchCondition) ValidatingWebhooks {
		w := NewWebhooks(func(context.Context, string) (map[string]string, error) { return nil, nil }, nil)
		w.Apply(watch.Event{Type: watch.Added, Object: &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "deny"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "deny.example.com",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &srv.URL, CABundle: ca}, FailurePolicy: &fp,
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
				MatchConditions: conds}},
		}})
		return ValidatingWebhooks{Webhooks: w}
	}
	cm := func(name string) *Attributes {
		return &Attributes{Operation: Create, Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
			Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "ns", Name: name,
			Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}}
	}
	ctx := context.Background()

	// The conformance test's: every object but skip-me goes to the webhook.
	v := configure(admissionregistrationv1.Fail,
		admissionregistrationv1.MatchCondition{Name: "not-skip-me", Expression: "object.metadata.name != 'skip-me'"},
		admissionregistrationv1.MatchCondition{Name: "create", Expression: "request.operation == 'CREATE'"})
	calls.Store(0)
	if err := v.Validate(ctx, cm("skip-me")); err != nil || calls.Load() != 0 {
		t.Errorf("skip-me: %v, %d calls; want allowed without a call", err, calls.Load())
	}
	if err := v.Validate(ctx, cm("other")); err == nil || !strings.Contains(err.Error(), "denied by the test") || calls.Load() != 1 {
		t.Errorf("other: %v, %d calls; want the webhook's denial", err, calls.Load())
	}

	// An error and a false: false wins, the webhook is skipped.
	errCond := admissionregistrationv1.MatchCondition{Name: "error", Expression: "object.data.missing == 'x'"}
	v = configure(admissionregistrationv1.Fail, errCond,
		admissionregistrationv1.MatchCondition{Name: "false", Expression: "false"})
	calls.Store(0)
	if err := v.Validate(ctx, cm("a")); err != nil || calls.Load() != 0 {
		t.Errorf("an error and a false: %v, %d calls; want skipped", err, calls.Load())
	}
	// An error alone: Fail refuses the request, Ignore skips the webhook.
	v = configure(admissionregistrationv1.Fail, errCond)
	if err := v.Validate(ctx, cm("a")); err == nil || !strings.Contains(err.Error(), "match conditions") || calls.Load() != 0 {
		t.Errorf("an error under Fail: %v, %d calls", err, calls.Load())
	}
	v = configure(admissionregistrationv1.Ignore, errCond)
	if err := v.Validate(ctx, cm("a")); err != nil || calls.Load() != 0 {
		t.Errorf("an error under Ignore: %v, %d calls; want skipped", err, calls.Load())
	}
}
