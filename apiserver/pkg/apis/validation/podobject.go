package validation

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePod validates a Pod on create.
func ValidatePod(pod *corev1.Pod) field.ErrorList {
	opts := podValidationOptionsFor(&pod.ObjectMeta, &pod.Spec, nil, nil)
	opts.ResourceIsPod = true
	specPath := field.NewPath("spec")
	allErrs := validatePodMetadataAndSpec(pod, opts)
	if len(pod.Spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	allErrs = append(allErrs, validateSeccompAnnotationsAndFields(pod.ObjectMeta, &pod.Spec, specPath)...)
	allErrs = append(allErrs, validateAppArmorAnnotationsAndFieldsMatchOnCreate(pod.ObjectMeta, &pod.Spec, specPath)...)
	return allErrs
}

func validatePodMetadataAndSpec(pod *corev1.Pod, opts podValidationOptions) field.ErrorList {
	specPath := field.NewPath("spec")
	allErrs := validateObjectMeta(&pod.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	allErrs = append(allErrs, validatePodSpecificAnnotations(pod.Annotations, &pod.Spec, metadataPath.Child("annotations"), opts)...)
	allErrs = append(allErrs, validatePodSpec(&pod.Spec, &pod.ObjectMeta, specPath, opts)...)
	if effectiveServiceAccountName(&pod.Spec) == "" {
		for vi, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for si, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					allErrs = append(allErrs, field.Forbidden(specPath.Child("volumes").Index(vi).Child("projected").Child("sources").Index(si).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	for i := range pod.Spec.Containers {
		allErrs = append(allErrs, validateContainerOnlyForPod(&pod.Spec.Containers[i], specPath.Child("containers").Index(i))...)
	}
	for i := range pod.Spec.InitContainers {
		allErrs = append(allErrs, validateContainerOnlyForPod(&pod.Spec.InitContainers[i], specPath.Child("initContainers").Index(i))...)
	}
	return allErrs
}

// effectiveServiceAccountName is the name upstream's conversion settles on:
// serviceAccountName, or the deprecated serviceAccount when it is empty.
func effectiveServiceAccountName(spec *corev1.PodSpec) string {
	if spec.ServiceAccountName != "" {
		return spec.ServiceAccountName
	}
	return spec.DeprecatedServiceAccount
}

var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// ValidatePodUpdate validates an update of a Pod: the new pod must be valid,
// and only images, activeDeadlineSeconds, tolerations (additions), scheduling
// gates (removals) and, for gated pods, node selector and node affinity
// additions may change.
func ValidatePodUpdate(newPod, oldPod *corev1.Pod) field.ErrorList {
	opts := podValidationOptionsFor(&newPod.ObjectMeta, &newPod.Spec, &oldPod.Spec, &oldPod.ObjectMeta)
	opts.ResourceIsPod = true
	allErrs := validateObjectMetaUpdate(&newPod.ObjectMeta, &oldPod.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validatePodMetadataAndSpec(newPod, opts)...)
	allErrs = append(allErrs, validatePodSpecificAnnotationUpdates(newPod, oldPod, metadataPath.Child("annotations"), opts)...)
	specPath := field.NewPath("spec")

	errs, stop := validateContainerUpdates(newPod.Spec.Containers, oldPod.Spec.Containers, specPath.Child("containers"))
	allErrs = append(allErrs, errs...)
	if stop {
		return allErrs
	}
	errs, stop = validateContainerUpdates(newPod.Spec.InitContainers, oldPod.Spec.InitContainers, specPath.Child("initContainers"))
	allErrs = append(allErrs, errs...)
	if stop {
		return allErrs
	}

	// activeDeadlineSeconds may be set from nil, or lowered.
	if newPod.Spec.ActiveDeadlineSeconds != nil {
		newValue := *newPod.Spec.ActiveDeadlineSeconds
		if newValue < 0 || newValue > math.MaxInt32 {
			return append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), newValue, validation.InclusiveRangeError(0, math.MaxInt32)))
		}
		if oldPod.Spec.ActiveDeadlineSeconds != nil && *oldPod.Spec.ActiveDeadlineSeconds < newValue {
			return append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), newValue, "must be less than or equal to previous value"))
		}
	} else if oldPod.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), newPod.Spec.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	}

	allErrs = append(allErrs, validateOnlyAddedTolerations(newPod.Spec.Tolerations, oldPod.Spec.Tolerations, specPath.Child("tolerations"))...)
	allErrs = append(allErrs, validateOnlyDeletedSchedulingGates(newPod.Spec.SchedulingGates, oldPod.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)

	oldSpec := *oldPod.Spec.DeepCopy()
	oldSpec.ServiceAccountName = effectiveServiceAccountName(&oldSpec)
	oldSpec.DeprecatedServiceAccount = oldSpec.ServiceAccountName
	munged := *newPod.Spec.DeepCopy()
	munged.ServiceAccountName = effectiveServiceAccountName(&munged)
	munged.DeprecatedServiceAccount = munged.ServiceAccountName
	if apiequality.Semantic.DeepEqual(munged, oldSpec) {
		return allErrs
	}

	for i := range munged.Containers {
		munged.Containers[i].Image = oldSpec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = oldSpec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = nil
	if oldSpec.ActiveDeadlineSeconds != nil {
		v := *oldSpec.ActiveDeadlineSeconds
		munged.ActiveDeadlineSeconds = &v
	}
	munged.SchedulingGates = oldSpec.SchedulingGates
	munged.Tolerations = oldSpec.Tolerations
	if oldSpec.TerminationGracePeriodSeconds != nil && *oldSpec.TerminationGracePeriodSeconds < 0 &&
		munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = oldSpec.TerminationGracePeriodSeconds
	}

	if len(oldSpec.SchedulingGates) > 0 {
		// A gated pod may gain node selector entries and node affinity terms.
		if !apiequality.Semantic.DeepEqual(munged.NodeSelector, oldSpec.NodeSelector) {
			allErrs = append(allErrs, validateNodeSelectorMutation(specPath.Child("nodeSelector"), munged.NodeSelector, oldSpec.NodeSelector)...)
			munged.NodeSelector = oldSpec.NodeSelector
		}
		var oldNodeAffinity, newNodeAffinity *corev1.NodeAffinity
		if oldSpec.Affinity != nil {
			oldNodeAffinity = oldSpec.Affinity.NodeAffinity
		}
		if munged.Affinity != nil {
			newNodeAffinity = munged.Affinity.NodeAffinity
		}
		if !apiequality.Semantic.DeepEqual(oldNodeAffinity, newNodeAffinity) {
			allErrs = append(allErrs, validateNodeAffinityMutation(specPath.Child("affinity").Child("nodeAffinity"), newNodeAffinity, oldNodeAffinity)...)
			switch {
			case munged.Affinity == nil && oldNodeAffinity == nil:
			case munged.Affinity == nil && oldNodeAffinity != nil:
				munged.Affinity = &corev1.Affinity{NodeAffinity: oldNodeAffinity}
			case munged.Affinity != nil && oldSpec.Affinity == nil && munged.Affinity.PodAntiAffinity == nil && munged.Affinity.PodAffinity == nil:
				munged.Affinity = nil
			default:
				munged.Affinity.NodeAffinity = oldNodeAffinity
			}
		}
	}

	if !apiequality.Semantic.DeepEqual(munged, oldSpec) {
		specDiff := diff.ObjectReflectDiff(oldSpec, munged)
		allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("pod updates may not change fields other than %s\n%v", strings.Join(updatablePodSpecFields, ","), specDiff)))
	}
	return allErrs
}

