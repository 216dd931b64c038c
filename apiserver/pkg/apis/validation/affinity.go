package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validateAffinity(affinity *corev1.Affinity, opts podValidationOptions, fldPath *field.Path) field.ErrorList {
	if affinity == nil {
		return nil
	}
	var allErrs field.ErrorList
	if na := affinity.NodeAffinity; na != nil {
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			allErrs = append(allErrs, validateNodeSelector(na.RequiredDuringSchedulingIgnoredDuringExecution, opts.AllowInvalidLabelValueInRequiredNodeAffinity,
				fldPath.Child("nodeAffinity").Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		}
		if len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			allErrs = append(allErrs, validatePreferredSchedulingTerms(na.PreferredDuringSchedulingIgnoredDuringExecution,
				fldPath.Child("nodeAffinity").Child("preferredDuringSchedulingIgnoredDuringExecution"))...)
		}
	}
	if pa := affinity.PodAffinity; pa != nil {
		p := fldPath.Child("podAffinity")
		allErrs = append(allErrs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, opts.AllowInvalidLabelValueInSelector, p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		allErrs = append(allErrs, validateWeightedPodAffinityTerms(pa.PreferredDuringSchedulingIgnoredDuringExecution, opts.AllowInvalidLabelValueInSelector, p.Child("preferredDuringSchedulingIgnoredDuringExecution"))...)
	}
	if paa := affinity.PodAntiAffinity; paa != nil {
		p := fldPath.Child("podAntiAffinity")
		allErrs = append(allErrs, validatePodAffinityTerms(paa.RequiredDuringSchedulingIgnoredDuringExecution, opts.AllowInvalidLabelValueInSelector, p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		allErrs = append(allErrs, validateWeightedPodAffinityTerms(paa.PreferredDuringSchedulingIgnoredDuringExecution, opts.AllowInvalidLabelValueInSelector, p.Child("preferredDuringSchedulingIgnoredDuringExecution"))...)
	}
	return allErrs
}

func validateNodeSelector(ns *corev1.NodeSelector, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	termsPath := fldPath.Child("nodeSelectorTerms")
	if len(ns.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(termsPath, "must have at least one node selector term")}
	}
	var allErrs field.ErrorList
	for i, term := range ns.NodeSelectorTerms {
		allErrs = append(allErrs, validateNodeSelectorTerm(term, allowInvalidLabelValue, termsPath.Index(i))...)
	}
	return allErrs
}

func validateNodeSelectorTerm(term corev1.NodeSelectorTerm, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for j, req := range term.MatchExpressions {
		allErrs = append(allErrs, validateNodeSelectorRequirement(req, allowInvalidLabelValue, fldPath.Child("matchExpressions").Index(j))...)
	}
	for j, req := range term.MatchFields {
		allErrs = append(allErrs, validateNodeFieldSelectorRequirement(req, fldPath.Child("matchFields").Index(j))...)
	}
	return allErrs
}

func validateNodeSelectorRequirement(rq corev1.NodeSelectorRequirement, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch rq.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(rq.Values) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(rq.Values) > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(rq.Values) != 1 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), rq.Operator, "not a valid selector operator"))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabelName(rq.Key, fldPath.Child("key"))...)
	if !allowInvalidLabelValue {
		for i, value := range rq.Values {
			for _, msg := range validation.IsValidLabelValue(value) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("values").Index(i), value, msg))
			}
		}
	}
	return allErrs
}

func validateNodeFieldSelectorRequirement(req corev1.NodeSelectorRequirement, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch req.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(req.Values) != 1 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), req.Operator, "not a valid selector operator"))
	}
	if req.Key != metav1.ObjectNameField {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), req.Key, "not a valid field selector key"))
	} else {
		for i, v := range req.Values {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(v, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("values").Index(i), v, msg))
			}
		}
	}
	return allErrs
}

func validatePreferredSchedulingTerms(terms []corev1.PreferredSchedulingTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, term := range terms {
		if term.Weight <= 0 || term.Weight > 100 {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("weight"), term.Weight, "must be in the range 1-100"))
		}
		// Invalid label values are always allowed in preferred terms.
		allErrs = append(allErrs, validateNodeSelectorTerm(term.Preference, true, fldPath.Index(i).Child("preference"))...)
	}
	return allErrs
}

func validatePodAffinityTerms(terms []corev1.PodAffinityTerm, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, term := range terms {
		allErrs = append(allErrs, validatePodAffinityTerm(term, allowInvalidLabelValue, fldPath.Index(i))...)
	}
	return allErrs
}

func validateWeightedPodAffinityTerms(terms []corev1.WeightedPodAffinityTerm, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for j, term := range terms {
		if term.Weight <= 0 || term.Weight > 100 {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(j).Child("weight"), term.Weight, "must be in the range 1-100"))
		}
		allErrs = append(allErrs, validatePodAffinityTerm(term.PodAffinityTerm, allowInvalidLabelValue, fldPath.Index(j).Child("podAffinityTerm"))...)
	}
	return allErrs
}

