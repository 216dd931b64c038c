package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	cmapp "skiff.dev/controller-manager/app"
)

// TestHPAScalesUnderLoad: an HPA on a Deployment whose pods burn CPU (a
// 200m limit, twice their 100m request, for 15 s after they start) scales
// it from 1 to 2 on the kubelets' real measurements through the built-in
// metrics.k8s.io, and back to 1 once the load is gone and its 3 s
// scale-down window has passed. Metrics every 2 s and an HPA sync every
// 2 s keep it short.
func TestHPAScalesUnderLoad(t *testing.T) {
	c := startClusterOpts(t, clusterOptions{
		apiserver: func(o *server.Options) { o.MetricResolution = 2 * time.Second },
		controllerManager: func(o *cmapp.Options) {
			o.Controllers = append(o.Controllers, "deployment")
			o.Controller.HorizontalPodAutoscaler.SyncPeriod = 2 * time.Second
		},
	})
	ctx := context.Background()
	labels := map[string]string{"app": "hpa-burn"}
	cpu := func(s string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s)}
	}
	if _, err := c.client.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "burn"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{{Name: "burn", Image: "busybox",
						Command:   []string{"sh", "-c", "timeout 15 sh -c 'while :; do :; done'; exec sleep 3600"},
						Resources: corev1.ResourceRequirements{Requests: cpu("100m"), Limits: cpu("200m")}}},
				},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Gone before the kubelet stops, so that it tears the pods down.
		_ = c.client.AutoscalingV2().HorizontalPodAutoscalers("default").Delete(ctx, "burn", metav1.DeleteOptions{})
		_ = c.client.AppsV1().Deployments("default").Delete(ctx, "burn", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
		_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			pods, err := c.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=hpa-burn"})
			return err == nil && len(pods.Items) == 0, nil
		})
	})
	if _, err := c.client.AutoscalingV2().HorizontalPodAutoscalers("default").Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "burn"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "burn"},
			MaxReplicas:    2,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](3)}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	var last string
	waitFor := func(what string, timeout time.Duration, ok func(h *autoscalingv2.HorizontalPodAutoscaler) bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			h, err := c.client.AutoscalingV2().HorizontalPodAutoscalers("default").Get(ctx, "burn", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			last = c.kubectl(t, "get", "hpa", "burn", "--no-headers")
			return ok(h), nil
		}); err != nil {
			t.Fatalf("%s: %v; last: %s\n%s", what, err, last, c.kubectl(t, "describe", "hpa", "burn"))
		}
		t.Logf("%s after %s: %s", what, time.Since(start).Round(100*time.Millisecond), strings.TrimSpace(last))
	}
	waitFor("scaled up under load", 90*time.Second, func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return h.Status.DesiredReplicas == 2
	})
	waitFor("scaled back down once idle", 120*time.Second, func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return h.Status.DesiredReplicas == 1 && h.Status.CurrentReplicas == 1
	})
	d, err := c.client.AppsV1().Deployments("default").Get(ctx, "burn", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 1 {
		t.Fatalf("deployment replicas %v: %v", d.Spec.Replicas, err)
	}
	evs := c.kubectl(t, "get", "events", "--field-selector", "involvedObject.kind=HorizontalPodAutoscaler,reason=SuccessfulRescale", "-o", "custom-columns=MSG:.message", "--no-headers")
	if !strings.Contains(evs, "New size: 2; reason: cpu resource utilization (percentage of request) above target") ||
		!strings.Contains(evs, "New size: 1; reason: All metrics below target") {
		t.Errorf("SuccessfulRescale events:\n%s", evs)
	}
}