// ValidatePodEphemeralContainersUpdate validates an update through the
// pods/ephemeralcontainers subresource, as upstream: newPod must be valid
// (its ephemeral containers too), a static pod's mirror takes none, and
// existing ephemeral containers may be neither removed nor changed.
// newPod and oldPod differ only in their ephemeral containers.
func ValidatePodEphemeralContainersUpdate(newPod, oldPod *corev1.Pod) field.ErrorList {
	opts := podValidationOptionsFor(&newPod.ObjectMeta, &newPod.Spec, &oldPod.Spec, &oldPod.ObjectMeta)
	opts.ResourceIsPod = true
	allErrs := validateObjectMetaUpdate(&newPod.ObjectMeta, &oldPod.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validatePodMetadataAndSpec(newPod, opts)...)
	allErrs = append(allErrs, validatePodSpecificAnnotationUpdates(newPod, oldPod, metadataPath.Child("annotations"), opts)...)
	if _, ok := oldPod.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	// A patch may reorder them: each old one is looked up by name.
	specPath := field.NewPath("spec", "ephemeralContainers")
	byName := make(map[string]*corev1.EphemeralContainer, len(newPod.Spec.EphemeralContainers))
	for i := range newPod.Spec.EphemeralContainers {
		byName[newPod.Spec.EphemeralContainers[i].Name] = &newPod.Spec.EphemeralContainers[i]
	}
	for _, old := range oldPod.Spec.EphemeralContainers {
		if ec, ok := byName[old.Name]; !ok {
			allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", old.Name)))
		} else if !apiequality.Semantic.DeepEqual(old, *ec) {
			allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%v", old.Name, diff.ObjectReflectDiff(old, *ec))))
		}
	}
	return allErrs
}