func validatePodAffinityTerm(term corev1.PodAffinityTerm, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
	allErrs := metav1validation.ValidateLabelSelector(term.LabelSelector, opts, fldPath.Child("labelSelector"))
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(term.NamespaceSelector, opts, fldPath.Child("namespaceSelector"))...)
	for _, name := range term.Namespaces {
		for _, msg := range apimachineryvalidation.ValidateNamespaceName(name, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("namespace"), name, msg))
		}
	}
	allErrs = append(allErrs, validateMatchLabelKeysAndMismatchLabelKeys(fldPath, term.MatchLabelKeys, term.MismatchLabelKeys, term.LabelSelector)...)
	if len(term.TopologyKey) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("topologyKey"), "can not be empty"))
	}
	return append(allErrs, metav1validation.ValidateLabelName(term.TopologyKey, fldPath.Child("topologyKey"))...)
}

func validateMatchLabelKeysAndMismatchLabelKeys(fldPath *field.Path, matchLabelKeys, mismatchLabelKeys []string, selector *metav1.LabelSelector) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateLabelKeys(fldPath.Child("matchLabelKeys"), matchLabelKeys, selector)...)
	allErrs = append(allErrs, validateLabelKeys(fldPath.Child("mismatchLabelKeys"), mismatchLabelKeys, selector)...)
	if selector != nil {
		matchKeyIndex := map[string]int{}
		for i, key := range matchLabelKeys {
			matchKeyIndex[key] = i
		}
		selectorKeys := sets.New[string]()
		for key := range selector.MatchLabels {
			selectorKeys.Insert(key)
		}
		for _, expr := range selector.MatchExpressions {
			if i, ok := matchKeyIndex[expr.Key]; ok && selectorKeys.Has(expr.Key) {
				allErrs = append(allErrs, field.Invalid(fldPath.Index(i), expr.Key, "exists in both matchLabelKeys and labelSelector"))
			}
			selectorKeys.Insert(expr.Key)
		}
	}
	mismatch := sets.New(mismatchLabelKeys...)
	for i, k := range matchLabelKeys {
		if mismatch.Has(k) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("matchLabelKeys").Index(i), k, "exists in both matchLabelKeys and mismatchLabelKeys"))
		}
	}
	return allErrs
}

func validateLabelKeys(fldPath *field.Path, keys []string, selector *metav1.LabelSelector) field.ErrorList {
	if len(keys) == 0 {
		return nil
	}
	if selector == nil {
		return field.ErrorList{field.Forbidden(fldPath, "must not be specified when labelSelector is not set")}
	}
	var allErrs field.ErrorList
	for i, key := range keys {
		allErrs = append(allErrs, metav1validation.ValidateLabelName(key, fldPath.Index(i))...)
	}
	return allErrs
}

var (
	supportedScheduleActions  = sets.New(corev1.DoNotSchedule, corev1.ScheduleAnyway)
	supportedNodeInclusionPol = sets.New(corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyHonor)
)

func validateTopologySpreadConstraints(constraints []corev1.TopologySpreadConstraint, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range constraints {
		p := fldPath.Index(i)
		if c.MaxSkew <= 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, isNotPositiveErrorMsg))
		}
		if len(c.TopologyKey) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		if !supportedScheduleActions.Has(c.WhenUnsatisfiable) {
			allErrs = append(allErrs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, sets.List(supportedScheduleActions)))
		}
		for _, rest := range constraints[i+1:] {
			if c.TopologyKey == rest.TopologyKey && c.WhenUnsatisfiable == rest.WhenUnsatisfiable {
				allErrs = append(allErrs, field.Duplicate(p.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("minDomains"), c.MinDomains, isNotPositiveErrorMsg))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				allErrs = append(allErrs, field.Invalid(p.Child("minDomains"), c.MinDomains,
					fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		if c.NodeAffinityPolicy != nil && !supportedNodeInclusionPol.Has(*c.NodeAffinityPolicy) {
			allErrs = append(allErrs, field.NotSupported(p.Child("nodeAffinityPolicy"), *c.NodeAffinityPolicy, sets.List(supportedNodeInclusionPol)))
		}
		if c.NodeTaintsPolicy != nil && !supportedNodeInclusionPol.Has(*c.NodeTaintsPolicy) {
			allErrs = append(allErrs, field.NotSupported(p.Child("nodeTaintsPolicy"), *c.NodeTaintsPolicy, sets.List(supportedNodeInclusionPol)))
		}
		allErrs = append(allErrs, validateMatchLabelKeysInTopologySpread(p.Child("matchLabelKeys"), c.MatchLabelKeys, c.LabelSelector)...)
		if !opts.AllowInvalidTopologySpreadConstraintLabelSelector {
			allErrs = append(allErrs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
		}
	}
	return allErrs
}

func validateMatchLabelKeysInTopologySpread(fldPath *field.Path, keys []string, selector *metav1.LabelSelector) field.ErrorList {
	if len(keys) == 0 {
		return nil
	}
	var allErrs field.ErrorList
	selectorKeys := sets.New[string]()
	if selector != nil {
		for key := range selector.MatchLabels {
			selectorKeys.Insert(key)
		}
		for _, expr := range selector.MatchExpressions {
			selectorKeys.Insert(expr.Key)
		}
	} else {
		allErrs = append(allErrs, field.Forbidden(fldPath, "must not be specified when labelSelector is not set"))
	}
	for i, key := range keys {
		allErrs = append(allErrs, metav1validation.ValidateLabelName(key, fldPath.Index(i))...)
		if selectorKeys.Has(key) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), key, "exists in both matchLabelKeys and labelSelector"))
		}
	}
	return allErrs
}

