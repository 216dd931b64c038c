package podgc

import (
	"context"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type podOpt func(*corev1.Pod)

func pod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func phase(ph corev1.PodPhase, created int) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = ph
		p.CreationTimestamp = metav1.NewTime(t0.Add(time.Duration(created) * time.Minute))
	}
}

func onNode(n string) podOpt { return func(p *corev1.Pod) { p.Spec.NodeName = n } }

func evicted(p *corev1.Pod) { p.Status.Reason = "Evicted" }

func terminating(p *corev1.Pod) {
	now := metav1.NewTime(t0)
	p.DeletionTimestamp = &now
}

type harness struct {
	c      *Controller
	client *fake.Clientset
	clock  *clocktesting.FakeClock
}

func newHarness(t *testing.T, threshold int, objs ...runtime.Object) *harness {
	t.Helper()
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	clk := clocktesting.NewFakeClock(t0)
	c, err := NewController(client, f.Core().V1().Pods(), f.Core().V1().Nodes(), nil, nil,
		Options{TerminatedPodGCThreshold: threshold, QuarantineTime: DefaultQuarantineTime, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Pod:
			_ = f.Core().V1().Pods().Informer().GetIndexer().Add(o)
		case *corev1.Node:
			_ = f.Core().V1().Nodes().Informer().GetIndexer().Add(o)
		}
	}
	return &harness{c: c, client: client, clock: clk}
}

func (h *harness) deleted() []string {
	var out []string
	for _, a := range h.client.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok && d.Resource.Resource == "pods" {
			out = append(out, d.Name)
		}
	}
	return out
}

func TestGCTerminatedOldestFirst(t *testing.T) {
	objs := []runtime.Object{
		pod("new-ok", phase(corev1.PodSucceeded, 5)),
		pod("old-ok", phase(corev1.PodSucceeded, 1)),
		pod("mid-failed", phase(corev1.PodFailed, 3)),
		pod("newest-evicted", phase(corev1.PodFailed, 9), evicted),
		pod("running", phase(corev1.PodRunning, 0)),
		pod("oldest-pending", phase(corev1.PodPending, 0)),
	}
	tests := []struct {
		name      string
		threshold int
		want      []string
	}{
		{name: "under the threshold", threshold: 4, want: nil},
		{name: "two over: the evicted one, then the oldest", threshold: 2, want: []string{"newest-evicted", "old-ok"}},
		{name: "all terminated", threshold: 1, want: []string{"newest-evicted", "old-ok", "mid-failed"}},
		{name: "disabled", threshold: 0, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.threshold, objs...)
			if err := h.c.GC(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := h.deleted()
			if len(got) != len(tt.want) {
				t.Fatalf("deleted %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("deleted %v, want %v (in that order)", got, tt.want)
				}
			}
		})
	}
}

func TestGCOrphanedAfterQuarantine(t *testing.T) {
	// "ghost" is in the API but not yet in the cache: its pod stays.
	ghost := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ghost"}}
	live := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "live"}}
	h := newHarness(t, 100, pod("on-gone", onNode("gone"), phase(corev1.PodRunning, 0)), pod("on-live", onNode("live")),
		pod("on-ghost", onNode("ghost")), live)
	if err := h.c.client.CoreV1().Nodes().Delete(context.Background(), "live", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.client.CoreV1().Nodes().Create(context.Background(), ghost, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := h.c.GC(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.deleted(); len(got) != 0 {
		t.Fatalf("deleted %v within the quarantine time", got)
	}
	h.clock.Step(DefaultQuarantineTime)
	if err := h.c.GC(ctx); err != nil {
		t.Fatal(err)
	}
	got := h.deleted()
	sort.Strings(got)
	if len(got) != 1 || got[0] != "on-gone" {
		t.Fatalf("deleted %v, want [on-gone]", got)
	}
	// The pod was marked Failed with the DisruptionTarget condition first.
	var marked bool
	for _, a := range h.client.Actions() {
		if u, ok := a.(clienttesting.UpdateActionImpl); ok && u.Subresource == "status" {
			p := u.Object.(*corev1.Pod)
			marked = p.Status.Phase == corev1.PodFailed && len(p.Status.Conditions) == 1 &&
				p.Status.Conditions[0].Type == corev1.DisruptionTarget && p.Status.Conditions[0].Reason == "DeletionByPodGC"
		}
	}
	if !marked {
		t.Error("the pod was not marked Failed with DisruptionTarget before deletion")
	}
}

func TestGCUnscheduledTerminatingAndOutOfService(t *testing.T) {
	oos := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "oos"},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: TaintNodeOutOfService, Effect: corev1.TaintEffectNoExecute}}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}}}
	ok := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ok"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}}}
	h := newHarness(t, 100, oos, ok,
		pod("unscheduled-terminating", terminating),
		pod("unscheduled", phase(corev1.PodPending, 0)),
		pod("terminating-on-oos", onNode("oos"), terminating),
		pod("running-on-oos", onNode("oos")),
		pod("terminating-on-ok", onNode("ok"), terminating),
	)
	if err := h.c.GC(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := h.deleted()
	sort.Strings(got)
	want := []string{"terminating-on-oos", "unscheduled-terminating"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("deleted %v, want %v", got, want)
	}
	for _, a := range h.client.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			if g := d.DeleteOptions.GracePeriodSeconds; g == nil || *g != 0 {
				t.Errorf("delete of %s: grace period %v, want 0", d.Name, g)
			}
		}
	}
}
