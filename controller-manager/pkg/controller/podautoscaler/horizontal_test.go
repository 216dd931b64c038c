package podautoscaler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fakescale "k8s.io/client-go/scale/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// harness is a controller over fake clients: one Deployment "web" whose
// /scale the test sets, pods in the pod informer, and fake metrics.
type harness struct {
	c        *Controller
	client   *fake.Clientset
	scales   *fakescale.FakeScaleClient
	recorder *record.FakeRecorder
	clock    *clocktesting.FakeClock
	metrics  *fakeMetrics
	replicas int32 // the Deployment's spec.replicas, as /scale reads it
	updates  []int32
	hpa      *autoscalingv2.HorizontalPodAutoscaler
}

func newHarness(t *testing.T, hpa *autoscalingv2.HorizontalPodAutoscaler, replicas int32, pods []*corev1.Pod, usage map[string]int64) *harness {
	t.Helper()
	h := &harness{
		client:   fake.NewSimpleClientset(hpa),
		scales:   &fakescale.FakeScaleClient{},
		recorder: record.NewFakeRecorder(100),
		clock:    clocktesting.NewFakeClock(start),
		metrics:  &fakeMetrics{usage: usage, timestamp: start, window: 30 * time.Second},
		replicas: replicas,
		hpa:      hpa,
	}
	h.scales.AddReactor("get", "deployments", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.(k8stesting.GetAction).GetName() != "web" {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, action.(k8stesting.GetAction).GetName())
		}
		return true, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: autoscalingv1.ScaleSpec{Replicas: h.replicas}, Status: autoscalingv1.ScaleStatus{Replicas: h.replicas, Selector: "app=web"}}, nil
	})
	h.scales.AddReactor("update", "deployments", func(action k8stesting.Action) (bool, runtime.Object, error) {
		sc := action.(k8stesting.UpdateAction).GetObject().(*autoscalingv1.Scale)
		h.replicas = sc.Spec.Replicas
		h.updates = append(h.updates, sc.Spec.Replicas)
		return true, sc, nil
	})
	mapper := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "apps", Version: "v1"}})
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, apimeta.RESTScopeNamespace)
	f := informers.NewSharedInformerFactory(h.client, time.Minute)
	for _, p := range pods {
		if err := f.Core().V1().Pods().Informer().GetIndexer().Add(p); err != nil {
			t.Fatal(err)
		}
	}
	opts := DefaultOptions()
	opts.Clock = h.clock
	c, err := NewController(h.client, f.Autoscaling().V2().HorizontalPodAutoscalers(), f.Core().V1().Pods(), h.scales, mapper, h.metrics,
		h.recorder, metrics.New(prometheus.NewRegistry()), opts)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	return h
}

// reconcile runs one sync of the HPA, then takes the status it wrote.
func (h *harness) reconcile(t *testing.T) error {
	t.Helper()
	err := h.c.reconcileAutoscaler(context.Background(), h.hpa, "default/web")
	got, gerr := h.client.AutoscalingV2().HorizontalPodAutoscalers("default").Get(context.Background(), "web", metav1.GetOptions{})
	if gerr != nil {
		t.Fatal(gerr)
	}
	h.hpa = got
	return err
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (h *harness) condition(typ autoscalingv2.HorizontalPodAutoscalerConditionType) autoscalingv2.HorizontalPodAutoscalerCondition {
	for _, c := range h.hpa.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return autoscalingv2.HorizontalPodAutoscalerCondition{}
}

func (h *harness) wantCondition(t *testing.T, typ autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason string) {
	t.Helper()
	if c := h.condition(typ); c.Status != status || c.Reason != reason {
		t.Errorf("condition %s: %s %s (%s), want %s %s", typ, c.Status, c.Reason, c.Message, status, reason)
	}
}

func cpuHPA(target int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(target)}}}},
		},
	}
}

func threePods() []*corev1.Pod {
	return []*corev1.Pod{testPod("a", running, 1000), testPod("b", running, 1000), testPod("c", running, 1000)}
}

