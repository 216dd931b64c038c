package validation

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/apis/convert"
)

// Upstream's bounds of a behavior's rules.
const (
	maxHPAStabilizationWindowSeconds = 3600
	maxHPAPeriodSeconds              = 1800
)

// ValidateHorizontalPodAutoscalerV1 validates an autoscaling/v1 HPA as the
// autoscaling/v2 object it is stored as, so its errors name the fields
// upstream's do (upstream validates its internal type, which is v2's).
func ValidateHorizontalPodAutoscalerV1(o *autoscalingv1.HorizontalPodAutoscaler) field.ErrorList {
	cur, err := convert.HPAFromV1(o)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath(""), err)}
	}
	return ValidateHorizontalPodAutoscaler(cur)
}

// ValidateHorizontalPodAutoscalerV1Update validates an update of an
// autoscaling/v1 HPA as the update of the autoscaling/v2 objects.
func ValidateHorizontalPodAutoscalerV1Update(o, p *autoscalingv1.HorizontalPodAutoscaler) field.ErrorList {
	cur, err := convert.HPAFromV1(o)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath(""), err)}
	}
	prev, err := convert.HPAFromV1(p)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath(""), err)}
	}
	return ValidateHorizontalPodAutoscalerUpdate(cur, prev)
}

// ValidateHorizontalPodAutoscaler validates an HPA on create, as upstream's
// ValidateHorizontalPodAutoscaler.
func ValidateHorizontalPodAutoscaler(h *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	allErrs := validateObjectMeta(&h.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	allErrs = append(allErrs, validateHPASpec(&h.Spec, field.NewPath("spec"))...)
	return append(allErrs, validateHPAStatus(&h.Status, field.NewPath("status"))...)
}

// ValidateHorizontalPodAutoscalerUpdate validates an update of an HPA, of
// its spec or of its status.
func ValidateHorizontalPodAutoscalerUpdate(h, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&h.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateHPASpec(&h.Spec, field.NewPath("spec"))...)
	return append(allErrs, validateHPAStatus(&h.Status, field.NewPath("status"))...)
}

func validateHPAStatus(s *autoscalingv2.HorizontalPodAutoscalerStatus, p *field.Path) field.ErrorList {
	allErrs := validateNonnegativeField(int64(s.CurrentReplicas), p.Child("currentReplicas"))
	return append(allErrs, validateNonnegativeField(int64(s.DesiredReplicas), p.Child("desiredReplicas"))...)
}

