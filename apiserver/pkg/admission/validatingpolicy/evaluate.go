package validatingpolicy

import (
	"context"
	"errors"
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
// audit annotations, as upstream's validator, with upstream's runtime cost
// budgets besides each expression's own limit: the matchConditions share
// RuntimeCostBudgetMatchConditions; the variables, the validations and
// then their messageExpressions share RuntimeCostBudget; the audit
// annotations share another RuntimeCostBudget. Running out of a budget
// ends the evaluation with upstream's error, which the failurePolicy acts
// on (Fail denies with it; Ignore admits).
func evaluate(ctx context.Context, c *compiledPolicy, act *celpolicy.Activation) result {
	fail := c.failurePolicy() != admissionregistrationv1.Ignore
	// outOfBudget is the evaluation's whole result when a budget ran out,
	// as upstream's validator returns the one error decision alone.
	outOfBudget := func(err error) result {
		if !fail {
			return result{}
		}
		return result{failures: []failure{{message: err.Error()}}}
	}
	var res result
	act.Budget = celpolicy.NewBudget(celpolicy.RuntimeCostBudgetMatchConditions)
	for _, mc := range c.matchConditions {
		ok, err := mc.Program.EvalBool(ctx, act)
		if errors.Is(err, celpolicy.ErrOutOfBudget) {
			return outOfBudget(err)
		}
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

	act.Budget = celpolicy.NewBudget(celpolicy.RuntimeCostBudget)
	celpolicy.EvalVariables(ctx, c.variables, act)
	if act.Budget.Spent() {
		return outOfBudget(celpolicy.ErrOutOfBudget)
	}
	passed := make([]bool, len(c.validations))
	evalErrs := make([]error, len(c.validations))
	for i, v := range c.validations {
		ok, err := v.expr.EvalBool(ctx, act)
		if errors.Is(err, celpolicy.ErrOutOfBudget) {
			return outOfBudget(err)
		}
		passed[i], evalErrs[i] = ok, err
	}
	// As upstream, every messageExpression is evaluated after the
	// validations, with what is left of their budget.
	messages := make([]*string, len(c.validations))
	var messagesErr error
	for i, v := range c.validations {
		if v.message == nil {
			continue
		}
		s, _, err := v.message.EvalString(ctx, act)
		if errors.Is(err, celpolicy.ErrOutOfBudget) {
			messagesErr = err
			break
		}
		if err == nil {
			messages[i] = &s
		}
	}
	for i, v := range c.validations {
		switch {
		case evalErrs[i] != nil:
			if fail {
				res.failures = append(res.failures, failure{index: i, message: evalErrs[i].Error()})
			}
		case messagesErr != nil:
			// Upstream's validator: when the messageExpressions ran out
			// of the budget, every validation without an error of its
			// own is an error, passed or not.
			if fail {
				res.failures = append(res.failures, failure{index: i, message: fmt.Sprintf("failed messageExpression: %s", messagesErr)})
			}
		case !passed[i]:
			res.failures = append(res.failures, failure{index: i, message: message(v, messages[i]), reason: reasonOf(v.v)})
		}
	}

	act.Budget = celpolicy.NewBudget(celpolicy.RuntimeCostBudget)
	for _, a := range c.auditAnnotations {
		value, isNull, err := a.value.EvalString(ctx, act)
		switch {
		case errors.Is(err, celpolicy.ErrOutOfBudget):
			return outOfBudget(err)
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

// message is upstream's choice: the messageExpression's result (evaluated
// is nil without one or when it failed) when it is a non-empty single line
// of at most 5 KiB, else message, else the expression itself.
func message(v compiledValidation, evaluated *string) string {
	if evaluated != nil {
		s := strings.TrimSpace(*evaluated)
		if s != "" && len(s) <= celpolicy.MaxMessageSize && !strings.Contains(s, "\n") {
			return s
		}
	}
	if m := strings.TrimSpace(v.v.Message); m != "" {
		return m
	}
	return fmt.Sprintf("failed expression: %v", strings.TrimSpace(v.v.Expression))
}