// Ratcheting detectors: does the old spec hold a value that the strict rules
// reject? Then the same value stays acceptable on update.

func hasInvalidLabelValueInAffinitySelector(spec *corev1.PodSpec) bool {
	if spec.Affinity == nil {
		return false
	}
	terms := func(req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm) bool {
		for _, t := range req {
			if metav1validation.LabelSelectorHasInvalidLabelValue(t.LabelSelector) || metav1validation.LabelSelectorHasInvalidLabelValue(t.NamespaceSelector) {
				return true
			}
		}
		for _, t := range pref {
			if metav1validation.LabelSelectorHasInvalidLabelValue(t.PodAffinityTerm.LabelSelector) || metav1validation.LabelSelectorHasInvalidLabelValue(t.PodAffinityTerm.NamespaceSelector) {
				return true
			}
		}
		return false
	}
	if pa := spec.Affinity.PodAffinity; pa != nil && terms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution) {
		return true
	}
	if paa := spec.Affinity.PodAntiAffinity; paa != nil && terms(paa.RequiredDuringSchedulingIgnoredDuringExecution, paa.PreferredDuringSchedulingIgnoredDuringExecution) {
		return true
	}
	return false
}

func hasInvalidLabelValueInRequiredNodeAffinity(spec *corev1.PodSpec) bool {
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil || spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	for _, term := range spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, req := range term.MatchExpressions {
			for _, v := range req.Values {
				if len(validation.IsValidLabelValue(v)) > 0 {
					return true
				}
			}
		}
	}
	return false
}

func hasInvalidTopologySpreadSelector(spec *corev1.PodSpec) bool {
	for _, c := range spec.TopologySpreadConstraints {
		if len(metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
			return true
		}
	}
	return false
}

func hasIndivisibleHugePages(spec *corev1.PodSpec) bool {
	found := false
	visitContainers(spec, field.NewPath("spec"), func(c *corev1.Container, _ *field.Path) {
		for _, list := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
			for name, q := range list {
				if isHugePageResourceName(name) && !isHugePageResourceValueDivisible(name, q) {
					found = true
				}
			}
		}
	})
	return found
}

func hasNonLocalProjectedTokenPath(spec *corev1.PodSpec) bool {
	for _, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil && len(validateLocalNonReservedPath(s.ServiceAccountToken.Path, field.NewPath("path"))) > 0 {
				return true
			}
		}
	}
	return false
}

func hasNamespacedSysctlWithHostNamespaces(spec *corev1.PodSpec) bool {
	if spec.SecurityContext == nil {
		return false
	}
	for _, s := range spec.SecurityContext.Sysctls {
		ns := sysctlNamespaceOf(s.Name)
		if (spec.HostNetwork && ns == sysctlNetNamespace) || (spec.HostIPC && ns == sysctlIPCNamespace) {
			return true
		}
	}
	return false
}

func hasRelaxedDNSSearch(spec *corev1.PodSpec) bool {
	if spec.DNSConfig == nil {
		return false
	}
	for _, s := range spec.DNSConfig.Searches {
		if s == "." || len(validation.IsDNS1123Subdomain(trimDot(s))) > 0 {
			return true
		}
	}
	return false
}

func trimDot(s string) string {
	if len(s) > 0 && s[len(s)-1] == '.' {
		return s[:len(s)-1]
	}
	return s
}

func hasZeroSleepAction(spec *corev1.PodSpec) bool {
	found := false
	visitContainers(spec, field.NewPath("spec"), func(c *corev1.Container, _ *field.Path) {
		if c.Lifecycle == nil {
			return
		}
		for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil && h.Sleep != nil && h.Sleep.Seconds == 0 {
				found = true
			}
		}
	})
	return found
}
