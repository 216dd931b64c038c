package validatingpolicy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/admission"
	"skiff.dev/apiserver/pkg/celpolicy"
)

// bigDeployment is the create of a Deployment whose pod template has n
// containers.
func bigDeployment(n int) *admission.Attributes {
	a := replicas(1, admission.Create)
	d := a.Object.(*appsv1.Deployment)
	for i := range n {
		d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: "i"})
	}
	return a
}

// pairwise checks the containers' names against each other with
// sets.contains, whose cost is the product of the lists' sizes: over 850
// containers about 746,000, under the per-call limit (1,000,000), so 13 of
// them (9.7M) fit upstream's RuntimeCELCostBudget of 10,000,000 and 14
// (10.4M) do not.
const (
	pairwise   = "sets.contains(object.spec.template.spec.containers.map(c, c.name), object.spec.template.spec.containers.map(c, c.name))"
	containers = 850
)

func expensivePolicy(fp admissionregistrationv1.FailurePolicyType, validations int, mutate func(*admissionregistrationv1.ValidatingAdmissionPolicySpec)) *admissionregistrationv1.ValidatingAdmissionPolicy {
	var vs []admissionregistrationv1.Validation
	for range validations {
		vs = append(vs, admissionregistrationv1.Validation{Expression: pairwise})
	}
	return policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.FailurePolicy = ptr.To(fp)
		if mutate != nil {
			mutate(s)
		}
	}, vs...)
}

// TestRuntimeCostBudget: the validations of one evaluation share upstream's
// runtime cost budget. Each expression is within its own limit, so a policy
// of 13 passes; one of 14 runs out of the budget, which failurePolicy Fail
// turns into a denial with upstream's message and Ignore into an admission.
func TestRuntimeCostBudget(t *testing.T) {
	outOfBudget := "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: validation failed due to running out of cost budget, no further validation rules will be run"
	if !strings.HasSuffix(outOfBudget, celpolicy.ErrOutOfBudget.Error()) {
		t.Fatalf("ErrOutOfBudget is %q", celpolicy.ErrOutOfBudget)
	}
	tests := []struct {
		name    string
		policy  *admissionregistrationv1.ValidatingAdmissionPolicy
		wantErr string
	}{
		{"within the budget", expensivePolicy(admissionregistrationv1.Fail, 13, nil), ""},
		{"over the budget, Fail", expensivePolicy(admissionregistrationv1.Fail, 14, nil), outOfBudget},
		{"over the budget, Ignore", expensivePolicy(admissionregistrationv1.Ignore, 14, nil), ""},
		// The variables' cost counts: 2 variables and 12 validations.
		{"variables count, Fail", expensivePolicy(admissionregistrationv1.Fail, 12, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Variables = []admissionregistrationv1.Variable{{Name: "a", Expression: pairwise}, {Name: "b", Expression: pairwise}}
		}), outOfBudget},
		// 13 validations pass; the messageExpression of a 14th, evaluated
		// after them, runs out: every validation is then an error.
		{"messageExpression counts, Fail", expensivePolicy(admissionregistrationv1.Fail, 13, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Validations[0].MessageExpression = "string(" + pairwise + ")"
		}), "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed messageExpression: validation failed due to running out of cost budget, no further validation rules will be run"},
		// The matchConditions have a budget of their own (2,500,000):
		// four pairwise conditions run out of it.
		{"matchConditions, Fail", policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			for i := range 4 {
				s.MatchConditions = append(s.MatchConditions, admissionregistrationv1.MatchCondition{Name: fmt.Sprintf("m%d", i), Expression: pairwise})
			}
		}, admissionregistrationv1.Validation{Expression: "true"}), outOfBudget},
		{"matchConditions, Ignore", policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
			for i := range 4 {
				s.MatchConditions = append(s.MatchConditions, admissionregistrationv1.MatchCondition{Name: fmt.Sprintf("m%d", i), Expression: pairwise})
			}
		}, admissionregistrationv1.Validation{Expression: "false"}), ""},
		// The audit annotations have a budget of their own: the 13
		// validations do not take from it, 14 annotations run out of it.
		{"auditAnnotations, Fail", expensivePolicy(admissionregistrationv1.Fail, 13, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			for i := range 14 {
				s.AuditAnnotations = append(s.AuditAnnotations, admissionregistrationv1.AuditAnnotation{Key: fmt.Sprintf("a%d", i), ValueExpression: "string(" + pairwise + ")"})
			}
		}), outOfBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := newPlugin(t, nil, tt.policy, bindingOf(nil, admissionregistrationv1.Deny))
			err := pl.Validate(context.Background(), bigDeployment(containers))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("denied: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("admitted")
			}
			status, ok := err.(*apierrors.StatusError)
			if !ok {
				t.Fatalf("error %T %v, want a StatusError", err, err)
			}
			if got := status.ErrStatus.Details.Causes[0].Message; got != tt.wantErr {
				t.Errorf("message %q, want %q", got, tt.wantErr)
			}
			if status.ErrStatus.Code != 422 {
				t.Errorf("code %d, want 422", status.ErrStatus.Code)
			}
		})
	}
}