func validateContainerUpdates(newContainers, oldContainers []corev1.Container, fldPath *field.Path) (field.ErrorList, bool) {
	if len(newContainers) != len(oldContainers) {
		return field.ErrorList{field.Forbidden(fldPath, "pod updates may not add or remove containers")}, true
	}
	var allErrs field.ErrorList
	for i, ctr := range newContainers {
		if len(ctr.Image) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Index(i).Child("image"), ""))
		}
		if len(strings.TrimSpace(ctr.Image)) != len(ctr.Image) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("image"), ctr.Image, "must not have leading or trailing whitespace"))
		}
	}
	return allErrs, false
}

func validatePodSpecificAnnotationUpdates(newPod, oldPod *corev1.Pod, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	newAnnotations, oldAnnotations := newPod.Annotations, oldPod.Annotations
	for k, oldVal := range oldAnnotations {
		if newVal, ok := newAnnotations[k]; ok && newVal == oldVal {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not remove or update AppArmor annotations"))
		}
		if k == corev1.MirrorPodAnnotationKey {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not remove or update mirror pod annotation"))
		}
	}
	for k := range newAnnotations {
		if _, ok := oldAnnotations[k]; ok {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not add AppArmor annotations"))
		}
		if k == corev1.MirrorPodAnnotationKey {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "may not add mirror pod annotation"))
		}
	}
	// validatePodMetadataAndSpec has already run validatePodSpecificAnnotations.
	return allErrs
}

