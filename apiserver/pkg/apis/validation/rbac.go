package validation

import (
	rbacv1 "k8s.io/api/rbac/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// rbacNameRequirements is the minimal name rule of roles and bindings: a
// valid path segment.
func rbacNameRequirements(name string, prefix bool) []string {
	return path.IsValidPathSegmentName(name)
}

// ValidateRole validates a Role, on create and (with ValidateRoleUpdate) on update.
func ValidateRole(role *rbacv1.Role) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&role.ObjectMeta, true, rbacNameRequirements, metadataPath)
	for i, rule := range role.Rules {
		allErrs = append(allErrs, validatePolicyRule(rule, true, field.NewPath("rules").Index(i))...)
	}
	return allErrs
}

// ValidateRoleUpdate validates an update of a Role.
func ValidateRoleUpdate(role, oldRole *rbacv1.Role) field.ErrorList {
	allErrs := ValidateRole(role)
	return append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&role.ObjectMeta, &oldRole.ObjectMeta, metadataPath)...)
}

// ValidateClusterRole validates a ClusterRole on create. Aggregated roles'
// rules are filled in by a controller; their aggregation selectors are
// validated here.
func ValidateClusterRole(role *rbacv1.ClusterRole) field.ErrorList {
	return validateClusterRole(role, false)
}

func validateClusterRole(role *rbacv1.ClusterRole, allowInvalidLabelValue bool) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&role.ObjectMeta, false, rbacNameRequirements, metadataPath)
	for i, rule := range role.Rules {
		allErrs = append(allErrs, validatePolicyRule(rule, false, field.NewPath("rules").Index(i))...)
	}
	if role.AggregationRule != nil {
		selectorsPath := field.NewPath("aggregationRule", "clusterRoleSelectors")
		if len(role.AggregationRule.ClusterRoleSelectors) == 0 {
			allErrs = append(allErrs, field.Required(selectorsPath, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
		for i := range role.AggregationRule.ClusterRoleSelectors {
			selector := &role.AggregationRule.ClusterRoleSelectors[i]
			allErrs = append(allErrs, metav1validation.ValidateLabelSelector(selector, opts, selectorsPath.Index(i))...)
			if _, err := metav1.LabelSelectorAsSelector(selector); err != nil {
				allErrs = append(allErrs, field.Invalid(selectorsPath.Index(i), selector, "invalid label selector."))
			}
		}
	}
	return allErrs
}

// ValidateClusterRoleUpdate validates an update of a ClusterRole. Invalid
// label values already stored in aggregation selectors stay acceptable.
func ValidateClusterRoleUpdate(role, oldRole *rbacv1.ClusterRole) field.ErrorList {
	allowInvalid := false
	if oldRole.AggregationRule != nil {
		for i := range oldRole.AggregationRule.ClusterRoleSelectors {
			if metav1validation.LabelSelectorHasInvalidLabelValue(&oldRole.AggregationRule.ClusterRoleSelectors[i]) {
				allowInvalid = true
			}
		}
	}
	allErrs := validateClusterRole(role, allowInvalid)
	return append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&role.ObjectMeta, &oldRole.ObjectMeta, metadataPath)...)
}

func validatePolicyRule(rule rbacv1.PolicyRule, isNamespaced bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(rule.Verbs) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("verbs"), "verbs must contain at least one value"))
	}
	if len(rule.NonResourceURLs) > 0 {
		if isNamespaced {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return allErrs
	}
	if len(rule.APIGroups) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("resources"), "resource rules must supply at least one resource"))
	}
	return allErrs
}

// ValidateRoleBinding validates a RoleBinding on create.
func ValidateRoleBinding(rb *rbacv1.RoleBinding) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&rb.ObjectMeta, true, rbacNameRequirements, metadataPath)
	allErrs = append(allErrs, validateRoleRef(rb.RoleRef, []string{"Role", "ClusterRole"})...)
	for i, s := range rb.Subjects {
		allErrs = append(allErrs, validateRoleBindingSubject(s, true, field.NewPath("subjects").Index(i))...)
	}
	return allErrs
}

// ValidateRoleBindingUpdate validates an update of a RoleBinding; roleRef is
// immutable.
func ValidateRoleBindingUpdate(rb, oldRB *rbacv1.RoleBinding) field.ErrorList {
	allErrs := ValidateRoleBinding(rb)
	allErrs = append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&rb.ObjectMeta, &oldRB.ObjectMeta, metadataPath)...)
	if oldRB.RoleRef != rb.RoleRef {
		allErrs = append(allErrs, field.Invalid(field.NewPath("roleRef"), rb.RoleRef, "cannot change roleRef"))
	}
	return allErrs
}

// ValidateClusterRoleBinding validates a ClusterRoleBinding on create.
func ValidateClusterRoleBinding(crb *rbacv1.ClusterRoleBinding) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&crb.ObjectMeta, false, rbacNameRequirements, metadataPath)
	allErrs = append(allErrs, validateRoleRef(crb.RoleRef, []string{"ClusterRole"})...)
	for i, s := range crb.Subjects {
		allErrs = append(allErrs, validateRoleBindingSubject(s, false, field.NewPath("subjects").Index(i))...)
	}
	return allErrs
}

// ValidateClusterRoleBindingUpdate validates an update of a
// ClusterRoleBinding; roleRef is immutable.
func ValidateClusterRoleBindingUpdate(crb, oldCRB *rbacv1.ClusterRoleBinding) field.ErrorList {
	allErrs := ValidateClusterRoleBinding(crb)
	allErrs = append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&crb.ObjectMeta, &oldCRB.ObjectMeta, metadataPath)...)
	if oldCRB.RoleRef != crb.RoleRef {
		allErrs = append(allErrs, field.Invalid(field.NewPath("roleRef"), crb.RoleRef, "cannot change roleRef"))
	}
	return allErrs
}

func validateRoleRef(ref rbacv1.RoleRef, kinds []string) field.ErrorList {
	var allErrs field.ErrorList
	refPath := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		allErrs = append(allErrs, field.NotSupported(refPath.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	known := false
	for _, k := range kinds {
		if ref.Kind == k {
			known = true
		}
	}
	if !known {
		allErrs = append(allErrs, field.NotSupported(refPath.Child("kind"), ref.Kind, kinds))
	}
	if len(ref.Name) == 0 {
		allErrs = append(allErrs, field.Required(refPath.Child("name"), ""))
	} else {
		for _, msg := range rbacNameRequirements(ref.Name, false) {
			allErrs = append(allErrs, field.Invalid(refPath.Child("name"), ref.Name, msg))
		}
	}
	return allErrs
}

func validateRoleBindingSubject(s rbacv1.Subject, isNamespaced bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(s.Name) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if len(s.Name) > 0 {
			for _, msg := range apimachineryvalidation.ValidateServiceAccountName(s.Name, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), s.Name, msg))
			}
		}
		if len(s.APIGroup) > 0 {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !isNamespaced && len(s.Namespace) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), ""))
		}
	case rbacv1.UserKind:
		if len(s.Name) == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), s.Name, "user name cannot be empty"))
		}
		if s.APIGroup != rbacv1.GroupName {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	case rbacv1.GroupKind:
		if len(s.Name) == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), s.Name, "group name cannot be empty"))
		}
		if s.APIGroup != rbacv1.GroupName {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return allErrs
}