func TestReconcileScalesUp(t *testing.T) {
	h := newHarness(t, cpuHPA(50), 3, threePods(), map[string]int64{"a": 900, "b": 900, "c": 900})
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if len(h.updates) != 1 || h.updates[0] != 6 {
		t.Fatalf("scale updates %v, want [6]", h.updates)
	}
	ev := h.events()
	if len(ev) != 1 || ev[0] != "Normal SuccessfulRescale New size: 6; reason: cpu resource utilization (percentage of request) above target" {
		t.Errorf("events %q", ev)
	}
	s := h.hpa.Status
	if s.CurrentReplicas != 3 || s.DesiredReplicas != 6 || s.LastScaleTime == nil || !s.LastScaleTime.Time.Equal(start) {
		t.Errorf("status %+v", s)
	}
	if len(s.CurrentMetrics) != 1 || ptr.Deref(s.CurrentMetrics[0].Resource.Current.AverageUtilization, 0) != 90 ||
		s.CurrentMetrics[0].Resource.Current.AverageValue.String() != "900m" {
		t.Errorf("current metrics %+v", s.CurrentMetrics)
	}
	h.wantCondition(t, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale")
	h.wantCondition(t, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound")
	h.wantCondition(t, autoscalingv2.ScalingLimited, corev1.ConditionFalse, "DesiredWithinRange")
}

// Without behavior a scale-down waits out the downscale window (5 min):
// the first recommendation is the size the HPA found.
func TestReconcileScaleDownAfterWindow(t *testing.T) {
	h := newHarness(t, cpuHPA(50), 3, threePods(), map[string]int64{"a": 100, "b": 100, "c": 100})
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if len(h.updates) != 0 {
		t.Fatalf("scaled to %v within the window", h.updates)
	}
	h.wantCondition(t, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized")
	if h.hpa.Status.DesiredReplicas != 3 {
		t.Errorf("desiredReplicas %d, want 3", h.hpa.Status.DesiredReplicas)
	}
	h.clock.Step(4 * time.Minute)
	if err := h.reconcile(t); err != nil || len(h.updates) != 0 {
		t.Fatalf("after 4 min: %v, updates %v", err, h.updates)
	}
	h.clock.Step(time.Minute + time.Second)
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if len(h.updates) != 1 || h.updates[0] != 1 {
		t.Fatalf("scale updates %v, want [1]", h.updates)
	}
	if ev := h.events(); len(ev) != 1 || ev[0] != "Normal SuccessfulRescale New size: 1; reason: All metrics below target" {
		t.Errorf("events %q", ev)
	}
}

// autoscaling/v2 behavior: a scale-up rate of one pod a minute.
func TestReconcileBehaviorLimitsRate(t *testing.T) {
	hpa := cpuHPA(50)
	hpa.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](0), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}}}
	h := newHarness(t, hpa, 3, threePods(), map[string]int64{"a": 900, "b": 900, "c": 900})
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	h.wantCondition(t, autoscalingv2.ScalingLimited, corev1.ConditionTrue, "ScaleUpLimit")
	h.clock.Step(30 * time.Second)
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(31 * time.Second)
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if want := []int32{4, 5}; len(h.updates) != 2 || h.updates[0] != want[0] || h.updates[1] != want[1] {
		t.Errorf("scale updates %v, want %v", h.updates, want)
	}
}

