package apiextensions

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/cel/library"
)

// celCostLimit bounds the work of one rule on one value, so that a rule
// over a large list cannot stall the server.
const celCostLimit = 1_000_000

// celRule is one compiled x-kubernetes-validations rule.
type celRule struct {
	rule    apiextensionsv1.ValidationRule
	program cel.Program
	// message is the compiled messageExpression, if any.
	message cel.Program
	// transition: the rule reads oldSelf, so it runs on updates only, where
	// the value has an old one (unless optionalOldSelf, which makes oldSelf
	// an optional that is none on create).
	transition bool
}

// celRules holds the compiled rules of a schema, keyed by the schema path of
// the node that carries them ("" for the root, then ".p:<name>", ".items"
// and ".additional" steps).
type celRules map[string][]celRule

// celEnv is the environment rules compile in: self is the value of the
// field that carries the rule and oldSelf its value before an update (an
// optional with optionalOldSelf), with CEL's standard library, optional
// types, the string, list, set and math extensions, and Kubernetes' own
// libraries (quantity, url, ip, cidr, regex, lists, format).
func celEnv(optionalOld bool) (*cel.Env, error) {
	old := cel.DynType
	if optionalOld {
		old = cel.OptionalType(cel.DynType)
	}
	return cel.NewEnv(
		cel.Variable("self", cel.DynType),
		cel.Variable("oldSelf", old),
		cel.OptionalTypes(),
		ext.Strings(), ext.Lists(), ext.Sets(), ext.Math(),
		library.Libraries(),
	)
}

