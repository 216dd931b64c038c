package convert

import (
	"encoding/json"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func fullHPA() *autoscalingv2.HorizontalPodAutoscaler {
	q := resource.MustParse
	now := metav1.Unix(1700000000, 0)
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: map[string]string{"keep": "me"}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2), MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("100Mi"))}}},
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("10"))}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(q("30"))}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: "svc"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "rps"},
					Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, Value: ptr.To(q("0")), AverageValue: ptr.To(q("5"))}}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: corev1.ResourceCPU,
					Container: "app", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}},
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60), SelectPolicy: ptr.To(autoscalingv2.MinChangePolicySelect),
					Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 30}}},
			},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			LastScaleTime: &now, CurrentReplicas: 3, DesiredReplicas: 4,
			CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceMemory,
					Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(q("90Mi"))}}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
					Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(q("150m")), AverageUtilization: ptr.To[int32](75)}}},
			},
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
				{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: "ReadyForNewScale", Message: "m"},
			},
		},
	}
}

// A v2 HPA read through v1 and written back is the same object: the CPU
// target and utilization are v1's fields, everything else rides in
// upstream's annotations, which do not reach the stored object.
func TestHPARoundTripThroughV1(t *testing.T) {
	in := fullHPA()
	v1, err := HPAToV1(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(v1.Spec.TargetCPUUtilizationPercentage, 0); got != 50 {
		t.Errorf("targetCPUUtilizationPercentage %d, want 50", got)
	}
	if got := ptr.Deref(v1.Status.CurrentCPUUtilizationPercentage, 0); got != 75 {
		t.Errorf("currentCPUUtilizationPercentage %d, want 75", got)
	}
	for _, k := range []string{HPAMetricSpecsAnnotation, HPAMetricStatusesAnnotation, HPAConditionsAnnotation, HPABehaviorSpecsAnnotation, "keep"} {
		if _, ok := v1.Annotations[k]; !ok {
			t.Errorf("annotation %s missing: %v", k, v1.Annotations)
		}
	}
	// Upstream encodes the behavior from its internal type: Go field names.
	if b := v1.Annotations[HPABehaviorSpecsAnnotation]; !strings.Contains(b, `"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Min"`) {
		t.Errorf("behavior annotation %s", b)
	}
	back, err := HPAFromV1(v1)
	if err != nil {
		t.Fatal(err)
	}
	// The CPU target moves to the end, as upstream's conversion puts it.
	want := in.DeepCopy()
	cpu := want.Spec.Metrics[len(want.Spec.Metrics)-1]
	want.Spec.Metrics = append(want.Spec.Metrics[:len(want.Spec.Metrics)-1], cpu)
	want.TypeMeta = back.TypeMeta
	if !equality.Semantic.DeepEqual(back, want) {
		a, _ := json.MarshalIndent(back, "", " ")
		b, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("round trip differs:\n got %s\nwant %s", a, b)
	}
	if _, ok := back.Annotations[HPAMetricSpecsAnnotation]; ok {
		t.Errorf("round-trip annotations kept on the stored object: %v", back.Annotations)
	}
}

func TestHPAFromV1(t *testing.T) {
	tests := []struct {
		name string
		in   autoscalingv1.HorizontalPodAutoscaler
		want []autoscalingv2.MetricSpec
	}{
		{
			name: "no target: upstream's 80% CPU",
			in:   autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3}},
			want: []autoscalingv2.MetricSpec{cpuUtilization(80)},
		},
		{
			name: "a CPU target",
			in: autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
				TargetCPUUtilizationPercentage: ptr.To[int32](20)}},
			want: []autoscalingv2.MetricSpec{cpuUtilization(20)},
		},
		{
			name: "an unparseable annotation is ignored",
			in: autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{HPAMetricSpecsAnnotation: "{"}},
				Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3}},
			want: []autoscalingv2.MetricSpec{cpuUtilization(80)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := HPAFromV1(&tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got.Spec.Metrics, tt.want) {
				t.Errorf("metrics %+v, want %+v", got.Spec.Metrics, tt.want)
			}
			if len(got.Annotations) != 0 {
				t.Errorf("annotations %v, want none", got.Annotations)
			}
		})
	}
}
