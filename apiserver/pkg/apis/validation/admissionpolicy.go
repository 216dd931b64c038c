package validation

import (
	"fmt"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/celpolicy"
)

// ValidateValidatingAdmissionPolicyUpdate validates an update of a policy:
// the metadata rules and the policy as on create.
func ValidateValidatingAdmissionPolicyUpdate(o, p *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	return append(apimachineryvalidation.ValidateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateValidatingAdmissionPolicy(o)...)
}

// ValidateValidatingAdmissionPolicyBindingUpdate validates an update of a
// binding: the metadata rules and the binding as on create.
func ValidateValidatingAdmissionPolicyBindingUpdate(o, p *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	return append(apimachineryvalidation.ValidateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateValidatingAdmissionPolicyBinding(o)...)
}

var (
	supportedReasons = sets.New(string(metav1.StatusReasonUnauthorized), string(metav1.StatusReasonForbidden),
		string(metav1.StatusReasonInvalid), string(metav1.StatusReasonRequestEntityTooLarge))
	supportedValidationActions = sets.New(string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn), string(admissionregistrationv1.Audit))
	supportedParamNotFound     = sets.New(string(admissionregistrationv1.AllowAction), string(admissionregistrationv1.DenyAction))
	celIdentifier              = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// Upstream's limits on a policy's lists.
const maxMatchConditions = 64

// ValidateValidatingAdmissionPolicy checks a policy as upstream's
// admissionregistration validation does for v1, compiling every CEL
// expression: one that does not compile is Invalid at its field, with the
// CEL error.
func ValidateValidatingAdmissionPolicy(obj *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	env, err := celpolicy.NewEnv()
	if err != nil {
		return append(allErrs, field.InternalError(field.NewPath("spec"), err))
	}
	return append(allErrs, validatePolicySpec(env, obj.Name, &obj.Spec, field.NewPath("spec"))...)
}

func validatePolicySpec(env *celpolicy.Env, name string, spec *admissionregistrationv1.ValidatingAdmissionPolicySpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.FailurePolicy == nil {
		allErrs = append(allErrs, field.Required(p.Child("failurePolicy"), ""))
	} else if !supportedFailure.Has(string(*spec.FailurePolicy)) {
		allErrs = append(allErrs, field.NotSupported(p.Child("failurePolicy"), *spec.FailurePolicy, sets.List(supportedFailure)))
	}
	if spec.ParamKind != nil {
		allErrs = append(allErrs, validateParamKind(spec.ParamKind, p.Child("paramKind"))...)
	}
	if spec.MatchConstraints == nil {
		allErrs = append(allErrs, field.Required(p.Child("matchConstraints"), ""))
	} else {
		allErrs = append(allErrs, validateMatchResources(spec.MatchConstraints, p.Child("matchConstraints"))...)
		if len(spec.MatchConstraints.ResourceRules) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("matchConstraints", "resourceRules"), ""))
		}
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		allErrs = append(allErrs, field.Required(p.Child("validations"), "validations or auditAnnotations must contain at least one item"))
	}
	allErrs = append(allErrs, validateMatchConditions(env, spec.MatchConditions, p.Child("matchConditions"))...)
	allErrs = append(allErrs, validateVariables(env, spec.Variables, p.Child("variables"))...)
	for i := range spec.Validations {
		allErrs = append(allErrs, validateValidation(env, &spec.Validations[i], p.Child("validations").Index(i))...)
	}
	allErrs = append(allErrs, validateAuditAnnotations(env, name, spec.AuditAnnotations, p.Child("auditAnnotations"))...)
	return allErrs
}

func validateParamKind(pk *admissionregistrationv1.ParamKind, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if pk.APIVersion == "" {
		allErrs = append(allErrs, field.Required(p.Child("apiVersion"), ""))
	} else if gv, err := schema.ParseGroupVersion(pk.APIVersion); err != nil {
		allErrs = append(allErrs, field.Invalid(p.Child("apiVersion"), pk.APIVersion, err.Error()))
	} else if gv.Group != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(gv.Group) {
			allErrs = append(allErrs, field.Invalid(p.Child("apiVersion"), gv.Group, msg))
		}
	}
	if pk.Kind == "" {
		allErrs = append(allErrs, field.Required(p.Child("kind"), ""))
	} else if errs := utilvalidation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(errs) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(errs, ",")))
	}
	return allErrs
}