func validateHPASpec(spec *autoscalingv2.HorizontalPodAutoscalerSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	// Scaling to zero is behind the alpha HPAScaleToZero gate upstream,
	// off by default: minReplicas is at least 1.
	if spec.MinReplicas != nil && *spec.MinReplicas < 1 {
		allErrs = append(allErrs, field.Invalid(p.Child("minReplicas"), *spec.MinReplicas, "must be greater than or equal to 1"))
	}
	if spec.MaxReplicas < 1 {
		allErrs = append(allErrs, field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than 0"))
	}
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		allErrs = append(allErrs, field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	allErrs = append(allErrs, validateCrossVersionObjectReference(spec.ScaleTargetRef, p.Child("scaleTargetRef"))...)
	for i, m := range spec.Metrics {
		allErrs = append(allErrs, validateMetricSpec(m, p.Child("metrics").Index(i))...)
	}
	if b := spec.Behavior; b != nil {
		allErrs = append(allErrs, validateScalingRules(b.ScaleUp, p.Child("behavior", "scaleUp"))...)
		allErrs = append(allErrs, validateScalingRules(b.ScaleDown, p.Child("behavior", "scaleDown"))...)
	}
	return allErrs
}

func validateCrossVersionObjectReference(ref autoscalingv2.CrossVersionObjectReference, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if ref.Kind == "" {
		allErrs = append(allErrs, field.Required(p.Child("kind"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(ref.Kind) {
			allErrs = append(allErrs, field.Invalid(p.Child("kind"), ref.Kind, msg))
		}
	}
	if ref.Name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(ref.Name) {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	return allErrs
}

var hpaMetricSourceTypes = []string{
	string(autoscalingv2.ContainerResourceMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
	string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.PodsMetricSourceType), string(autoscalingv2.ResourceMetricSourceType),
}

func validateMetricSpec(spec autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Type == "" {
		allErrs = append(allErrs, field.Required(p.Child("type"), "must specify a metric source type"))
	}
	// The sources present, in upstream's order; only the first is checked.
	var present []string
	add := func(name string, set bool, check func() field.ErrorList) {
		if !set {
			return
		}
		present = append(present, name)
		if len(present) == 1 {
			allErrs = append(allErrs, check()...)
		}
	}
	add("object", spec.Object != nil, func() field.ErrorList { return validateObjectSource(spec.Object, p.Child("object")) })
	add("external", spec.External != nil, func() field.ErrorList { return validateExternalSource(spec.External, p.Child("external")) })
	add("pods", spec.Pods != nil, func() field.ErrorList { return validatePodsSource(spec.Pods, p.Child("pods")) })
	add("resource", spec.Resource != nil, func() field.ErrorList {
		return validateResourceSource(string(spec.Resource.Name), spec.Resource.Target, p.Child("resource"), false)
	})
	add("containerResource", spec.ContainerResource != nil, func() field.ErrorList {
		errs := validateResourceSource(string(spec.ContainerResource.Name), spec.ContainerResource.Target, p.Child("containerResource"), true)
		if spec.ContainerResource.Container == "" {
			return append(errs, field.Required(p.Child("containerResource", "container"), "must specify a container"))
		}
		return append(errs, validateDNS1123Label(spec.ContainerResource.Container, p.Child("containerResource", "container"))...)
	})

	expected := ""
	switch spec.Type {
	case autoscalingv2.ObjectMetricSourceType:
		expected = "object"
	case autoscalingv2.PodsMetricSourceType:
		expected = "pods"
	case autoscalingv2.ResourceMetricSourceType:
		expected = "resource"
	case autoscalingv2.ExternalMetricSourceType:
		expected = "external"
	case autoscalingv2.ContainerResourceMetricSourceType:
		expected = "containerResource"
	default:
		allErrs = append(allErrs, field.NotSupported(p.Child("type"), spec.Type, hpaMetricSourceTypes))
	}
	if expected != "" {
		found := false
		for _, f := range present {
			found = found || f == expected
		}
		if !found {
			allErrs = append(allErrs, field.Required(p.Child(expected), "must populate information for the given metric source"))
		}
	}
	for _, f := range present {
		if f != expected {
			allErrs = append(allErrs, field.Forbidden(p.Child(f), "must populate the given metric source only"))
		}
	}
	return allErrs
}

func validateObjectSource(src *autoscalingv2.ObjectMetricSource, p *field.Path) field.ErrorList {
	allErrs := validateCrossVersionObjectReference(src.DescribedObject, p.Child("describedObject"))
	allErrs = append(allErrs, validateMetricIdentifier(src.Metric, p.Child("metric"))...)
	allErrs = append(allErrs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return allErrs
}

func validateExternalSource(src *autoscalingv2.ExternalMetricSource, p *field.Path) field.ErrorList {
	allErrs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	allErrs = append(allErrs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(p.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		allErrs = append(allErrs, field.Forbidden(p.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return allErrs
}

func validatePodsSource(src *autoscalingv2.PodsMetricSource, p *field.Path) field.ErrorList {
	allErrs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	allErrs = append(allErrs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return allErrs
}

func validateResourceSource(name string, target autoscalingv2.MetricTarget, p *field.Path, container bool) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), "must specify a resource name"))
	} else if container {
		allErrs = append(allErrs, validateContainerResourceName(corev1.ResourceName(name), p.Child("name"))...)
	}
	allErrs = append(allErrs, validateMetricTarget(target, p.Child("target"))...)
	if target.AverageUtilization == nil && target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(p.Child("target", "averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if target.AverageUtilization != nil && target.AverageValue != nil {
		allErrs = append(allErrs, field.Forbidden(p.Child("target", "averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return allErrs
}

func validateMetricTarget(mt autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if mt.Type == "" {
		allErrs = append(allErrs, field.Required(p.Child("type"), "must specify a metric target type"))
	}
	if mt.Type != autoscalingv2.UtilizationMetricType && mt.Type != autoscalingv2.ValueMetricType && mt.Type != autoscalingv2.AverageValueMetricType {
		allErrs = append(allErrs, field.Invalid(p.Child("type"), mt.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if mt.Value != nil && mt.Value.Sign() != 1 {
		allErrs = append(allErrs, field.Invalid(p.Child("value"), mt.Value.String(), "must be positive"))
	}
	if mt.AverageValue != nil && mt.AverageValue.Sign() != 1 {
		allErrs = append(allErrs, field.Invalid(p.Child("averageValue"), mt.AverageValue.String(), "must be positive"))
	}
	if mt.AverageUtilization != nil && *mt.AverageUtilization < 1 {
		allErrs = append(allErrs, field.Invalid(p.Child("averageUtilization"), *mt.AverageUtilization, "must be greater than 0"))
	}
	return allErrs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, p *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "must specify a metric name")}
	}
	var allErrs field.ErrorList
	for _, msg := range path.IsValidPathSegmentName(id.Name) {
		allErrs = append(allErrs, field.Invalid(p.Child("name"), id.Name, msg))
	}
	return allErrs
}

var (
	hpaSelectPolicies = []string{string(autoscalingv2.DisabledPolicySelect), string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect)}
	hpaPolicyTypes    = []string{string(autoscalingv2.PercentScalingPolicy), string(autoscalingv2.PodsScalingPolicy)}
)

func validateScalingRules(rules *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if rules == nil {
		return nil
	}
	var allErrs field.ErrorList
	if w := rules.StabilizationWindowSeconds; w != nil && *w < 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, "must be greater than or equal to zero"))
	}
	if w := rules.StabilizationWindowSeconds; w != nil && *w > maxHPAStabilizationWindowSeconds {
		allErrs = append(allErrs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w,
			fmt.Sprintf("must be less than or equal to %v", maxHPAStabilizationWindowSeconds)))
	}
	if sp := rules.SelectPolicy; sp != nil && *sp != autoscalingv2.MaxChangePolicySelect && *sp != autoscalingv2.MinChangePolicySelect &&
		*sp != autoscalingv2.DisabledPolicySelect {
		allErrs = append(allErrs, field.NotSupported(p.Child("selectPolicy"), *sp, hpaSelectPolicies))
	}
	if len(rules.Policies) == 0 {
		allErrs = append(allErrs, field.Required(p.Child("policies"), "must specify at least one Policy"))
	}
	for i, policy := range rules.Policies {
		ip := p.Child("policies").Index(i)
		if policy.Type != autoscalingv2.PodsScalingPolicy && policy.Type != autoscalingv2.PercentScalingPolicy {
			allErrs = append(allErrs, field.NotSupported(ip.Child("type"), policy.Type, hpaPolicyTypes))
		}
		if policy.Value <= 0 {
			allErrs = append(allErrs, field.Invalid(ip.Child("value"), policy.Value, "must be greater than zero"))
		}
		if policy.PeriodSeconds <= 0 {
			allErrs = append(allErrs, field.Invalid(ip.Child("periodSeconds"), policy.PeriodSeconds, "must be greater than zero"))
		}
		if policy.PeriodSeconds > maxHPAPeriodSeconds {
			allErrs = append(allErrs, field.Invalid(ip.Child("periodSeconds"), policy.PeriodSeconds,
				fmt.Sprintf("must be less than or equal to %v", maxHPAPeriodSeconds)))
		}
	}
	return allErrs
}
