package podautoscaler

import (
	"context"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// start is the fixed time of the fake clocks.
var start = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// fakeMetrics answers resource metrics from a map; the custom and
// external APIs are not served, as in skiff.
type fakeMetrics struct {
	usage     map[string]int64 // pod -> milli-units
	timestamp time.Time
	window    time.Duration
	err       error
}

func (f *fakeMetrics) GetResourceMetric(_ context.Context, _ corev1.ResourceName, _ string, _ labels.Selector, _ string) (PodMetricsInfo, time.Time, error) {
	if f.err != nil {
		return nil, time.Time{}, f.err
	}
	out := PodMetricsInfo{}
	for name, v := range f.usage {
		out[name] = PodMetric{Timestamp: f.timestamp, Window: f.window, Value: v}
	}
	return out, f.timestamp, nil
}

func (f *fakeMetrics) GetRawMetric(ctx context.Context, name, ns string, sel, msel labels.Selector) (PodMetricsInfo, time.Time, error) {
	return NewResourceMetricsClient(nil).GetRawMetric(ctx, name, ns, sel, msel)
}

func (f *fakeMetrics) GetObjectMetric(ctx context.Context, name, ns string, ref *autoscalingv2.CrossVersionObjectReference, msel labels.Selector) (int64, time.Time, error) {
	return NewResourceMetricsClient(nil).GetObjectMetric(ctx, name, ns, ref, msel)
}

func (f *fakeMetrics) GetExternalMetric(ctx context.Context, name, ns string, sel labels.Selector) ([]int64, time.Time, error) {
	return NewResourceMetricsClient(nil).GetExternalMetric(ctx, name, ns, sel)
}

// podState is how a test pod looks to the calculator.
type podState int

const (
	running podState = iota // Running, Ready since long ago
	pending
	failed
	deleting
	notReady     // Running, never ready, started long ago
	justReady    // Running, Ready 10 s ago, started 20 s ago
	startingDown // Running, not Ready, started 20 s ago
)

// testPod is a pod of app=web with a cpu request of requestMilli and a
// memory request of 100Mi.
func testPod(name string, state podState, requestMilli int64) *corev1.Pod {
	longAgo := metav1.NewTime(start.Add(-time.Hour))
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(requestMilli, resource.DecimalSI),
			corev1.ResourceMemory: resource.MustParse("100Mi"),
		}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &longAgo,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: longAgo}}},
	}
	switch state {
	case pending:
		p.Status = corev1.PodStatus{Phase: corev1.PodPending}
	case failed:
		p.Status.Phase = corev1.PodFailed
	case deleting:
		p.DeletionTimestamp = &longAgo
	case notReady:
		p.Status.Conditions[0].Status = corev1.ConditionFalse
		p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(start.Add(-time.Hour).Add(5 * time.Second))
	case justReady:
		started := metav1.NewTime(start.Add(-20 * time.Second))
		p.Status.StartTime = &started
		p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(start.Add(-10 * time.Second))
	case startingDown:
		started := metav1.NewTime(start.Add(-20 * time.Second))
		p.Status.StartTime = &started
		p.Status.Conditions[0].Status = corev1.ConditionFalse
		p.Status.Conditions[0].LastTransitionTime = started
	}
	return p
}

func podListerOf(pods ...*corev1.Pod) corelisters.PodLister {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			panic(fmt.Sprint(err))
		}
	}
	return corelisters.NewPodLister(idx)
}

func resourceQty(s string) resource.Quantity { return resource.MustParse(s) }
