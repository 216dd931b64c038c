package podautoscaler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

var webSelector = labels.SelectorFromSet(labels.Set{"app": "web"})

func calculator(m MetricsClient, pods ...*corev1.Pod) *ReplicaCalculator {
	return NewReplicaCalculator(m, podListerOf(pods...), clocktesting.NewFakePassiveClock(start), 0.1, 5*time.Minute, 30*time.Second)
}

func TestGetResourceReplicas(t *testing.T) {
	tests := []struct {
		name            string
		pods            []*corev1.Pod
		usage           map[string]int64
		current, target int32
		want            int32
		wantUtilization int32
		wantErr         string
	}{
		{name: "scale up by the usage ratio", current: 3, target: 50,
			pods:  []*corev1.Pod{testPod("a", running, 1000), testPod("b", running, 1000), testPod("c", running, 1000)},
			usage: map[string]int64{"a": 900, "b": 900, "c": 900}, want: 6, wantUtilization: 90},
		{name: "within the tolerance nothing changes", current: 3, target: 50,
			pods:  []*corev1.Pod{testPod("a", running, 1000), testPod("b", running, 1000), testPod("c", running, 1000)},
			usage: map[string]int64{"a": 520, "b": 540, "c": 530}, want: 3, wantUtilization: 53},
		{name: "scale down", current: 3, target: 50,
			pods:  []*corev1.Pod{testPod("a", running, 1000), testPod("b", running, 1000), testPod("c", running, 1000)},
			usage: map[string]int64{"a": 100, "b": 100, "c": 100}, want: 1, wantUtilization: 10},
		{name: "pending pods do not turn a scale-up into a scale-down", current: 4, target: 50,
			pods:  []*corev1.Pod{testPod("a", running, 1000), testPod("b", pending, 1000), testPod("c", pending, 1000), testPod("d", pending, 1000)},
			usage: map[string]int64{"a": 1000}, want: 4, wantUtilization: 100},
		{name: "a pod missing its metric counts as its whole request on a scale-down", current: 4, target: 50,
			pods:  []*corev1.Pod{testPod("a", running, 1000), testPod("b", running, 1000), testPod("c", running, 1000), testPod("d", running, 1000)},
			usage: map[string]int64{"a": 100, "b": 100, "c": 100}, want: 3, wantUtilization: 10},
		{name: "a pod missing its metric counts as idle on a scale-up", current: 4, target: 50,
			pods:  []*corev1.Pod{testPod("a", running, 1000), testPod("b", running, 1000), testPod("c", running, 1000), testPod("d", running, 1000)},
			usage: map[string]int64{"a": 1000, "b": 1000, "c": 1000}, want: 6, wantUtilization: 100},
		{name: "failed and deleted pods are ignored", current: 2, target: 50,
			pods:  []*corev1.Pod{testPod("a", running, 1000), testPod("b", running, 1000), testPod("c", failed, 1000), testPod("d", deleting, 1000)},
			usage: map[string]int64{"a": 900, "b": 900, "c": 0, "d": 0}, want: 4, wantUtilization: 90},
		{name: "a sample taken before a window passed since readiness is not trusted", current: 2, target: 50,
			pods:  []*corev1.Pod{testPod("a", running, 1000), testPod("b", justReady, 1000)},
			usage: map[string]int64{"a": 900, "b": 900}, want: 2, wantUtilization: 90},
		{name: "a pod that was never ready is not trusted", current: 2, target: 50,
			pods:  []*corev1.Pod{testPod("a", running, 1000), testPod("b", notReady, 1000)},
			usage: map[string]int64{"a": 900, "b": 900}, want: 2, wantUtilization: 90},
		{name: "no pods", current: 2, target: 50, usage: map[string]int64{"a": 900}, wantErr: "no pods returned by selector"},
		{name: "only unready pods", current: 1, target: 50, pods: []*corev1.Pod{testPod("a", pending, 1000)},
			usage: map[string]int64{"a": 900}, wantErr: "did not receive metrics for targeted pods"},
		{name: "a container without a request", current: 1, target: 50, pods: []*corev1.Pod{testPod("a", running, 1000), func() *corev1.Pod {
			p := testPod("b", running, 1000)
			p.Spec.Containers[0].Resources.Requests = nil
			return p
		}()}, usage: map[string]int64{"a": 900, "b": 900}, wantErr: "missing request for cpu in container app of Pod b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeMetrics{usage: tt.usage, timestamp: start, window: 30 * time.Second}
			got, utilization, _, _, err := calculator(m, tt.pods...).GetResourceReplicas(context.Background(), tt.current, tt.target, corev1.ResourceCPU, "default", webSelector, "")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || utilization != tt.wantUtilization {
				t.Errorf("replicas %d utilization %d, want %d and %d", got, utilization, tt.want, tt.wantUtilization)
			}
		})
	}
}

