package validation

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A webhook's matchConditions are compiled: one that does not compile is
// Invalid with "compilation failed", as upstream (conformance: should
// reject mutating/validating webhook configurations with invalid match
// conditions); a duplicate name too. Good ones pass.
func TestWebhookConfigurationMatchConditions(t *testing.T) {
	none := admissionregistrationv1.SideEffectClassNone
	url := "https://example.com/hook"
	hook := func(conds ...admissionregistrationv1.MatchCondition) (admissionregistrationv1.MutatingWebhook, admissionregistrationv1.ValidatingWebhook) {
		cc := admissionregistrationv1.WebhookClientConfig{URL: &url}
		return admissionregistrationv1.MutatingWebhook{Name: "a.example.com", ClientConfig: cc, SideEffects: &none,
				AdmissionReviewVersions: []string{"v1"}, MatchConditions: conds},
			admissionregistrationv1.ValidatingWebhook{Name: "a.example.com", ClientConfig: cc, SideEffects: &none,
				AdmissionReviewVersions: []string{"v1"}, MatchConditions: conds}
	}
	check := func(name string, want string, conds ...admissionregistrationv1.MatchCondition) {
		t.Helper()
		m, v := hook(conds...)
		str := func(errs interface{ ToAggregate() error }) string {
			if agg := errs.ToAggregate(); agg != nil {
				return agg.Error()
			}
			return ""
		}
		errs := map[string]string{
			"mutating": str(fieldErrs(ValidateMutatingWebhookConfiguration(&admissionregistrationv1.MutatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "c"}, Webhooks: []admissionregistrationv1.MutatingWebhook{m}}))),
			"validating": str(fieldErrs(ValidateValidatingWebhookConfiguration(&admissionregistrationv1.ValidatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "c"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{v}}))),
		}
		for kind, got := range errs {
			if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
				t.Errorf("%s, %s: %q, want %q", name, kind, got, want)
			}
		}
	}
	check("good conditions", "",
		admissionregistrationv1.MatchCondition{Name: "not-skip-me", Expression: "object.metadata.name != 'skip-me'"},
		admissionregistrationv1.MatchCondition{Name: "create", Expression: "request.operation == 'CREATE'"})
	check("invalid expression", `webhooks[0].matchConditions[0].expression: Invalid value: "... [] bad expression": compilation failed`,
		admissionregistrationv1.MatchCondition{Name: "invalid-expression-1", Expression: "... [] bad expression"})
	check("not a bool", "must evaluate to bool",
		admissionregistrationv1.MatchCondition{Name: "s", Expression: "'a string'"})
	check("duplicate name", "webhooks[0].matchConditions[1].name: Duplicate value",
		admissionregistrationv1.MatchCondition{Name: "x", Expression: "true"},
		admissionregistrationv1.MatchCondition{Name: "x", Expression: "true"})
}

type fieldErrs field.ErrorList

func (e fieldErrs) ToAggregate() error {
	if agg := field.ErrorList(e).ToAggregate(); agg != nil {
		return agg
	}
	return nil
}

// A service reference's path may be empty (as upstream: the webhook is
// called at "/"); a non-empty one must start with '/'.
func TestWebhookServicePath(t *testing.T) {
	none := admissionregistrationv1.SideEffectClassNone
	for path, valid := range map[string]bool{"": true, "/": true, "/hook": true, "hook": false} {
		p := path
		errs := ValidateValidatingWebhookConfiguration(&admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "c"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "a.example.com", SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
				ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "ns", Name: "s", Path: &p}}}},
		})
		if (len(errs) == 0) != valid {
			t.Errorf("path %q: %v, want valid %v", path, errs, valid)
		}
	}
}
