package validatingpolicy

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"skiff.dev/apiserver/pkg/celpolicy"
)

// compiledPolicy is a policy with its expressions compiled, kept for as
// long as the policy's generation does not change.
type compiledPolicy struct {
	policy *admissionregistrationv1.ValidatingAdmissionPolicy
	// err is a configuration error: an expression that does not compile
	// (the API refuses those, so only a policy stored by other means has it).
	err              error
	matchConditions  []celpolicy.NamedProgram
	variables        []celpolicy.NamedProgram
	validations      []compiledValidation
	auditAnnotations []compiledAnnotation
}

type compiledValidation struct {
	v       admissionregistrationv1.Validation
	expr    *celpolicy.Program
	message *celpolicy.Program // nil without messageExpression
}

type compiledAnnotation struct {
	key   string
	value *celpolicy.Program
}

func compilePolicy(env *celpolicy.Env, p *admissionregistrationv1.ValidatingAdmissionPolicy) *compiledPolicy {
	c := &compiledPolicy{policy: p}
	c.err = c.compile(env, &p.Spec)
	return c
}

func (c *compiledPolicy) compile(env *celpolicy.Env, spec *admissionregistrationv1.ValidatingAdmissionPolicySpec) error {
	for i, mc := range spec.MatchConditions {
		prg, err := env.Compile(mc.Expression, celpolicy.MatchCondition)
		if err != nil {
			return fmt.Errorf("spec.matchConditions[%d].expression: %v", i, err)
		}
		c.matchConditions = append(c.matchConditions, celpolicy.NamedProgram{Name: mc.Name, Program: prg})
	}
	for i, v := range spec.Variables {
		prg, err := env.Compile(v.Expression, celpolicy.Variable)
		if err != nil {
			return fmt.Errorf("spec.variables[%d].expression: %v", i, err)
		}
		c.variables = append(c.variables, celpolicy.NamedProgram{Name: v.Name, Program: prg})
	}
	for i, v := range spec.Validations {
		cv := compiledValidation{v: v}
		var err error
		if cv.expr, err = env.Compile(v.Expression, celpolicy.Validation); err != nil {
			return fmt.Errorf("spec.validations[%d].expression: %v", i, err)
		}
		if v.MessageExpression != "" {
			if cv.message, err = env.Compile(v.MessageExpression, celpolicy.Message); err != nil {
				return fmt.Errorf("spec.validations[%d].messageExpression: %v", i, err)
			}
		}
		c.validations = append(c.validations, cv)
	}
	for i, a := range spec.AuditAnnotations {
		prg, err := env.Compile(a.ValueExpression, celpolicy.AuditAnnotation)
		if err != nil {
			return fmt.Errorf("spec.auditAnnotations[%d].valueExpression: %v", i, err)
		}
		c.auditAnnotations = append(c.auditAnnotations, compiledAnnotation{key: a.Key, value: prg})
	}
	return nil
}

func (c *compiledPolicy) failurePolicy() admissionregistrationv1.FailurePolicyType {
	if c.policy.Spec.FailurePolicy == nil {
		return admissionregistrationv1.Fail
	}
	return *c.policy.Spec.FailurePolicy
}
