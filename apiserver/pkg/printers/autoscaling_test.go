package printers

import (
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestHorizontalPodAutoscalerTable(t *testing.T) {
	p := newTestPrinter()
	created := metav1.NewTime(now.Add(-3 * time.Minute))
	cpu := func(target int32) autoscalingv2.MetricSpec {
		return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(target)}}}
	}
	mem := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("100Mi"))}}}
	pods := autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))}}}
	tests := []struct {
		name    string
		spec    autoscalingv2.HorizontalPodAutoscalerSpec
		status  autoscalingv2.HorizontalPodAutoscalerStatus
		targets string
		min     string
	}{
		{name: "unmeasured", spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 10, Metrics: []autoscalingv2.MetricSpec{cpu(50)}},
			targets: "cpu: <unknown>/50%", min: "1"},
		{name: "measured", spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 10, Metrics: []autoscalingv2.MetricSpec{cpu(50), mem}},
			status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
					Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](72), AverageValue: ptr.To(resource.MustParse("72m"))}}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceMemory,
					Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(resource.MustParse("50Mi"))}}},
			}},
			targets: "cpu: 72%/50%, memory: 50Mi/100Mi", min: "<unset>"},
		{name: "more than two", spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 10, Metrics: []autoscalingv2.MetricSpec{cpu(50), mem, pods}},
			targets: "cpu: <unknown>/50%, memory: <unknown>/100Mi + 1 more...", min: "<unset>"},
		{name: "no metrics", spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 10}, targets: "<none>", min: "<unset>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
			h := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: created}, Spec: tt.spec, Status: tt.status}
			table, err := p.Table(&autoscalingv2.HorizontalPodAutoscalerList{Items: []autoscalingv2.HorizontalPodAutoscaler{*h}}, false)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range table.ColumnDefinitions {
				names = append(names, c.Name)
			}
			if got := names; len(got) != 7 || got[1] != "Reference" || got[2] != "Targets" || got[3] != "MinPods" || got[4] != "MaxPods" || got[5] != "Replicas" || got[6] != "Age" {
				t.Errorf("columns %v", got)
			}
			want := []any{"web", "Deployment/web", tt.targets, tt.min, int64(10), int64(tt.status.CurrentReplicas), "3m"}
			if got := table.Rows[0].Cells; len(got) != len(want) {
				t.Fatalf("cells %v, want %v", got, want)
			}
			for i, c := range table.Rows[0].Cells {
				if c != want[i] {
					t.Errorf("cell %d: %#v, want %#v", i, c, want[i])
				}
			}
		})
	}
}

// An autoscaling/v1 HPA prints as upstream prints it: through v2, so an
// HPA without a target shows the default 80% CPU target.
func TestHorizontalPodAutoscalerV1Table(t *testing.T) {
	h := &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "StatefulSet", Name: "db"},
			MinReplicas: ptr.To[int32](2), MaxReplicas: 4},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, CurrentCPUUtilizationPercentage: ptr.To[int32](10)},
	}
	table, err := newTestPrinter().Table(h, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"web", "StatefulSet/db", "cpu: 10%/80%", "2", int64(4), int64(2), "60m"}
	for i, c := range table.Rows[0].Cells {
		if c != want[i] {
			t.Errorf("cell %d: %#v, want %#v", i, c, want[i])
		}
	}
	if table.Rows[0].Object.Object != h {
		t.Errorf("row object %T, want the v1 object", table.Rows[0].Object.Object)
	}
}