// Readiness counts for CPU only: a memory target takes every running
// pod's sample; a pod without one uses exactly the target on a scale-down.
func TestGetRawResourceReplicas(t *testing.T) {
	tests := []struct {
		name      string
		pods      []*corev1.Pod
		usage     map[string]int64
		current   int32
		want      int32
		wantUsage int64
	}{
		{name: "scale up on the average", current: 2, pods: []*corev1.Pod{testPod("a", running, 1), testPod("b", justReady, 1)},
			usage: map[string]int64{"a": 150, "b": 150}, want: 3, wantUsage: 150},
		{name: "missing on a scale-down uses the target", current: 3, pods: []*corev1.Pod{testPod("a", running, 1), testPod("b", running, 1), testPod("c", running, 1)},
			usage: map[string]int64{"a": 10, "b": 10}, want: 2, wantUsage: 10},
		{name: "within the tolerance", current: 2, pods: []*corev1.Pod{testPod("a", running, 1), testPod("b", running, 1)},
			usage: map[string]int64{"a": 105, "b": 95}, want: 2, wantUsage: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeMetrics{usage: tt.usage, timestamp: start}
			got, usage, _, err := calculator(m, tt.pods...).GetRawResourceReplicas(context.Background(), tt.current, 100, corev1.ResourceMemory, "default", webSelector, "")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || usage != tt.wantUsage {
				t.Errorf("replicas %d usage %d, want %d and %d", got, usage, tt.want, tt.wantUsage)
			}
		})
	}
}

func TestMetricsAPIErrors(t *testing.T) {
	calc := calculator(&fakeMetrics{err: errors.New("the server could not find the requested resource")}, testPod("a", running, 1000))
	_, _, _, _, err := calc.GetResourceReplicas(context.Background(), 1, 50, corev1.ResourceCPU, "default", webSelector, "")
	if err == nil || !strings.Contains(err.Error(), "unable to get metrics for resource cpu: the server could not find") {
		t.Errorf("error %v", err)
	}
	_, _, _, err = calc.GetMetricReplicas(context.Background(), 1, 10, "qps", "default", webSelector, labels.Everything())
	if !errors.Is(err, ErrCustomMetricsNotServed) && (err == nil || !strings.Contains(err.Error(), "custom.metrics.k8s.io")) {
		t.Errorf("pods metric error %v", err)
	}
}

// The resource metrics client reads metrics.k8s.io PodMetrics: a pod's
// containers summed, or one container's.
func TestResourceMetricsClient(t *testing.T) {
	pm := func(name string, usage ...int64) *metricsv1beta1.PodMetrics {
		m := &metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
			Timestamp: metav1.NewTime(start), Window: metav1.Duration{Duration: 15 * time.Second}}
		for i, u := range usage {
			m.Containers = append(m.Containers, metricsv1beta1.ContainerMetrics{Name: []string{"app", "sidecar"}[i],
				Usage: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(u, resource.DecimalSI)}})
		}
		return m
	}
	client := fakeMetricsAPI(pm("a", 100, 50), pm("b", 300))
	mc := NewResourceMetricsClient(client.MetricsV1beta1())
	got, ts, err := mc.GetResourceMetric(context.Background(), corev1.ResourceCPU, "default", webSelector, "")
	if err != nil {
		t.Fatal(err)
	}
	if !ts.Equal(start) || got["a"].Value != 150 || got["b"].Value != 300 || got["a"].Window != 15*time.Second {
		t.Errorf("pod metrics %+v at %v", got, ts)
	}
	if _, _, err := mc.GetResourceMetric(context.Background(), corev1.ResourceCPU, "default", webSelector, "sidecar"); err == nil ||
		!strings.Contains(err.Error(), "container sidecar not present in metrics for pod default/b") {
		t.Errorf("container metrics error %v", err)
	}
	got, _, err = mc.GetResourceMetric(context.Background(), corev1.ResourceMemory, "default", webSelector, "")
	if err != nil || len(got) != 0 {
		t.Errorf("memory: %v %v, want no pod measured", got, err)
	}
	if _, _, err := mc.GetResourceMetric(context.Background(), corev1.ResourceCPU, "other", webSelector, ""); err == nil ||
		err.Error() != "no metrics returned from resource metrics API" {
		t.Errorf("empty namespace: %v", err)
	}
}

// fakeMetricsAPI answers lists of metrics.k8s.io pods with items, by
// namespace and label selector, as the metrics API does (the fake
// clientset's tracker cannot map PodMetrics to "pods").
func fakeMetricsAPI(items ...*metricsv1beta1.PodMetrics) *metricsfake.Clientset {
	client := &metricsfake.Clientset{}
	client.AddReactor("list", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		list := action.(k8stesting.ListAction)
		out := &metricsv1beta1.PodMetricsList{}
		for _, m := range items {
			if m.Namespace == list.GetNamespace() && list.GetListRestrictions().Labels.Matches(labels.Set(m.Labels)) {
				out.Items = append(out.Items, *m)
			}
		}
		return true, out, nil
	})
	return client
}
