package integration

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// HorizontalPodAutoscalers are served as autoscaling/v2 (stored,
// preferred) and autoscaling/v1 from the same objects: each version reads
// what the other wrote, a v1 client's update keeps what only v2 can say,
// /status is served, bad specs are refused with upstream's Status, and
// kubectl get hpa prints upstream's columns.
func TestHorizontalPodAutoscalerVersions(t *testing.T) {
	ts := start(t, nil)
	c := ctx(t)
	v1c, v2c := ts.Client.AutoscalingV1().HorizontalPodAutoscalers("default"), ts.Client.AutoscalingV2().HorizontalPodAutoscalers("default")

	t.Run("discovery prefers v2", func(t *testing.T) {
		code, body := raw(t, ts, http.MethodGet, "/apis/autoscaling", "", nil)
		var g metav1.APIGroup
		if code != http.StatusOK || json.Unmarshal(body, &g) != nil || g.PreferredVersion.Version != "v2" || len(g.Versions) != 2 {
			t.Fatalf("%d %s", code, body)
		}
	})

	t.Run("v1 without a target reads as v2 with upstream's defaults", func(t *testing.T) {
		if _, err := v1c.Create(c, &autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "from-v1"},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MaxReplicas: 3},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h, err := v2c.Get(c, "from-v1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(h.Spec.MinReplicas, 0) != 1 || len(h.Spec.Metrics) != 1 || h.Spec.Metrics[0].Resource == nil ||
			h.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU || ptr.Deref(h.Spec.Metrics[0].Resource.Target.AverageUtilization, 0) != 80 {
			t.Errorf("v2 view: %+v", h.Spec)
		}
		if len(h.Annotations) != 0 {
			t.Errorf("annotations stored: %v", h.Annotations)
		}
		// The status subresource, written in v2, reads in v1.
		h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 2, CurrentMetrics: []autoscalingv2.MetricStatus{{
			Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](30), AverageValue: ptr.To(resource.MustParse("30m"))}}}}}
		h.Spec.MaxReplicas = 9 // not written through /status
		if _, err := v2c.UpdateStatus(c, h, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		v1h, err := v1c.Get(c, "from-v1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(v1h.Spec.TargetCPUUtilizationPercentage, 0) != 80 || ptr.Deref(v1h.Status.CurrentCPUUtilizationPercentage, 0) != 30 ||
			v1h.Status.CurrentReplicas != 2 || v1h.Spec.MaxReplicas != 3 {
			t.Errorf("v1 view: spec %+v status %+v", v1h.Spec, v1h.Status)
		}
		// A v1 client that drops the annotations changes no status.
		v1h.Annotations = nil
		if _, err := v1c.Update(c, v1h, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		h, err = v2c.Get(c, "from-v1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Status.CurrentMetrics) != 1 || h.Status.CurrentMetrics[0].Resource.Current.AverageValue == nil ||
			h.Status.CurrentMetrics[0].Resource.Current.AverageValue.String() != "30m" {
			t.Errorf("status after a v1 update without annotations: %+v", h.Status)
		}
	})

	t.Run("a v1 update keeps v2's metrics and behavior", func(t *testing.T) {
		if _, err := v2c.Create(c, &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "from-v2"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db"},
				MaxReplicas:    5,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("200Mi"))}}}},
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](30)}},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		v1h, err := v1c.Get(c, "from-v2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v1h.Spec.TargetCPUUtilizationPercentage != nil || v1h.Annotations["autoscaling.alpha.kubernetes.io/metrics"] == "" ||
			!strings.Contains(v1h.Annotations["autoscaling.alpha.kubernetes.io/behavior"], `"StabilizationWindowSeconds":30`) {
			t.Fatalf("v1 view: %+v annotations %v", v1h.Spec, v1h.Annotations)
		}
		v1h.Spec.MaxReplicas = 7
		if _, err := v1c.Update(c, v1h, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		h, err := v2c.Get(c, "from-v2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h.Spec.MaxReplicas != 7 || len(h.Spec.Metrics) != 1 || h.Spec.Metrics[0].Resource.Name != corev1.ResourceMemory ||
			h.Spec.Behavior == nil || ptr.Deref(h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds, 0) != 30 || h.Spec.Behavior.ScaleUp == nil ||
			len(h.Annotations) != 0 {
			t.Errorf("after a v1 update: %+v annotations %v", h.Spec, h.Annotations)
		}
	})

	t.Run("bad specs get a 422 Status naming the field", func(t *testing.T) {
		for _, tc := range []struct{ path, body, field string }{
			{"/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
				`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"bad"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":5,"maxReplicas":2}}`,
				"spec.maxReplicas"},
			{"/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
				`{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"bad"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"minReplicas":5,"maxReplicas":2}}`,
				"spec.maxReplicas"},
			{"/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
				`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"bad"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":2,"behavior":{"scaleUp":{"selectPolicy":"Sum","policies":[{"type":"Pods","value":1,"periodSeconds":15}]}}}}`,
				"spec.behavior.scaleUp.selectPolicy"},
		} {
			code, body := raw(t, ts, http.MethodPost, tc.path, "application/json", []byte(tc.body))
			if code != http.StatusUnprocessableEntity {
				t.Fatalf("%s: %d %s", tc.field, code, body)
			}
			s := status(t, body)
			if s.Reason != metav1.StatusReasonInvalid || s.Details == nil || len(s.Details.Causes) == 0 || s.Details.Causes[0].Field != tc.field {
				t.Errorf("%s: %+v", tc.field, s)
			}
		}
	})

	t.Run("kubectl get hpa", func(t *testing.T) {
		if _, err := os.Stat("/usr/bin/kubectl"); err != nil {
			t.Skip("no kubectl at /usr/bin/kubectl")
		}
		out := mustKubectl(t, c, ts, "get", "hpa", "from-v1")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || !regexp.MustCompile(`^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE$`).MatchString(lines[0]) ||
			!regexp.MustCompile(`^from-v1\s+Deployment/web\s+cpu: 30%/80%\s+1\s+3\s+2\s+\d+s$`).MatchString(lines[1]) {
			t.Errorf("kubectl get hpa:\n%s", out)
		}
		out = mustKubectl(t, c, ts, "get", "horizontalpodautoscalers.v1.autoscaling", "from-v2", "-o", "jsonpath={.spec.maxReplicas} {.apiVersion}")
		if out != "7 autoscaling/v1" {
			t.Errorf("v1 through kubectl: %q", out)
		}
		// kubectl autoscale reads the target and creates an HPA for it.
		if _, err := ts.Client.AppsV1().Deployments("default").Create(c, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "auto"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "auto"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "auto"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if out := mustKubectl(t, c, ts, "autoscale", "deployment", "auto", "--cpu-percent=60", "--min=2", "--max=4"); !strings.Contains(out, "horizontalpodautoscaler.autoscaling/auto autoscaled") {
			t.Errorf("kubectl autoscale: %s", out)
		}
		h, err := v2c.Get(c, "auto", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(h.Spec.MinReplicas, 0) != 2 || h.Spec.MaxReplicas != 4 || h.Spec.ScaleTargetRef.Kind != "Deployment" ||
			len(h.Spec.Metrics) != 1 || ptr.Deref(h.Spec.Metrics[0].Resource.Target.AverageUtilization, 0) != 60 {
			t.Errorf("kubectl autoscale made %+v", h.Spec)
		}
	})
}
