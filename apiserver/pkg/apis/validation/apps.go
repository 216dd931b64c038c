package validation

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateReplicaSet validates a ReplicaSet on create.
func ValidateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	opts := podValidationOptionsFor(nil, &rs.Spec.Template.Spec, nil, nil)
	allErrs := validateObjectMeta(&rs.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	allErrs = append(allErrs, validateReplicaSetSpec(&rs.Spec, nil, field.NewPath("spec"), opts)...)
	return allErrs
}

// ValidateReplicaSetUpdate validates an update of a ReplicaSet. The
// selector is immutable in apps/v1.
func ValidateReplicaSetUpdate(rs, oldRS *appsv1.ReplicaSet) field.ErrorList {
	opts := podValidationOptionsFor(nil, &rs.Spec.Template.Spec, &oldRS.Spec.Template.Spec, &oldRS.Spec.Template.ObjectMeta)
	allErrs := validateObjectMetaUpdate(&rs.ObjectMeta, &oldRS.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateReplicaSetSpec(&rs.Spec, &oldRS.Spec, field.NewPath("spec"), opts)...)
	allErrs = append(allErrs, validateImmutableField(rs.Spec.Selector, oldRS.Spec.Selector, field.NewPath("spec").Child("selector"))...)
	return allErrs
}

func specReplicas(replicas *int32) int32 {
	if replicas == nil {
		// Defaulting sets 1; validate what would be stored.
		return 1
	}
	return *replicas
}

func validateReplicaSetSpec(spec, oldSpec *appsv1.ReplicaSetSpec, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	replicas := specReplicas(spec.Replicas)
	allErrs := validateNonnegativeField(int64(replicas), fldPath.Child("replicas"))
	allErrs = append(allErrs, validateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	var oldTemplate *corev1.PodTemplateSpec
	if oldSpec != nil {
		oldTemplate = &oldSpec.Template
	}
	allErrs = append(allErrs, validateSelectorAndTemplate(spec.Selector, &spec.Template, oldTemplate, replicas, "ReplicaSet", fldPath, opts)...)
	return allErrs
}

// validateSelectorAndTemplate checks a workload's selector and that its pod
// template is valid, matches the selector, and restarts always.
func validateSelectorAndTemplate(sel *metav1.LabelSelector, tmpl, oldTmpl *corev1.PodTemplateSpec, replicas int32, kind string, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	selPath := fldPath.Child("selector")
	if sel == nil {
		allErrs = append(allErrs, field.Required(selPath, ""))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, selPath)...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			// Upstream uses this text for ReplicaSets too.
			allErrs = append(allErrs, field.Invalid(selPath, sel, "empty selector is invalid for deployment"))
		}
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return append(allErrs, field.Invalid(selPath, sel, "invalid label selector"))
	}
	tmplPath := fldPath.Child("template")
	if !selector.Empty() && !selector.Matches(labels.Set(tmpl.Labels)) {
		allErrs = append(allErrs, field.Invalid(tmplPath.Child("metadata", "labels"), tmpl.Labels, "`selector` does not match template `labels`"))
	}
	allErrs = append(allErrs, validatePodTemplateSpec(tmpl, tmplPath, opts)...)
	if replicas > 1 {
		var oldVolumes []corev1.Volume
		if oldTmpl != nil {
			oldVolumes = oldTmpl.Spec.Volumes
		}
		allErrs = append(allErrs, validateReadOnlyPersistentDisks(tmpl.Spec.Volumes, oldVolumes, tmplPath.Child("spec", "volumes"))...)
	}
	if tmpl.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(tmplPath.Child("spec", "restartPolicy"), tmpl.Spec.RestartPolicy, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if tmpl.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Invalid(tmplPath.Child("spec", "activeDeadlineSeconds"), tmpl.Spec.ActiveDeadlineSeconds,
			fmt.Sprintf("activeDeadlineSeconds in %s is not Supported", kind)))
	}
	return allErrs
}

// validateReadOnlyPersistentDisks requires GCE PDs to be read-only in
// replicated pods, unless the old template already had the same volume.
func validateReadOnlyPersistentDisks(volumes, oldVolumes []corev1.Volume, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	old := map[string]bool{}
	for _, v := range oldVolumes {
		if v.GCEPersistentDisk != nil && !v.GCEPersistentDisk.ReadOnly {
			old[v.Name] = true
		}
	}
	for i, v := range volumes {
		if v.GCEPersistentDisk != nil && !v.GCEPersistentDisk.ReadOnly && !old[v.Name] {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("gcePersistentDisk", "readOnly"), false,
				"must be true for replicated pods > 1; GCE PD can only be mounted on multiple machines if it is read-only"))
		}
	}
	return allErrs
}

