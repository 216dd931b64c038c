package validation

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/apis/defaults"
)

func validPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"}},
		},
	}
	defaults.DefaultValidatingAdmissionPolicy(p)
	return p
}

func TestValidateValidatingAdmissionPolicy(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(*admissionregistrationv1.ValidatingAdmissionPolicy)
		wantField string // "" for valid
		wantMsg   string
	}{
		{name: "valid", mutate: func(*admissionregistrationv1.ValidatingAdmissionPolicy) {}},
		{name: "expression does not compile", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Expression = "object.spec.replicas <="
		}, wantField: "spec.validations[0].expression", wantMsg: "compilation failed: ERROR: <input>:1:"},
		{name: "expression not bool", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Expression = "'yes'"
		}, wantField: "spec.validations[0].expression", wantMsg: "must evaluate to bool"},
		{name: "empty expression", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Expression = ""
		}, wantField: "spec.validations[0].expression", wantMsg: "Required value"},
		{name: "messageExpression does not compile", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].MessageExpression = "'a' +"
		}, wantField: "spec.validations[0].messageExpression", wantMsg: "compilation failed"},
		{name: "message with a line break", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Message = "a\nb"
		}, wantField: "spec.validations[0].message", wantMsg: "message must not contain line breaks"},
		{name: "unsupported reason", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Reason = ptr.To(metav1.StatusReasonConflict)
		}, wantField: "spec.validations[0].reason", wantMsg: "Unsupported value"},
		{name: "no validations", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations = nil
		}, wantField: "spec.validations", wantMsg: "validations or auditAnnotations must contain at least one item"},
		{name: "no matchConstraints", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints = nil
		}, wantField: "spec.matchConstraints", wantMsg: "Required value"},
		{name: "no resourceRules", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules = nil
		}, wantField: "spec.matchConstraints.resourceRules", wantMsg: "Required value"},
		{name: "rule without operations", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Operations = nil
		}, wantField: "spec.matchConstraints.resourceRules[0].operations", wantMsg: "Required value"},
		{name: "star with other resources", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"*", "pods"}
		}, wantField: "spec.matchConstraints.resourceRules[0].resources[1]", wantMsg: "if '*/*' is present, must not specify other resources"},
		{name: "bad failurePolicy", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.FailurePolicy = ptr.To(admissionregistrationv1.FailurePolicyType("Sometimes"))
		}, wantField: "spec.failurePolicy", wantMsg: "Unsupported value"},
		{name: "paramKind without kind", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1"}
		}, wantField: "spec.paramKind.kind", wantMsg: "Required value"},
		{name: "variable name not an identifier", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "a-b", Expression: "1"}}
		}, wantField: "spec.variables[0].name", wantMsg: "not a valid CEL identifier"},
		{name: "duplicate matchCondition", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "true"}, {Name: "a", Expression: "true"}}
		}, wantField: "spec.matchConditions[1].name", wantMsg: "Duplicate value"},
		{name: "matchCondition does not compile", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "nope("}}
		}, wantField: "spec.matchConditions[0].expression", wantMsg: "compilation failed"},
		{name: "auditAnnotation without valueExpression", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "k"}}
		}, wantField: "spec.auditAnnotations[0].valueExpression", wantMsg: "Required value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPolicy()
			tt.mutate(p)
			errs := ValidateValidatingAdmissionPolicy(p)
			wantError(t, errs, tt.wantField, tt.wantMsg)
		})
	}
}

func TestValidateValidatingAdmissionPolicyBinding(t *testing.T) {
	valid := func() *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "b"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			},
		}
	}
	tests := []struct {
		name      string
		mutate    func(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
		wantField string
		wantMsg   string
	}{
		{name: "valid", mutate: func(*admissionregistrationv1.ValidatingAdmissionPolicyBinding) {}},
		{name: "no policyName", mutate: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) { b.Spec.PolicyName = "" },
			wantField: "spec.policyName", wantMsg: "Required value"},
		{name: "no validationActions", mutate: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) { b.Spec.ValidationActions = nil },
			wantField: "spec.validationActions", wantMsg: "at least one validation action is required"},
		{name: "Deny and Warn", mutate: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny, admissionregistrationv1.Warn}
		}, wantField: "spec.validationActions", wantMsg: "must not contain both Deny and Warn"},
		{name: "duplicate action", mutate: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit, admissionregistrationv1.Audit}
		}, wantField: "spec.validationActions[1]", wantMsg: "Duplicate value"},
		{name: "unknown action", mutate: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{"Log"}
		}, wantField: "spec.validationActions[0]", wantMsg: "Unsupported value"},
		{name: "paramRef with name and selector", mutate: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "x", Selector: &metav1.LabelSelector{}, ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}
		}, wantField: "spec.paramRef.name", wantMsg: "name and selector are mutually exclusive"},
		{name: "paramRef without parameterNotFoundAction", mutate: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "x"}
		}, wantField: "spec.paramRef.parameterNotFoundAction", wantMsg: "Required value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := valid()
			tt.mutate(b)
			defaults.DefaultValidatingAdmissionPolicyBinding(b)
			errs := ValidateValidatingAdmissionPolicyBinding(b)
			wantError(t, errs, tt.wantField, tt.wantMsg)
		})
	}
}

// wantError checks that errs has one at field whose message holds msg, or
// none at all when field is "".
func wantError(t *testing.T, errs field.ErrorList, fieldPath, msg string) {
	t.Helper()
	if fieldPath == "" {
		if len(errs) != 0 {
			t.Fatalf("unexpected errors: %v", errs)
		}
		return
	}
	for _, e := range errs {
		if e.Field == fieldPath && strings.Contains(e.Error(), msg) {
			return
		}
	}
	t.Errorf("errors %v, want one at %s with %q", errs, fieldPath, msg)
}