// validateMatchResources checks matchConstraints or a binding's
// matchResources.
func validateMatchResources(m *admissionregistrationv1.MatchResources, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if m.MatchPolicy == nil {
		allErrs = append(allErrs, field.Required(p.Child("matchPolicy"), ""))
	} else if !supportedMatch.Has(string(*m.MatchPolicy)) {
		allErrs = append(allErrs, field.NotSupported(p.Child("matchPolicy"), *m.MatchPolicy, sets.List(supportedMatch)))
	}
	opts := metav1validation.LabelSelectorValidationOptions{}
	if m.NamespaceSelector == nil {
		allErrs = append(allErrs, field.Required(p.Child("namespaceSelector"), ""))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(m.NamespaceSelector, opts, p.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector == nil {
		allErrs = append(allErrs, field.Required(p.Child("objectSelector"), ""))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(m.ObjectSelector, opts, p.Child("objectSelector"))...)
	}
	for i := range m.ResourceRules {
		allErrs = append(allErrs, validateNamedRule(&m.ResourceRules[i], p.Child("resourceRules").Index(i))...)
	}
	for i := range m.ExcludeResourceRules {
		allErrs = append(allErrs, validateNamedRule(&m.ExcludeResourceRules[i], p.Child("excludeResourceRules").Index(i))...)
	}
	return allErrs
}

func validateNamedRule(r *admissionregistrationv1.NamedRuleWithOperations, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, n := range r.ResourceNames {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(n, false) {
			allErrs = append(allErrs, field.Invalid(p.Child("resourceNames").Index(i), n, msg))
		}
		if names.Has(n) {
			allErrs = append(allErrs, field.Duplicate(p.Child("resourceNames").Index(i), n))
		}
		names.Insert(n)
	}
	if len(r.Operations) == 0 {
		allErrs = append(allErrs, field.Required(p.Child("operations"), ""))
	}
	if len(r.Operations) > 1 {
		for i, op := range r.Operations {
			if op == admissionregistrationv1.OperationAll {
				allErrs = append(allErrs, field.Invalid(p.Child("operations").Index(i), op, "if '*' is present, must not specify other operations"))
			}
		}
	}
	for i, op := range r.Operations {
		if !supportedOperations.Has(string(op)) {
			allErrs = append(allErrs, field.NotSupported(p.Child("operations").Index(i), op, sets.List(supportedOperations)))
		}
	}
	allErrs = append(allErrs, validateStarList(r.APIGroups, false, p.Child("apiGroups"))...)
	allErrs = append(allErrs, validateStarList(r.APIVersions, true, p.Child("apiVersions"))...)
	allErrs = append(allErrs, validateRuleResources(r.Resources, p.Child("resources"))...)
	if r.Scope != nil && !supportedScopes.Has(string(*r.Scope)) {
		allErrs = append(allErrs, field.NotSupported(p.Child("scope"), *r.Scope, sets.List(supportedScopes)))
	}
	return allErrs
}

// validateStarList: required, and "*" alone; versions may not be empty.
func validateStarList(list []string, versions bool, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(list) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	what := "API groups"
	if versions {
		what = "API versions"
	}
	for i, v := range list {
		if v == "*" && len(list) > 1 {
			allErrs = append(allErrs, field.Invalid(p.Index(i), v, "if '*' is present, must not specify other "+what))
		}
		if versions && v == "" {
			allErrs = append(allErrs, field.Required(p.Index(i), ""))
		}
	}
	return allErrs
}

// validateRuleResources is upstream's validateResources: "*" and "*/*"
// exclude the rest; "x/*" excludes other subresources of x.
func validateRuleResources(resources []string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(resources) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	withSub := sets.New[string]()
	resAll := false
	for i, r := range resources {
		if r == "" {
			allErrs = append(allErrs, field.Required(p.Index(i), ""))
			continue
		}
		if r == "*/*" || r == "*" {
			resAll = true
		}
		parts := strings.SplitN(r, "/", 2)
		if len(parts) == 2 && parts[1] == "*" {
			withSub.Insert(parts[0])
		}
	}
	for i, r := range resources {
		if resAll && r != "*" && r != "*/*" && len(resources) > 1 {
			allErrs = append(allErrs, field.Invalid(p.Index(i), r, "if '*/*' is present, must not specify other resources"))
			continue
		}
		parts := strings.SplitN(r, "/", 2)
		if len(parts) == 2 && parts[1] != "*" && withSub.Has(parts[0]) {
			allErrs = append(allErrs, field.Invalid(p.Index(i), r, fmt.Sprintf("if '%s/*' is present, must not specify %s", parts[0], r)))
		}
	}
	return allErrs
}

func validateMatchConditions(env *celpolicy.Env, conds []admissionregistrationv1.MatchCondition, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(conds) > maxMatchConditions {
		allErrs = append(allErrs, field.TooMany(p, len(conds), maxMatchConditions))
	}
	names := sets.New[string]()
	for i, c := range conds {
		cp := p.Index(i)
		if c.Name == "" {
			allErrs = append(allErrs, field.Required(cp.Child("name"), ""))
		} else {
			for _, msg := range utilvalidation.IsQualifiedName(c.Name) {
				allErrs = append(allErrs, field.Invalid(cp.Child("name"), c.Name, msg))
			}
			if names.Has(c.Name) {
				allErrs = append(allErrs, field.Duplicate(cp.Child("name"), c.Name))
			}
			names.Insert(c.Name)
		}
		allErrs = append(allErrs, compileField(env, c.Expression, celpolicy.MatchCondition, cp.Child("expression"))...)
	}
	return allErrs
}

func validateVariables(env *celpolicy.Env, vars []admissionregistrationv1.Variable, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, v := range vars {
		vp := p.Index(i)
		if v.Name == "" {
			allErrs = append(allErrs, field.Required(vp.Child("name"), "name is not specified"))
		} else if !celIdentifier.MatchString(v.Name) {
			allErrs = append(allErrs, field.Invalid(vp.Child("name"), v.Name, "name is not a valid CEL identifier"))
		}
		allErrs = append(allErrs, compileField(env, v.Expression, celpolicy.Variable, vp.Child("expression"))...)
	}
	return allErrs
}

func validateValidation(env *celpolicy.Env, v *admissionregistrationv1.Validation, p *field.Path) field.ErrorList {
	allErrs := compileField(env, v.Expression, celpolicy.Validation, p.Child("expression"))
	if strings.ContainsAny(v.Message, "\n") {
		allErrs = append(allErrs, field.Invalid(p.Child("message"), v.Message, "message must not contain line breaks"))
	} else if len(v.Message) > 0 && strings.TrimSpace(v.Message) == "" {
		allErrs = append(allErrs, field.Invalid(p.Child("message"), v.Message, "message must be non-empty if specified"))
	}
	if v.MessageExpression != "" {
		allErrs = append(allErrs, compileField(env, v.MessageExpression, celpolicy.Message, p.Child("messageExpression"))...)
	}
	if v.Reason != nil && !supportedReasons.Has(string(*v.Reason)) {
		allErrs = append(allErrs, field.NotSupported(p.Child("reason"), *v.Reason, sets.List(supportedReasons)))
	}
	return allErrs
}

func validateAuditAnnotations(env *celpolicy.Env, policyName string, anns []admissionregistrationv1.AuditAnnotation, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	keys := sets.New[string]()
	for i, a := range anns {
		ap := p.Index(i)
		if a.Key == "" {
			allErrs = append(allErrs, field.Required(ap.Child("key"), ""))
		} else {
			for _, msg := range utilvalidation.IsQualifiedName(policyName + "/" + a.Key) {
				allErrs = append(allErrs, field.Invalid(ap.Child("key"), a.Key, msg))
			}
			if keys.Has(a.Key) {
				allErrs = append(allErrs, field.Duplicate(ap.Child("key"), a.Key))
			}
			keys.Insert(a.Key)
		}
		if a.ValueExpression == "" {
			allErrs = append(allErrs, field.Required(ap.Child("valueExpression"), "valueExpression is not specified"))
			continue
		}
		allErrs = append(allErrs, compileField(env, a.ValueExpression, celpolicy.AuditAnnotation, ap.Child("valueExpression"))...)
	}
	return allErrs
}

// compileField requires expr and compiles it: upstream's wording for a
// compilation failure is the CEL error at the field.
func compileField(env *celpolicy.Env, expr string, kind celpolicy.Kind, p *field.Path) field.ErrorList {
	if strings.TrimSpace(expr) == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if _, err := env.Compile(expr, kind); err != nil {
		return field.ErrorList{field.Invalid(p, expr, err.Error())}
	}
	return nil
}

// ValidateValidatingAdmissionPolicyBinding checks a binding as upstream
// does for v1.
func ValidateValidatingAdmissionPolicyBinding(obj *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	p := field.NewPath("spec")
	spec := &obj.Spec
	if spec.PolicyName == "" {
		allErrs = append(allErrs, field.Required(p.Child("policyName"), ""))
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.PolicyName, false) {
			allErrs = append(allErrs, field.Invalid(p.Child("policyName"), spec.PolicyName, msg))
		}
	}
	if spec.ParamRef != nil {
		allErrs = append(allErrs, validateParamRef(spec.ParamRef, p.Child("paramRef"))...)
	}
	if spec.MatchResources != nil {
		allErrs = append(allErrs, validateMatchResources(spec.MatchResources, p.Child("matchResouces"))...)
	}
	allErrs = append(allErrs, validateValidationActions(spec.ValidationActions, p.Child("validationActions"))...)
	return allErrs
}

