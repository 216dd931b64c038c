package validatingpolicy

import (
	"context"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/celpolicy"
)

// failure is a validation that did not pass, or an evaluation error under
// failurePolicy Fail.
type failure struct {
	index   int
	message string
	reason  metav1.StatusReason
}

type annotation struct{ key, value string }

// result of evaluating a policy once (for one parameter object).
type result struct {
	failures    []failure
	annotations []annotation
}

// evaluate runs the policy's matchConditions, variables, validations and
// audit annotations, as upstream's validator.
func evaluate(ctx context.Context, c *compiledPolicy, act *celpolicy.Activation) result {
	fail := c.failurePolicy() != admissionregistrationv1.Ignore
	var res result
	for _, mc := range c.matchConditions {
		ok, err := mc.Program.EvalBool(ctx, act)
		if err != nil {
			if fail {
				res.failures = append(res.failures, failure{message: fmt.Sprintf("matchCondition '%s': %v", mc.Name, err)})
			}
			return res
		}
		if !ok {
			return result{}
		}
	}
	celpolicy.EvalVariables(ctx, c.variables, act)
	for i, v := range c.validations {
		ok, err := v.expr.EvalBool(ctx, act)
		switch {
		case err != nil:
			if fail {
				res.failures = append(res.failures, failure{index: i, message: err.Error()})
			}
		case !ok:
			res.failures = append(res.failures, failure{index: i, message: message(ctx, v, act), reason: reasonOf(v.v)})
		}
	}
	for _, a := range c.auditAnnotations {
		value, isNull, err := a.value.EvalString(ctx, act)
		switch {
		case err != nil:
			if fail {
				res.failures = append(res.failures, failure{message: err.Error()})
			}
		case !isNull && strings.TrimSpace(value) != "":
			res.annotations = append(res.annotations, annotation{key: a.key, value: truncate(strings.TrimSpace(value), maxAnnotationValue)})
		}
	}
	return res
}

// maxAnnotationValue is upstream's limit on an audit annotation's value.
const maxAnnotationValue = 10 * 1024

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func reasonOf(v admissionregistrationv1.Validation) metav1.StatusReason {
	if v.Reason == nil {
		return metav1.StatusReasonInvalid
	}
	return *v.Reason
}

// message is upstream's choice: the messageExpression's result when it is
// a non-empty single line of at most 5 KiB, else message, else the
// expression itself.
func message(ctx context.Context, v compiledValidation, act *celpolicy.Activation) string {
	if v.message != nil {
		s, _, err := v.message.EvalString(ctx, act)
		s = strings.TrimSpace(s)
		if err == nil && s != "" && len(s) <= celpolicy.MaxMessageSize && !strings.Contains(s, "\n") {
			return s
		}
	}
	if m := strings.TrimSpace(v.v.Message); m != "" {
		return m
	}
	return fmt.Sprintf("failed expression: %v", strings.TrimSpace(v.v.Expression))
}