// ValidateDeployment validates a Deployment on create.
func ValidateDeployment(d *appsv1.Deployment) field.ErrorList {
	opts := podValidationOptionsFor(nil, &d.Spec.Template.Spec, nil, nil)
	allErrs := validateObjectMeta(&d.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	allErrs = append(allErrs, validateDeploymentSpec(&d.Spec, nil, field.NewPath("spec"), opts)...)
	return allErrs
}

// ValidateDeploymentUpdate validates an update of a Deployment. The selector
// is immutable in apps/v1.
func ValidateDeploymentUpdate(d, oldD *appsv1.Deployment) field.ErrorList {
	opts := podValidationOptionsFor(nil, &d.Spec.Template.Spec, &oldD.Spec.Template.Spec, &oldD.Spec.Template.ObjectMeta)
	allErrs := validateObjectMetaUpdate(&d.ObjectMeta, &oldD.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateDeploymentSpec(&d.Spec, &oldD.Spec, field.NewPath("spec"), opts)...)
	allErrs = append(allErrs, validateImmutableField(d.Spec.Selector, oldD.Spec.Selector, field.NewPath("spec").Child("selector"))...)
	return allErrs
}

func validateDeploymentSpec(spec, oldSpec *appsv1.DeploymentSpec, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	replicas := specReplicas(spec.Replicas)
	allErrs := validateNonnegativeField(int64(replicas), fldPath.Child("replicas"))
	var oldTemplate *corev1.PodTemplateSpec
	if oldSpec != nil {
		oldTemplate = &oldSpec.Template
	}
	allErrs = append(allErrs, validateSelectorAndTemplate(spec.Selector, &spec.Template, oldTemplate, replicas, "Deployment", fldPath, opts)...)
	allErrs = append(allErrs, validateDeploymentStrategy(&spec.Strategy, fldPath.Child("strategy"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.RevisionHistoryLimit), fldPath.Child("revisionHistoryLimit"))...)
	}
	if spec.ProgressDeadlineSeconds != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.ProgressDeadlineSeconds), fldPath.Child("progressDeadlineSeconds"))...)
		if *spec.ProgressDeadlineSeconds <= spec.MinReadySeconds {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("progressDeadlineSeconds"), spec.ProgressDeadlineSeconds, "must be greater than minReadySeconds"))
		}
	}
	return allErrs
}

func validateDeploymentStrategy(strategy *appsv1.DeploymentStrategy, fldPath *field.Path) field.ErrorList {
	switch strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if strategy.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(fldPath.Child("rollingUpdate"), fmt.Sprintf("may not be specified when strategy `type` is '%s'", appsv1.RecreateDeploymentStrategyType))}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if strategy.RollingUpdate == nil {
			return field.ErrorList{field.Required(fldPath.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		return validateRollingUpdateDeployment(strategy.RollingUpdate, fldPath.Child("rollingUpdate"))
	default:
		valid := []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)}
		return field.ErrorList{field.NotSupported(fldPath, strategy, valid)}
	}
	return nil
}

func validateRollingUpdateDeployment(ru *appsv1.RollingUpdateDeployment, fldPath *field.Path) field.ErrorList {
	// Unset values are what defaulting would fill in.
	maxUnavailable, maxSurge := intstr.FromString("25%"), intstr.FromString("25%")
	if ru.MaxUnavailable != nil {
		maxUnavailable = *ru.MaxUnavailable
	}
	if ru.MaxSurge != nil {
		maxSurge = *ru.MaxSurge
	}
	allErrs := validatePositiveIntOrPercent(maxUnavailable, fldPath.Child("maxUnavailable"))
	allErrs = append(allErrs, validatePositiveIntOrPercent(maxSurge, fldPath.Child("maxSurge"))...)
	if intOrPercentValue(maxUnavailable) == 0 && intOrPercentValue(maxSurge) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxUnavailable"), maxUnavailable, "may not be 0 when `maxSurge` is 0"))
	}
	if v, isPercent := percentValue(maxUnavailable); isPercent && v > 100 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxUnavailable"), maxUnavailable, "must not be greater than 100%"))
	}
	return allErrs
}

func validatePositiveIntOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.String:
		var allErrs field.ErrorList
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, v, msg))
		}
		return allErrs
	case intstr.Int:
		return validateNonnegativeField(int64(v.IntValue()), fldPath)
	default:
		return field.ErrorList{field.Invalid(fldPath, v, "must be an integer or percentage (e.g '5%')")}
	}
}

func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

func intOrPercentValue(v intstr.IntOrString) int {
	if n, isPercent := percentValue(v); isPercent {
		return n
	}
	return v.IntValue()
}

// ValidateScale validates the scale subresource: spec.replicas must not be
// negative.
func ValidateScale(scale *autoscalingv1.Scale) field.ErrorList {
	if scale == nil {
		return field.ErrorList{field.Required(field.NewPath(""), "a Scale object is required")}
	}
	allErrs := validateObjectMeta(&scale.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if scale.Spec.Replicas < 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "replicas"), scale.Spec.Replicas, "must be greater than or equal to 0"))
	}
	return allErrs
}