func validateOnlyAddedTolerations(newTolerations, oldTolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	for _, old := range oldTolerations {
		found := false
		for _, n := range newTolerations {
			o := old
			o.TolerationSeconds = n.TolerationSeconds
			if apiequality.Semantic.DeepEqual(o, n) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(fldPath, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return validateTolerations(newTolerations, fldPath)
}

func validateOnlyDeletedSchedulingGates(newGates, oldGates []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	if len(newGates) == 0 {
		return nil
	}
	old := map[string]bool{}
	for _, g := range oldGates {
		old[g.Name] = true
	}
	var allErrs field.ErrorList
	for i, g := range newGates {
		if !old[g.Name] {
			allErrs = append(allErrs, field.Forbidden(fldPath.Index(i).Child("name"), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return allErrs
}

func validateNodeSelectorMutation(fldPath *field.Path, newNodeSelector, oldNodeSelector map[string]string) field.ErrorList {
	for k, v1 := range oldNodeSelector {
		if v2, ok := newNodeSelector[k]; !ok || v1 != v2 {
			return field.ErrorList{field.Invalid(fldPath, newNodeSelector, "only additions to spec.nodeSelector are allowed (no mutations or deletions)")}
		}
	}
	return nil
}

func validateNodeAffinityMutation(fldPath *field.Path, newNodeAffinity, oldNodeAffinity *corev1.NodeAffinity) field.ErrorList {
	if oldNodeAffinity == nil || oldNodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	termsPath := fldPath.Child("requiredDuringSchedulingIgnoredDuringExecution").Child("nodeSelectorTerms")
	oldTerms := oldNodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	var newTerms []corev1.NodeSelectorTerm
	if newNodeAffinity != nil && newNodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		newTerms = newNodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	if len(oldTerms) > 0 && len(oldTerms) != len(newTerms) {
		return field.ErrorList{field.Invalid(termsPath, newTerms, "no additions/deletions to non-empty NodeSelectorTerms list are allowed")}
	}
	var allErrs field.ErrorList
	for i := range oldTerms {
		if !nodeSelectorTermHasOnlyAdditions(newTerms[i], oldTerms[i]) {
			allErrs = append(allErrs, field.Invalid(termsPath.Index(i), newTerms[i], "only additions are allowed (no mutations or deletions)"))
		}
	}
	return allErrs
}

func nodeSelectorTermHasOnlyAdditions(newTerm, oldTerm corev1.NodeSelectorTerm) bool {
	if len(oldTerm.MatchExpressions) == 0 && len(oldTerm.MatchFields) == 0 &&
		(len(newTerm.MatchExpressions) > 0 || len(newTerm.MatchFields) > 0) {
		return false
	}
	if l := len(oldTerm.MatchExpressions); l > 0 {
		if len(newTerm.MatchExpressions) < l || !apiequality.Semantic.DeepEqual(newTerm.MatchExpressions[:l], oldTerm.MatchExpressions) {
			return false
		}
	}
	if l := len(oldTerm.MatchFields); l > 0 {
		if len(newTerm.MatchFields) < l || !apiequality.Semantic.DeepEqual(newTerm.MatchFields[:l], oldTerm.MatchFields) {
			return false
		}
	}
	return true
}

// validateSeccompAnnotationsAndFields requires the deprecated seccomp
// annotations to agree with the fields when both are set.
func validateSeccompAnnotationsAndFields(meta metav1.ObjectMeta, spec *corev1.PodSpec, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.SecurityContext != nil && spec.SecurityContext.SeccompProfile != nil {
		if annotation, ok := meta.Annotations[corev1.SeccompPodAnnotationKey]; ok {
			if err := seccompAnnotationMatchesField(annotation, spec.SecurityContext.SeccompProfile, specPath.Child("securityContext").Child("seccompProfile")); err != nil {
				allErrs = append(allErrs, err)
			}
		}
	}
	visitContainers(spec, specPath, func(c *corev1.Container, cPath *field.Path) {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			return
		}
		if annotation, ok := meta.Annotations[corev1.SeccompContainerAnnotationKeyPrefix+c.Name]; ok {
			if err := seccompAnnotationMatchesField(annotation, c.SecurityContext.SeccompProfile, cPath.Child("securityContext").Child("seccompProfile")); err != nil {
				allErrs = append(allErrs, err)
			}
		}
	})
	return allErrs
}

func seccompAnnotationMatchesField(annotation string, profile *corev1.SeccompProfile, fldPath *field.Path) *field.Error {
	switch profile.Type {
	case corev1.SeccompProfileTypeUnconfined:
		if annotation != corev1.SeccompProfileNameUnconfined {
			return field.Forbidden(fldPath.Child("type"), "seccomp type in annotation and field must match")
		}
	case corev1.SeccompProfileTypeRuntimeDefault:
		if annotation != corev1.SeccompProfileRuntimeDefault && annotation != corev1.DeprecatedSeccompProfileDockerDefault {
			return field.Forbidden(fldPath.Child("type"), "seccomp type in annotation and field must match")
		}
	case corev1.SeccompProfileTypeLocalhost:
		if !strings.HasPrefix(annotation, corev1.SeccompLocalhostProfileNamePrefix) {
			return field.Forbidden(fldPath.Child("type"), "seccomp type in annotation and field must match")
		} else if profile.LocalhostProfile == nil || strings.TrimPrefix(annotation, corev1.SeccompLocalhostProfileNamePrefix) != *profile.LocalhostProfile {
			return field.Forbidden(fldPath.Child("localhostProfile"), "seccomp profile in annotation and field must match")
		}
	}
	return nil
}

// validateAppArmorAnnotationsAndFieldsMatchOnCreate requires the deprecated
// AppArmor annotations to agree with the fields when both are set.
func validateAppArmorAnnotationsAndFieldsMatchOnCreate(meta metav1.ObjectMeta, spec *corev1.PodSpec, specPath *field.Path) field.ErrorList {
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		return nil
	}
	var allErrs field.ErrorList
	var podProfile *corev1.AppArmorProfile
	if spec.SecurityContext != nil {
		podProfile = spec.SecurityContext.AppArmorProfile
	}
	visitContainers(spec, specPath, func(c *corev1.Container, cPath *field.Path) {
		profile := podProfile
		if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
			profile = c.SecurityContext.AppArmorProfile
		}
		if profile == nil {
			return
		}
		annotation, ok := meta.Annotations[corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name]
		if !ok {
			return
		}
		p := cPath.Child("securityContext").Child("appArmorProfile")
		switch profile.Type {
		case corev1.AppArmorProfileTypeUnconfined:
			if annotation != corev1.DeprecatedAppArmorBetaProfileNameUnconfined {
				allErrs = append(allErrs, field.Forbidden(p.Child("type"), "apparmor type in annotation and field must match"))
			}
		case corev1.AppArmorProfileTypeRuntimeDefault:
			if annotation != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault {
				allErrs = append(allErrs, field.Forbidden(p.Child("type"), "apparmor type in annotation and field must match"))
			}
		case corev1.AppArmorProfileTypeLocalhost:
			if !strings.HasPrefix(annotation, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
				allErrs = append(allErrs, field.Forbidden(p.Child("type"), "apparmor type in annotation and field must match"))
			} else if profile.LocalhostProfile == nil || strings.TrimPrefix(annotation, corev1.DeprecatedAppArmorBetaProfileNamePrefix) != *profile.LocalhostProfile {
				allErrs = append(allErrs, field.Forbidden(p.Child("localhostProfile"), "apparmor profile in annotation and field must match"))
			}
		}
	})
	return allErrs
}

// validatePodTemplateSpec validates a pod template embedded in another kind.
func validatePodTemplateSpec(tmpl *corev1.PodTemplateSpec, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	allErrs := metav1validation.ValidateLabels(tmpl.Labels, fldPath.Child("labels"))
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(tmpl.Annotations, fldPath.Child("annotations"))...)
	allErrs = append(allErrs, validatePodSpecificAnnotations(tmpl.Annotations, &tmpl.Spec, fldPath.Child("annotations"), opts)...)
	allErrs = append(allErrs, validatePodSpec(&tmpl.Spec, nil, fldPath.Child("spec"), opts)...)
	allErrs = append(allErrs, validateSeccompAnnotationsAndFields(tmpl.ObjectMeta, &tmpl.Spec, fldPath.Child("spec"))...)
	allErrs = append(allErrs, validateAppArmorAnnotationsAndFieldsMatchOnCreate(tmpl.ObjectMeta, &tmpl.Spec, fldPath.Child("spec"))...)
	if len(tmpl.Spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return allErrs
}