// compileSchemaRules compiles every rule of the schema rooted at s. A rule
// that does not parse is an error; a rule that does not type-check (a
// function no library has) is skipped: it is not evaluated.
func compileSchemaRules(s *apiextensionsv1.JSONSchemaProps, p *field.Path) (celRules, field.ErrorList) {
	env, err := celEnv(false)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(p, err)}
	}
	optEnv, err := celEnv(true)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(p, err)}
	}
	rules := celRules{}
	var errs field.ErrorList
	var walk func(n *apiextensionsv1.JSONSchemaProps, key string, p *field.Path)
	walk = func(n *apiextensionsv1.JSONSchemaProps, key string, p *field.Path) {
		for i, r := range n.XValidations {
			rp := p.Child("x-kubernetes-validations").Index(i)
			e := env
			if r.OptionalOldSelf != nil && *r.OptionalOldSelf {
				e = optEnv
			}
			c, err := compileRule(e, r)
			switch {
			case err != nil:
				errs = append(errs, field.Invalid(rp.Child(err.field), err.value, err.msg))
			case c != nil:
				if r.OptionalOldSelf != nil && *r.OptionalOldSelf && !c.transition {
					errs = append(errs, field.Invalid(rp.Child("optionalOldSelf"), *r.OptionalOldSelf, "may not be set if oldSelf is not used in rule"))
					continue
				}
				rules[key] = append(rules[key], *c)
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

// ruleError names the part of a rule that does not compile.
type ruleError struct {
	field string
	value string
	msg   string
}

// compileRule compiles a rule and its messageExpression; nil without an
// error when the rule needs what the environment lacks. A messageExpression
// that parses but does not check is dropped (the message is used).
func compileRule(env *cel.Env, r apiextensionsv1.ValidationRule) (*celRule, *ruleError) {
	if strings.TrimSpace(r.Rule) == "" {
		return nil, &ruleError{"rule", r.Rule, "rule must not be empty"}
	}
	prg, checked, err := compileExpr(env, r.Rule)
	if err != nil {
		return nil, &ruleError{"rule", r.Rule, "compilation failed: " + err.Error()}
	}
	if prg == nil {
		return nil, nil
	}
	out := &celRule{rule: r, program: prg, transition: readsOldSelf(checked)}
	if strings.TrimSpace(r.MessageExpression) != "" {
		msg, _, err := compileExpr(env, r.MessageExpression)
		if err != nil {
			return nil, &ruleError{"messageExpression", r.MessageExpression, "messageExpression compilation failed: " + err.Error()}
		}
		out.message = msg
	}
	return out, nil
}

// compileExpr parses and checks one expression: an error when it does not
// parse, no program when it does not check in env.
func compileExpr(env *cel.Env, expr string) (cel.Program, *cel.Ast, error) {
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return nil, nil, iss.Err()
	}
	checked, iss := env.Check(parsed)
	if iss.Err() != nil {
		return nil, nil, nil
	}
	prg, err := env.Program(checked, cel.CostLimit(celCostLimit), cel.CostTracking(library.CostEstimator{}))
	if err != nil {
		return nil, nil, nil
	}
	return prg, checked, nil
}

// readsOldSelf reports whether a checked expression refers to oldSelf.
func readsOldSelf(checked *cel.Ast) bool {
	for _, ref := range checked.NativeRep().ReferenceMap() {
		if ref.Name == "oldSelf" {
			return true
		}
	}
	return false
}

// validate evaluates the rules on v, the value at field path p of the node
// props (schema key key), and below it. old is the value there before an
// update, when the update has one that correlates (hasOld): an object's
// property or a map's entry by key, a listType=map item by its keys.
func (r celRules) validate(v, old any, hasOld bool, props *apiextensionsv1.JSONSchemaProps, key string, p *field.Path) field.ErrorList {
	if v == nil || len(r) == 0 {
		return nil
	}
	var errs field.ErrorList
	for _, rule := range r[key] {
		errs = append(errs, rule.eval(v, old, hasOld, p)...)
	}
	switch val := v.(type) {
	case map[string]any:
		oldMap, _ := old.(map[string]any)
		for k, child := range val {
			oldChild, found := oldMap[k]
			if sub, ok := props.Properties[k]; ok {
				errs = append(errs, r.validate(child, oldChild, hasOld && found, &sub, key+".p:"+k, p.Child(k))...)
			} else if props.AdditionalProperties != nil && props.AdditionalProperties.Schema != nil {
				errs = append(errs, r.validate(child, oldChild, hasOld && found, props.AdditionalProperties.Schema, key+".additional", p.Key(k))...)
			}
		}
	case []any:
		if props.Items != nil && props.Items.Schema != nil {
			oldItems := correlatedItems(old, hasOld, props)
			for i, item := range val {
				oldItem, found := oldItems[mapListKey(item, props.XListMapKeys)]
				errs = append(errs, r.validate(item, oldItem, found, props.Items.Schema, key+".items", p.Index(i))...)
			}
		}
	}
	return errs
}

// correlatedItems indexes the old items of a listType=map list by their
// keys; items of other lists have no old value, as upstream's.
func correlatedItems(old any, hasOld bool, props *apiextensionsv1.JSONSchemaProps) map[string]any {
	list, ok := old.([]any)
	if !hasOld || !ok || props.XListType == nil || *props.XListType != "map" || len(props.XListMapKeys) == 0 {
		return nil
	}
	out := make(map[string]any, len(list))
	for _, item := range list {
		out[mapListKey(item, props.XListMapKeys)] = item
	}
	return out
}

// mapListKey is the identity of a listType=map item: its key fields' values.
func mapListKey(item any, keys []string) string {
	m, _ := item.(map[string]any)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%v;", k, m[k])
	}
	return b.String()
}

// eval runs one rule with self = v (and oldSelf = old), as upstream words
// its failures.
func (c celRule) eval(v, old any, hasOld bool, p *field.Path) field.ErrorList {
	vars := map[string]any{"self": v}
	switch {
	case c.transition && c.rule.OptionalOldSelf != nil && *c.rule.OptionalOldSelf:
		if hasOld {
			vars["oldSelf"] = types.OptionalOf(types.DefaultTypeAdapter.NativeToValue(old))
		} else {
			vars["oldSelf"] = types.OptionalNone
		}
	case c.transition:
		if !hasOld {
			return nil
		}
		vars["oldSelf"] = old
	}
	if c.rule.FieldPath != "" {
		for _, part := range strings.Split(strings.TrimPrefix(c.rule.FieldPath, "."), ".") {
			p = p.Child(part)
		}
	}
	out, _, err := c.program.Eval(vars)
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
	if c.message != nil {
		// As upstream: a messageExpression that fails, or gives an empty
		// or multi-line string, falls back to the message.
		if m, _, err := c.message.Eval(vars); err == nil {
			if s, ok := m.Value().(string); ok && strings.TrimSpace(s) != "" && !strings.ContainsAny(s, "\r\n") {
				msg = s
			}
		}
	}
	return field.ErrorList{fieldError(p, typeName(v), msg, c.rule.Reason)}
}

// fieldError is the error of a failed rule, of the rule's reason.
func fieldError(p *field.Path, value any, msg string, reason *apiextensionsv1.FieldValueErrorReason) *field.Error {
	if reason == nil {
		return field.Invalid(p, value, msg)
	}
	switch *reason {
	case apiextensionsv1.FieldValueForbidden:
		return field.Forbidden(p, msg)
	case apiextensionsv1.FieldValueRequired:
		return field.Required(p, msg)
	case apiextensionsv1.FieldValueDuplicate:
		return field.Duplicate(p, value)
	}
	return field.Invalid(p, value, msg)
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
