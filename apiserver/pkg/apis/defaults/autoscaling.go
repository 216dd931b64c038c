package defaults

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// DefaultHorizontalPodAutoscalerV1 applies upstream's v1 defaults:
// minReplicas only; the 80% CPU target of an HPA without one is added by the
// conversion to v2.
func DefaultHorizontalPodAutoscalerV1(h *autoscalingv1.HorizontalPodAutoscaler) {
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = ptr.To[int32](1)
	}
}

// DefaultHorizontalPodAutoscaler applies upstream's autoscaling/v2
// defaults: minReplicas 1, an 80% CPU utilization target when no metric is
// named, and a behavior's missing rules filled from the default ones.
func DefaultHorizontalPodAutoscaler(h *autoscalingv2.HorizontalPodAutoscaler) {
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = ptr.To[int32](1)
	}
	if len(h.Spec.Metrics) == 0 {
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)},
			},
		}}
	}
	if b := h.Spec.Behavior; b != nil {
		b.ScaleUp = fillScalingRules(b.ScaleUp, DefaultHPAScaleUpRules())
		b.ScaleDown = fillScalingRules(b.ScaleDown, DefaultHPAScaleDownRules())
	}
}

// DefaultHPAScaleUpRules are upstream's: no stabilization, the larger of
// 4 pods or doubling every 15 seconds.
func DefaultHPAScaleUpRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](0),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// DefaultHPAScaleDownRules are upstream's: all pods may go every 15
// seconds; the window is left unset so that the controller's
// --horizontal-pod-autoscaler-downscale-stabilization applies.
func DefaultHPAScaleDownRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// fillScalingRules keeps what rules set and takes the rest from def.
func fillScalingRules(rules, def *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if rules == nil {
		return def
	}
	if rules.StabilizationWindowSeconds != nil {
		def.StabilizationWindowSeconds = rules.StabilizationWindowSeconds
	}
	if rules.SelectPolicy != nil {
		def.SelectPolicy = rules.SelectPolicy
	}
	if rules.Policies != nil {
		def.Policies = rules.Policies
	}
	return def
}
