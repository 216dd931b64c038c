package validation

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func validHPA() *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 5,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}},
		},
	}
}

func TestValidateHorizontalPodAutoscaler(t *testing.T) {
	type want struct {
		typ   field.ErrorType
		field string
	}
	tests := []struct {
		name string
		edit func(h *autoscalingv2.HorizontalPodAutoscaler)
		want []want
	}{
		{name: "valid", edit: func(*autoscalingv2.HorizontalPodAutoscaler) {}},
		{name: "minReplicas above maxReplicas", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](7) },
			want: []want{{field.ErrorTypeInvalid, "spec.maxReplicas"}}},
		{name: "minReplicas 0", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](0) },
			want: []want{{field.ErrorTypeInvalid, "spec.minReplicas"}}},
		{name: "maxReplicas 0", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 0 },
			want: []want{{field.ErrorTypeInvalid, "spec.maxReplicas"}, {field.ErrorTypeInvalid, "spec.maxReplicas"}}},
		{name: "no target kind or name", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{}
		}, want: []want{{field.ErrorTypeRequired, "spec.scaleTargetRef.kind"}, {field.ErrorTypeRequired, "spec.scaleTargetRef.name"}}},
		{name: "target name with a slash", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.Name = "a/b" },
			want: []want{{field.ErrorTypeInvalid, "spec.scaleTargetRef.name"}}},
		{name: "utilization and value both", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.AverageValue = ptr.To(resource.MustParse("100m"))
		}, want: []want{{field.ErrorTypeForbidden, "spec.metrics[0].resource.target.averageValue"}}},
		{name: "utilization 0", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](0)
		}, want: []want{{field.ErrorTypeInvalid, "spec.metrics[0].resource.target.averageUtilization"}}},
		{name: "unknown metric type", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics[0].Type = "Magic" },
			want: []want{{field.ErrorTypeNotSupported, "spec.metrics[0].type"}, {field.ErrorTypeForbidden, "spec.metrics[0].resource"}}},
		{name: "type without its source", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Type = autoscalingv2.PodsMetricSourceType
		},
			want: []want{{field.ErrorTypeRequired, "spec.metrics[0].pods"}, {field.ErrorTypeForbidden, "spec.metrics[0].resource"}}},
		{name: "pods metric without averageValue", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType}}}}
		}, want: []want{{field.ErrorTypeRequired, "spec.metrics[0].pods.target.averageValue"}}},
		{name: "bad behavior", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](3601), SelectPolicy: ptr.To(autoscalingv2.ScalingPolicySelect("Sum")),
					Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Nodes", Value: 0, PeriodSeconds: 1801}}},
				ScaleDown: &autoscalingv2.HPAScalingRules{},
			}
		}, want: []want{
			{field.ErrorTypeInvalid, "spec.behavior.scaleUp.stabilizationWindowSeconds"},
			{field.ErrorTypeNotSupported, "spec.behavior.scaleUp.selectPolicy"},
			{field.ErrorTypeNotSupported, "spec.behavior.scaleUp.policies[0].type"},
			{field.ErrorTypeInvalid, "spec.behavior.scaleUp.policies[0].value"},
			{field.ErrorTypeInvalid, "spec.behavior.scaleUp.policies[0].periodSeconds"},
			{field.ErrorTypeRequired, "spec.behavior.scaleDown.policies"},
		}},
		{name: "negative status", edit: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Status.DesiredReplicas = -1 },
			want: []want{{field.ErrorTypeInvalid, "status.desiredReplicas"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := validHPA()
			tt.edit(h)
			errs := ValidateHorizontalPodAutoscaler(h)
			if len(errs) != len(tt.want) {
				t.Fatalf("got %v, want %v", errs, tt.want)
			}
			for i, e := range errs {
				if e.Type != tt.want[i].typ || e.Field != tt.want[i].field {
					t.Errorf("error %d: %s %s, want %s %s", i, e.Type, e.Field, tt.want[i].typ, tt.want[i].field)
				}
			}
		})
	}
}

// An autoscaling/v1 HPA is checked as the v2 object it is stored as, with
// upstream's field names; an update may not rename it.
func TestValidateHorizontalPodAutoscalerV1(t *testing.T) {
	h := &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "1"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](4), MaxReplicas: 2, TargetCPUUtilizationPercentage: ptr.To[int32](-5),
		},
	}
	errs := ValidateHorizontalPodAutoscalerV1(h)
	got := map[string]bool{}
	for _, e := range errs {
		got[e.Field] = true
	}
	if len(errs) != 2 || !got["spec.maxReplicas"] || !got["spec.metrics[0].resource.target.averageUtilization"] {
		t.Errorf("errors %v", errs)
	}
	old := h.DeepCopy()
	old.Spec.MinReplicas, old.Spec.TargetCPUUtilizationPercentage = ptr.To[int32](1), nil
	renamed := old.DeepCopy()
	renamed.Name = "other"
	if errs := ValidateHorizontalPodAutoscalerV1Update(renamed, old); len(errs) != 1 || errs[0].Field != "metadata.name" {
		t.Errorf("rename: %v", errs)
	}
}
