package apiextensions

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// celCostLimit bounds the work of one rule on one value, so that a rule
// over a large list cannot stall the server.
const celCostLimit = 1_000_000

// celRule is one compiled x-kubernetes-validations rule.
type celRule struct {
	rule    apiextensionsv1.ValidationRule
	program cel.Program
}

// celRules holds the compiled rules of a schema, keyed by the schema path of
// the node that carries them ("" for the root, then ".p:<name>", ".items"
// and ".additional" steps).
type celRules map[string][]celRule

// celEnv is the environment rules compile in: self is the value of the
// field that carries the rule, with CEL's standard library, optional types
// and the string, list, set and math extensions. Kubernetes' own CEL
// libraries (quantity, url, ip, ...) are not there.
func celEnv() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("self", cel.DynType),
		cel.OptionalTypes(),
		ext.Strings(), ext.Lists(), ext.Sets(), ext.Math(),
	)
}

// compileSchemaRules compiles every rule of the schema rooted at s. A rule
// that does not parse is an error; a rule that needs what the environment
// lacks (a Kubernetes library function, or oldSelf in a transition rule) is
// skipped: it is not evaluated.
func compileSchemaRules(s *apiextensionsv1.JSONSchemaProps, p *field.Path) (celRules, field.ErrorList) {
	env, err := celEnv()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(p, err)}
	}
	rules := celRules{}
	var errs field.ErrorList
	var walk func(n *apiextensionsv1.JSONSchemaProps, key string, p *field.Path)
	walk = func(n *apiextensionsv1.JSONSchemaProps, key string, p *field.Path) {
		for i, r := range n.XValidations {
			rp := p.Child("x-kubernetes-validations").Index(i).Child("rule")
			prg, err := compileRule(env, r.Rule)
			switch {
			case err != nil:
				errs = append(errs, field.Invalid(rp, r.Rule, err.Error()))
			case prg != nil:
				rules[key] = append(rules[key], celRule{rule: r, program: prg})
			}
		}
		for k, child := range n.Properties {
			walk(&child, key+".p:"+k, p.Child("properties").Key(k))
		}
		if n.AdditionalProperties != nil && n.AdditionalProperties.Schema != nil {
			walk(n.AdditionalProperties.Schema, key+".additional", p.Child("additionalProperties"))
		}
		if n.Items != nil && n.Items.Schema != nil {
			walk(n.Items.Schema, key+".items", p.Child("items"))
		}
	}
	walk(s, "", p)
	return rules, errs
}

// compileRule returns the program of a rule; nil without an error when the
// rule needs what the environment lacks.
func compileRule(env *cel.Env, rule string) (cel.Program, error) {
	if strings.TrimSpace(rule) == "" {
		return nil, fmt.Errorf("rule must not be empty")
	}
	parsed, iss := env.Parse(rule)
	if iss.Err() != nil {
		return nil, fmt.Errorf("compilation failed: %v", iss.Err())
	}
	checked, iss := env.Check(parsed)
	if iss.Err() != nil {
		return nil, nil
	}
	prg, err := env.Program(checked, cel.CostLimit(celCostLimit))
	if err != nil {
		return nil, nil
	}
	return prg, nil
}

// validate evaluates the rules on v, the value at field path p of the node
// props (schema key key), and below it.
func (r celRules) validate(v any, props *apiextensionsv1.JSONSchemaProps, key string, p *field.Path) field.ErrorList {
	if v == nil || len(r) == 0 {
		return nil
	}
	var errs field.ErrorList
	for _, rule := range r[key] {
		errs = append(errs, rule.eval(v, p)...)
	}
	switch val := v.(type) {
	case map[string]any:
		for k, child := range val {
			if sub, ok := props.Properties[k]; ok {
				errs = append(errs, r.validate(child, &sub, key+".p:"+k, p.Child(k))...)
			} else if props.AdditionalProperties != nil && props.AdditionalProperties.Schema != nil {
				errs = append(errs, r.validate(child, props.AdditionalProperties.Schema, key+".additional", p.Key(k))...)
			}
		}
	case []any:
		if props.Items != nil && props.Items.Schema != nil {
			for i, item := range val {
				errs = append(errs, r.validate(item, props.Items.Schema, key+".items", p.Index(i))...)
			}
		}
	}
	return errs
}

// eval runs one rule with self = v, as upstream words its failures.
func (c celRule) eval(v any, p *field.Path) field.ErrorList {
	if c.rule.FieldPath != "" {
		for _, part := range strings.Split(strings.TrimPrefix(c.rule.FieldPath, "."), ".") {
			p = p.Child(part)
		}
	}
	out, _, err := c.program.Eval(map[string]any{"self": v})
	if err != nil {
		return field.ErrorList{field.Invalid(p, typeName(v), fmt.Sprintf("rule evaluation error: %v", err))}
	}
	if ok, isBool := out.Value().(bool); !isBool || ok {
		return nil
	}
	msg := c.rule.Message
	if msg == "" {
		msg = "failed rule: " + strings.TrimSpace(c.rule.Rule)
	}
	return field.ErrorList{field.Invalid(p, typeName(v), msg)}
}

// typeName is how upstream shows the value of a failed rule: its JSON type.
func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}