func TestReconcileFailures(t *testing.T) {
	tests := []struct {
		name       string
		edit       func(h *harness)
		condition  autoscalingv2.HorizontalPodAutoscalerConditionType
		reason     string
		message    string
		wantEvents []string
	}{
		{
			name: "metrics API unavailable",
			edit: func(h *harness) {
				h.metrics.err = errors.New(`the server could not find the requested resource (get pods.metrics.k8s.io)`)
			},
			condition: autoscalingv2.ScalingActive, reason: "FailedGetResourceMetric",
			message:    "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: the server could not find",
			wantEvents: []string{"Warning FailedGetResourceMetric failed to get cpu utilization", "Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1)"},
		},
		{
			name: "pods metrics need the custom metrics API",
			edit: func(h *harness) {
				h.hpa.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resourceQty("10"))}}}}
			},
			condition: autoscalingv2.ScalingActive, reason: "FailedGetPodsMetric",
			message:    "custom metrics API (custom.metrics.k8s.io) is not served",
			wantEvents: []string{"Warning FailedGetPodsMetric unable to get metric qps", "Warning FailedComputeMetricsReplicas"},
		},
		{
			name: "external metrics need the external metrics API",
			edit: func(h *harness) {
				h.hpa.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "queue"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resourceQty("10"))}}}}
			},
			condition: autoscalingv2.ScalingActive, reason: "FailedGetExternalMetric",
			message:    "external metrics API (external.metrics.k8s.io) is not served",
			wantEvents: []string{"Warning FailedGetExternalMetric", "Warning FailedComputeMetricsReplicas"},
		},
		{
			name:      "the target is scaled to zero",
			edit:      func(h *harness) { h.replicas = 0 },
			condition: autoscalingv2.ScalingActive, reason: "ScalingDisabled", message: "scaling is disabled since the replica count of the target is zero",
		},
		{
			name:      "the target does not exist",
			edit:      func(h *harness) { h.hpa.Spec.ScaleTargetRef.Name = "gone" },
			condition: autoscalingv2.AbleToScale, reason: "FailedGetScale", message: "the HPA controller was unable to get the target's current scale",
			wantEvents: []string{`Warning FailedGetScale deployments.apps "gone" not found`},
		},
		{
			name:      "the target's kind is unknown",
			edit:      func(h *harness) { h.hpa.Spec.ScaleTargetRef.Kind = "Nothing" },
			condition: autoscalingv2.AbleToScale, reason: "FailedGetScale", message: "the HPA controller was unable to get the target's current scale: no matches for",
			wantEvents: []string{"Warning FailedGetScale"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, cpuHPA(50), 3, threePods(), map[string]int64{"a": 900, "b": 900, "c": 900})
			tt.edit(h)
			_ = h.reconcile(t)
			if len(h.updates) != 0 {
				t.Errorf("scaled to %v", h.updates)
			}
			c := h.condition(tt.condition)
			if c.Status != corev1.ConditionFalse || c.Reason != tt.reason || !strings.Contains(c.Message, tt.message) {
				t.Errorf("condition %s: %s %s %q, want False %s containing %q", tt.condition, c.Status, c.Reason, c.Message, tt.reason, tt.message)
			}
			ev := h.events()
			if len(ev) != len(tt.wantEvents) {
				t.Fatalf("events %q, want %q", ev, tt.wantEvents)
			}
			for i := range ev {
				if !strings.HasPrefix(ev[i], tt.wantEvents[i]) {
					t.Errorf("event %q, want it to start with %q", ev[i], tt.wantEvents[i])
				}
			}
		})
	}
}

// Outside min and max the HPA moves the target in without metrics.
func TestReconcileOutsideBounds(t *testing.T) {
	h := newHarness(t, cpuHPA(50), 12, nil, nil)
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if len(h.updates) != 1 || h.updates[0] != 10 {
		t.Errorf("updates %v, want [10]", h.updates)
	}
	if ev := h.events(); len(ev) != 1 || ev[0] != "Normal SuccessfulRescale New size: 10; reason: Current number of replicas above Spec.MaxReplicas" {
		t.Errorf("events %q", ev)
	}
}

// Two HPAs over the same pods: neither scales.
func TestReconcileAmbiguousSelector(t *testing.T) {
	h := newHarness(t, cpuHPA(50), 3, threePods(), map[string]int64{"a": 900, "b": 900, "c": 900})
	other := cpuHPA(50)
	other.Name = "other"
	if _, err := h.c.validateAndParseSelector(other, "app=web"); err != nil {
		t.Fatal(err)
	}
	h.events()
	_ = h.reconcile(t)
	if len(h.updates) != 0 {
		t.Errorf("scaled to %v", h.updates)
	}
	h.wantCondition(t, autoscalingv2.ScalingActive, corev1.ConditionFalse, "AmbiguousSelector")
	// Once the other HPA is deleted, it scales.
	h.c.forget("default/other")
	if err := h.reconcile(t); err != nil || len(h.updates) != 1 {
		t.Errorf("after the other is gone: %v, updates %v", err, h.updates)
	}
}