func validateParamRef(r *admissionregistrationv1.ParamRef, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if r.ParameterNotFoundAction == nil || *r.ParameterNotFoundAction == "" {
		allErrs = append(allErrs, field.Required(p.Child("parameterNotFoundAction"), ""))
	} else if !supportedParamNotFound.Has(string(*r.ParameterNotFoundAction)) {
		allErrs = append(allErrs, field.NotSupported(p.Child("parameterNotFoundAction"), *r.ParameterNotFoundAction, sets.List(supportedParamNotFound)))
	}
	switch {
	case r.Name != "" && r.Selector != nil:
		allErrs = append(allErrs, field.Forbidden(p.Child("name"), `name and selector are mutually exclusive`))
	case r.Name == "" && r.Selector == nil:
		allErrs = append(allErrs, field.Required(p, `one of name or selector must be specified`))
	case r.Name != "":
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(r.Name, false) {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), r.Name, msg))
		}
	default:
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(r.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	if r.Namespace != "" {
		for _, msg := range apimachineryvalidation.ValidateNamespaceName(r.Namespace, false) {
			allErrs = append(allErrs, field.Invalid(p.Child("namespace"), r.Namespace, msg))
		}
	}
	return allErrs
}

func validateValidationActions(actions []admissionregistrationv1.ValidationAction, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(actions) == 0 {
		return field.ErrorList{field.Required(p, "at least one validation action is required")}
	}
	seen := sets.New[admissionregistrationv1.ValidationAction]()
	for i, a := range actions {
		if !supportedValidationActions.Has(string(a)) {
			allErrs = append(allErrs, field.NotSupported(p.Index(i), a, sets.List(supportedValidationActions)))
		}
		if seen.Has(a) {
			allErrs = append(allErrs, field.Duplicate(p.Index(i), a))
		}
		seen.Insert(a)
	}
	if seen.Has(admissionregistrationv1.Deny) && seen.Has(admissionregistrationv1.Warn) {
		allErrs = append(allErrs, field.Invalid(p, actions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	return allErrs
}
