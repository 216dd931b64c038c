package apiextensions

import (
	"context"
	"fmt"
	"math"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// celRules are the compiled x-kubernetes-validations rules of one schema:
// upstream's validator (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel),
// which types self and oldSelf from the structural schema, offers the
// Kubernetes CEL libraries of k8s.io/apiserver/pkg/cel/library (as the base
// environment of the Kubernetes version this module's libraries are) and
// bounds each evaluation by upstream's per-call and per-object cost limits.
// nil when the schema has no rules.
type celRules struct {
	structural *structuralschema.Structural
	validator  *cel.Validator
}

// celEnvSet is upstream's base CEL environment, built once: building it
// costs tens of milliseconds.
var celEnvSet = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion(), true)

// compileSchemaRules compiles every rule of the schema rooted at s as
// upstream's CRD validation does, with its errors: a rule that does not
// compile, a messageExpression that does not, optionalOldSelf on a rule
// without oldSelf, and a rule whose estimated cost (times the number of
// values it may run on) exceeds upstream's per-expression limit, or rules
// whose total exceeds the limit of one schema. A schema that is not
// structural compiles no rules: validateStructural reports it.
func compileSchemaRules(s *apiextensionsv1.JSONSchemaProps, p *field.Path) (*celRules, field.ErrorList) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(s, internal, nil); err != nil {
		return nil, field.ErrorList{field.InternalError(p, err)}
	}
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, nil
	}
	celContext := crdvalidation.RootCELContext(internal)
	errs := compileNode(internal, p, celContext)
	if total := celContext.TotalCost; total != nil && total.Total > crdvalidation.StaticEstimatedCRDCostLimit {
		for _, expensive := range total.MostExpensive {
			errs = append(errs, field.Forbidden(expensive.Path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"))
		}
		errs = append(errs, field.Forbidden(p, costErrorMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", total.Total, crdvalidation.StaticEstimatedCRDCostLimit)))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	v := cel.NewValidator(structural, true, celconfig.PerCallLimit)
	if v == nil {
		return nil, nil
	}
	return &celRules{structural: structural, validator: v}, nil
}

// compileNode compiles the rules of the node s at p and of the nodes below
// it, as upstream's ValidateCustomResourceDefinitionOpenAPISchema does.
func compileNode(s *apiextensions.JSONSchemaProps, p *field.Path, celContext *crdvalidation.CELSchemaContext) field.ErrorList {
	var errs field.ErrorList
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		errs = append(errs, compileNode(s.AdditionalProperties.Schema, p.Child("additionalProperties"), celContext.ChildAdditionalPropertiesContext(s.AdditionalProperties.Schema))...)
	}
	for name, child := range s.Properties {
		errs = append(errs, compileNode(&child, p.Child("properties").Key(name), celContext.ChildPropertyContext(&child, name))...)
	}
	if s.Items != nil && s.Items.Schema != nil {
		errs = append(errs, compileNode(s.Items.Schema, p.Child("items"), celContext.ChildItemsContext(s.Items.Schema))...)
	}
	if len(s.XValidations) == 0 {
		return errs
	}
	for i, r := range s.XValidations {
		if strings.TrimSpace(r.Rule) == "" {
			errs = append(errs, field.Required(p.Child("x-kubernetes-validations").Index(i).Child("rule"), "rule is not specified"))
		}
	}
	if len(errs) > 0 {
		// As upstream: rules are compiled only where the schema is sound.
		return errs
	}
	typeInfo, err := celContext.TypeInfo()
	if err != nil || typeInfo == nil {
		return append(errs, field.InternalError(p.Child("x-kubernetes-validations"), fmt.Errorf("internal error: failed to construct type information for x-kubernetes-validations rules: %v", err)))
	}
	results, err := cel.Compile(typeInfo.Schema, typeInfo.DeclType, celconfig.PerCallLimit, celEnvSet, cel.NewExpressionsEnvLoader())
	if err != nil {
		return append(errs, field.InternalError(p.Child("x-kubernetes-validations"), err))
	}
	for i, cr := range results {
		rp := p.Child("x-kubernetes-validations").Index(i)
		cost := expressionCost(cr, celContext)
		if cost > crdvalidation.StaticEstimatedCostLimit {
			errs = append(errs, field.Forbidden(rp.Child("rule"), costErrorMessage("estimated rule cost", cost, crdvalidation.StaticEstimatedCostLimit)))
		}
		if celContext.TotalCost != nil {
			celContext.TotalCost.ObserveExpressionCost(rp.Child("rule"), cost)
		}
		if cr.Error != nil {
			if cr.Error.Type == apiservercel.ErrorTypeRequired {
				errs = append(errs, field.Required(rp.Child("rule"), cr.Error.Detail))
			} else {
				errs = append(errs, field.Invalid(rp.Child("rule"), s.XValidations[i].Rule, cr.Error.Detail))
			}
		}
		if cr.MessageExpressionError != nil {
			errs = append(errs, field.Invalid(rp.Child("messageExpression"), s.XValidations[i].MessageExpression, cr.MessageExpressionError.Detail))
		} else if cr.MessageExpression != nil {
			if cr.MessageExpressionMaxCost > crdvalidation.StaticEstimatedCostLimit {
				errs = append(errs, field.Forbidden(rp.Child("messageExpression"), costErrorMessage("estimated messageExpression cost", cr.MessageExpressionMaxCost, crdvalidation.StaticEstimatedCostLimit)))
			}
			if celContext.TotalCost != nil {
				celContext.TotalCost.ObserveExpressionCost(rp.Child("messageExpression"), cr.MessageExpressionMaxCost)
			}
		}
		if !cr.UsesOldSelf && s.XValidations[i].OptionalOldSelf != nil {
			errs = append(errs, field.Invalid(rp.Child("optionalOldSelf"), *s.XValidations[i].OptionalOldSelf, "may not be set if oldSelf is not used in rule"))
		}
	}
	return errs
}

// expressionCost is a rule's estimated cost times the number of values it
// may run on: the product of the maxItems and maxProperties above it, or
// the compiler's bound from the request size when one of them is unset.
func expressionCost(cr cel.CompilationResult, celContext *crdvalidation.CELSchemaContext) uint64 {
	cardinality := cr.MaxCardinality
	if celContext.MaxCardinality != nil {
		cardinality = *celContext.MaxCardinality
	}
	if cr.MaxCost == 0 {
		return 0
	}
	if math.MaxUint64/cr.MaxCost < cardinality {
		return math.MaxUint64
	}
	return cr.MaxCost * cardinality
}

// costErrorMessage is upstream's message for an estimated cost over its
// limit.
func costErrorMessage(costName string, cost, limit uint64) string {
	exceed := float64(cost) / float64(limit)
	var factor string
	switch {
	case exceed > 100.0:
		factor = "more than 100x"
	case exceed < 1.5:
		factor = fmt.Sprintf("%fx", exceed)
	default:
		factor = fmt.Sprintf("%.1fx", exceed)
	}
	return fmt.Sprintf("%s exceeds budget by factor of %s (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", costName, factor)
}

// validate evaluates the rules on obj; old is the object before an update
// (nil on create), for transition rules. The evaluation of one object is
// bounded by upstream's RuntimeCELCostBudget.
func (r *celRules) validate(obj, old map[string]any) field.ErrorList {
	if r == nil || obj == nil {
		return nil
	}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	errs, _ := r.validator.Validate(context.Background(), nil, r.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return errs
}
