package disruption

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	scalefake "k8s.io/client-go/scale/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var labels = map[string]string{"app": "web"}

func ownerRef(gvk schema.GroupVersionKind, name string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name,
		UID: types.UID("uid-" + name), Controller: ptr.To(true)}
}

var (
	rsKind  = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	depKind = appsv1.SchemeGroupVersion.WithKind("Deployment")
	ssKind  = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	rcKind  = corev1.SchemeGroupVersion.WithKind("ReplicationController")
	jobKind = batchv1.SchemeGroupVersion.WithKind("Job")
)

type podOpt func(*corev1.Pod)

func pod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels, UID: types.UID("uid-" + name)}}
	p.Status.Phase = corev1.PodRunning
	for _, o := range opts {
		o(p)
	}
	return p
}

func ready(p *corev1.Pod) {
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
}

func notReady(p *corev1.Pod) {
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse})
}

func ownedBy(gvk schema.GroupVersionKind, name string) podOpt {
	return func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{ownerRef(gvk, name)} }
}

func deleting(p *corev1.Pod) {
	ts := metav1.NewTime(t0)
	p.DeletionTimestamp = &ts
}

func pods(n int, opts ...podOpt) []runtime.Object {
	var out []runtime.Object
	for i := range n {
		out = append(out, pod("p"+string(rune('a'+i)), opts...))
	}
	return out
}

func replicaSet(name string, replicas int32, owner ...metav1.OwnerReference) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), OwnerReferences: owner},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas)},
	}
}

func pdb(mods ...func(*policyv1.PodDisruptionBudget)) *policyv1.PodDisruptionBudget {
	p := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "pdb", Namespace: "ns", Generation: 3, ResourceVersion: "1"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func minAvailable(v intstr.IntOrString) func(*policyv1.PodDisruptionBudget) {
	return func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = &v }
}

func maxUnavailable(v intstr.IntOrString) func(*policyv1.PodDisruptionBudget) {
	return func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = &v }
}

func disrupted(entries map[string]time.Time) func(*policyv1.PodDisruptionBudget) {
	return func(p *policyv1.PodDisruptionBudget) {
		p.Status.DisruptedPods = map[string]metav1.Time{}
		for k, v := range entries {
			p.Status.DisruptedPods[k] = metav1.NewTime(v)
		}
	}
}

type harness struct {
	c        *Controller
	client   *fake.Clientset
	recorder *record.FakeRecorder
}

func newHarness(t *testing.T, objs ...runtime.Object) *harness {
	t.Helper()
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	rec := record.NewFakeRecorder(100)
	c, err := NewController(client, f, rec, nil, Options{Clock: clocktesting.NewFakeClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.Pod:
			err = f.Core().V1().Pods().Informer().GetIndexer().Add(o)
		case *policyv1.PodDisruptionBudget:
			err = f.Policy().V1().PodDisruptionBudgets().Informer().GetIndexer().Add(o)
		case *appsv1.ReplicaSet:
			err = f.Apps().V1().ReplicaSets().Informer().GetIndexer().Add(o)
		case *appsv1.Deployment:
			err = f.Apps().V1().Deployments().Informer().GetIndexer().Add(o)
		case *appsv1.StatefulSet:
			err = f.Apps().V1().StatefulSets().Informer().GetIndexer().Add(o)
		case *corev1.ReplicationController:
			err = f.Core().V1().ReplicationControllers().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return &harness{c: c, client: client, recorder: rec}
}

func (h *harness) statusWrites() []policyv1.PodDisruptionBudgetStatus {
	var out []policyv1.PodDisruptionBudgetStatus
	for _, a := range h.client.Actions() {
		if u, ok := a.(clienttesting.UpdateActionImpl); ok && u.Subresource == "status" {
			out = append(out, u.Object.(*policyv1.PodDisruptionBudget).Status)
		}
	}
	return out
}

func (h *harness) events() string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}

type want struct {
	expected, healthy, desired, allowed int32
	reason                              string
	disrupted                           []string
}

func TestSync(t *testing.T) {
	rs3 := replicaSet("rs", 3)
	tests := []struct {
		name      string
		pdb       *policyv1.PodDisruptionBudget
		objs      []runtime.Object
		want      want
		wantErr   bool
		wantEvent string
	}{
		{
			name: "integer minAvailable counts the selected pods",
			pdb:  pdb(minAvailable(intstr.FromInt32(2))),
			objs: append(pods(3, ready, ownedBy(rsKind, "rs")), rs3),
			want: want{expected: 3, healthy: 3, desired: 2, allowed: 1, reason: policyv1.SufficientPodsReason},
		},
		{
			name: "an unready pod is not healthy",
			pdb:  pdb(minAvailable(intstr.FromInt32(2))),
			objs: append(pods(2, ready, ownedBy(rsKind, "rs")), rs3, pod("pz", notReady, ownedBy(rsKind, "rs"))),
			want: want{expected: 3, healthy: 2, desired: 2, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
		{
			name: "a pod without a Ready condition is not healthy",
			pdb:  pdb(minAvailable(intstr.FromInt32(1))),
			objs: append(pods(1, ownedBy(rsKind, "rs")), rs3),
			want: want{expected: 1, healthy: 0, desired: 1, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
		{
			name: "a pod being deleted is not healthy",
			pdb:  pdb(minAvailable(intstr.FromInt32(1))),
			objs: append(pods(1, ready, deleting, ownedBy(rsKind, "rs")), rs3, pod("pz", ready, ownedBy(rsKind, "rs"))),
			want: want{expected: 2, healthy: 1, desired: 1, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
		{
			name: "percentage minAvailable is of the controller's scale, rounded up",
			pdb:  pdb(minAvailable(intstr.FromString("34%"))),
			objs: append(pods(3, ready, ownedBy(rsKind, "rs")), rs3),
			want: want{expected: 3, healthy: 3, desired: 2, allowed: 1, reason: policyv1.SufficientPodsReason},
		},
		{
			name: "percentage maxUnavailable rounds up too",
			pdb:  pdb(maxUnavailable(intstr.FromString("34%"))),
			objs: append(pods(3, ready, ownedBy(rsKind, "rs")), rs3),
			want: want{expected: 3, healthy: 3, desired: 1, allowed: 2, reason: policyv1.SufficientPodsReason},
		},
		{
			name: "expected pods follow the scale, not the pods found",
			pdb:  pdb(maxUnavailable(intstr.FromInt32(1))),
			objs: append(pods(2, ready, ownedBy(rsKind, "rs")), rs3),
			want: want{expected: 3, healthy: 2, desired: 2, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
		{
			name: "a Deployment's scale, through its ReplicaSet",
			pdb:  pdb(maxUnavailable(intstr.FromInt32(1))),
			objs: append(pods(4, ready, ownedBy(rsKind, "rs")),
				replicaSet("rs", 4, ownerRef(depKind, "dep")),
				&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "dep", Namespace: "ns", UID: "uid-dep"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](5)}}),
			want: want{expected: 5, healthy: 4, desired: 4, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
		{
			name: "a StatefulSet's scale",
			pdb:  pdb(maxUnavailable(intstr.FromString("50%"))),
			objs: append(pods(2, ready, ownedBy(ssKind, "ss")),
				&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "ss", Namespace: "ns", UID: "uid-ss"}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)}}),
			want: want{expected: 2, healthy: 2, desired: 1, allowed: 1, reason: policyv1.SufficientPodsReason},
		},
		{
			name: "a ReplicationController's scale, 50% of 3 rounded up",
			pdb:  pdb(minAvailable(intstr.FromString("50%"))),
			objs: append(pods(3, ready, ownedBy(rcKind, "rc")),
				&corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns", UID: "uid-rc"}, Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](3)}}),
			want: want{expected: 3, healthy: 3, desired: 2, allowed: 1, reason: policyv1.SufficientPodsReason},
		},
		{
			name: "two controllers add up",
			pdb:  pdb(maxUnavailable(intstr.FromInt32(1))),
			objs: []runtime.Object{pod("a", ready, ownedBy(rsKind, "rs")), pod("b", ready, ownedBy(rsKind, "rs2")),
				replicaSet("rs", 1), replicaSet("rs2", 2)},
			want: want{expected: 3, healthy: 2, desired: 2, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
		{
			name:      "pods without a controller, percentage: nothing expected, nothing allowed",
			pdb:       pdb(minAvailable(intstr.FromString("50%"))),
			objs:      pods(2, ready),
			want:      want{expected: 0, healthy: 2, desired: 0, allowed: 0, reason: policyv1.InsufficientPodsReason},
			wantEvent: "UnmanagedPods",
		},
		{
			name: "pods without a controller, integer minAvailable",
			pdb:  pdb(minAvailable(intstr.FromInt32(1))),
			objs: pods(2, ready),
			want: want{expected: 2, healthy: 2, desired: 1, allowed: 1, reason: policyv1.SufficientPodsReason},
		},
		{
			name:      "no pods",
			pdb:       pdb(minAvailable(intstr.FromInt32(1))),
			want:      want{expected: 0, healthy: 0, desired: 1, allowed: 0, reason: policyv1.InsufficientPodsReason},
			wantEvent: "NoPods",
		},
		{
			name: "pods of other labels are not selected",
			pdb:  pdb(minAvailable(intstr.FromInt32(0))),
			objs: []runtime.Object{pod("a", ready), pod("other", ready, func(p *corev1.Pod) { p.Labels = map[string]string{"app": "db"} })},
			want: want{expected: 1, healthy: 1, desired: 0, allowed: 1, reason: policyv1.SufficientPodsReason},
		},
		{
			name:      "a controller of a kind without a scale fails safe",
			pdb:       pdb(maxUnavailable(intstr.FromInt32(1))),
			objs:      pods(2, ready, ownedBy(jobKind, "job")),
			want:      want{allowed: 0, reason: policyv1.SyncFailedReason},
			wantErr:   true,
			wantEvent: "CalculateExpectedPodCountFailed",
		},
		{
			name:    "a missing ReplicaSet fails safe",
			pdb:     pdb(maxUnavailable(intstr.FromInt32(1))),
			objs:    pods(2, ready, ownedBy(rsKind, "gone")),
			want:    want{allowed: 0, reason: policyv1.SyncFailedReason},
			wantErr: true,
		},
		{
			name: "a recent eviction keeps its pod out of the healthy count",
			pdb: pdb(minAvailable(intstr.FromInt32(1)), disrupted(map[string]time.Time{
				"pa": t0.Add(-time.Minute), "gone": t0.Add(-time.Minute)})),
			objs: append(pods(3, ready, ownedBy(rsKind, "rs")), rs3),
			want: want{expected: 3, healthy: 2, desired: 1, allowed: 1, reason: policyv1.SufficientPodsReason, disrupted: []string{"pa"}},
		},
		{
			name:      "an eviction older than the deletion timeout is dropped",
			pdb:       pdb(minAvailable(intstr.FromInt32(1)), disrupted(map[string]time.Time{"pa": t0.Add(-DeletionTimeout - time.Second)})),
			objs:      append(pods(3, ready, ownedBy(rsKind, "rs")), rs3),
			want:      want{expected: 3, healthy: 3, desired: 1, allowed: 2, reason: policyv1.SufficientPodsReason},
			wantEvent: "NotDeleted",
		},
		{
			name: "an evicted pod being deleted is dropped from the map",
			pdb:  pdb(minAvailable(intstr.FromInt32(1)), disrupted(map[string]time.Time{"pa": t0.Add(-time.Second)})),
			objs: append(pods(1, ready, deleting, ownedBy(rsKind, "rs")), rs3, pod("pz", ready, ownedBy(rsKind, "rs"))),
			want: want{expected: 2, healthy: 1, desired: 1, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, append([]runtime.Object{tt.pdb}, tt.objs...)...)
			err := h.c.sync(context.Background(), "ns/pdb")
			if (err != nil) != tt.wantErr {
				t.Fatalf("sync error = %v, want error %v", err, tt.wantErr)
			}
			writes := h.statusWrites()
			if len(writes) != 1 {
				t.Fatalf("%d status writes, want 1", len(writes))
			}
			got := writes[0]
			cond := apimeta.FindStatusCondition(got.Conditions, policyv1.DisruptionAllowedCondition)
			if cond == nil || cond.Reason != tt.want.reason || (cond.Status == metav1.ConditionTrue) != (tt.want.reason == policyv1.SufficientPodsReason) {
				t.Errorf("condition = %+v, want reason %s", cond, tt.want.reason)
			}
			if got.DisruptionsAllowed != tt.want.allowed {
				t.Errorf("disruptionsAllowed = %d, want %d", got.DisruptionsAllowed, tt.want.allowed)
			}
			if tt.wantEvent != "" && !strings.Contains(h.events(), tt.wantEvent) {
				t.Errorf("no %s event", tt.wantEvent)
			}
			if tt.wantErr {
				return
			}
			if got.ExpectedPods != tt.want.expected || got.CurrentHealthy != tt.want.healthy || got.DesiredHealthy != tt.want.desired {
				t.Errorf("expected/healthy/desired = %d/%d/%d, want %d/%d/%d", got.ExpectedPods, got.CurrentHealthy, got.DesiredHealthy,
					tt.want.expected, tt.want.healthy, tt.want.desired)
			}
			if got.ObservedGeneration != tt.pdb.Generation {
				t.Errorf("observedGeneration = %d, want %d", got.ObservedGeneration, tt.pdb.Generation)
			}
			var names []string
			for n := range got.DisruptedPods {
				names = append(names, n)
			}
			if strings.Join(names, ",") != strings.Join(tt.want.disrupted, ",") {
				t.Errorf("disruptedPods = %v, want %v", names, tt.want.disrupted)
			}
		})
	}
}

// A status that is already right is not written again.
func TestSyncUpToDate(t *testing.T) {
	p := pdb(minAvailable(intstr.FromInt32(1)))
	p.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: p.Generation, ExpectedPods: 2, CurrentHealthy: 2, DesiredHealthy: 1, DisruptionsAllowed: 1,
		Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue,
			Reason: policyv1.SufficientPodsReason, ObservedGeneration: p.Generation}},
	}
	h := newHarness(t, append([]runtime.Object{p}, pods(2, ready)...)...)
	if err := h.c.sync(context.Background(), "ns/pdb"); err != nil {
		t.Fatal(err)
	}
	if w := h.statusWrites(); len(w) != 0 {
		t.Fatalf("wrote %+v, want no write", w)
	}
}

// A failure whose fail-safe status is already written writes nothing more.
func TestFailSafeWritesOnce(t *testing.T) {
	p := pdb(maxUnavailable(intstr.FromInt32(1)))
	h := newHarness(t, append([]runtime.Object{p}, pods(1, ready, ownedBy(jobKind, "job"))...)...)
	if err := h.c.sync(context.Background(), "ns/pdb"); err == nil {
		t.Fatal("sync succeeded for a pod whose controller has no scale")
	}
	written := h.statusWrites()[0]
	p.Status = written
	h2 := newHarness(t, append([]runtime.Object{p}, pods(1, ready, ownedBy(jobKind, "job"))...)...)
	_ = h2.c.sync(context.Background(), "ns/pdb")
	if w := h2.statusWrites(); len(w) != 0 {
		t.Fatalf("the fail-safe status was written again: %+v", w)
	}
}

func TestSyncDeletedBudget(t *testing.T) {
	h := newHarness(t)
	if err := h.c.sync(context.Background(), "ns/gone"); err != nil {
		t.Fatal(err)
	}
	if w := h.statusWrites(); len(w) != 0 {
		t.Fatalf("wrote %+v for a deleted budget", w)
	}
}

// Pod events queue every budget that selects the pod, and only those.
func TestPodEventsQueueBudgets(t *testing.T) {
	other := pdb(func(p *policyv1.PodDisruptionBudget) {
		p.Name = "other"
		p.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	})
	all := pdb(func(p *policyv1.PodDisruptionBudget) {
		p.Name = "all"
		p.Spec.Selector = &metav1.LabelSelector{}
	})
	h := newHarness(t, pdb(), other, all)
	h.c.podChanged(pod("a"), true)
	got := map[string]bool{}
	for h.c.queue.Len() > 0 {
		k, _ := h.c.queue.Get()
		got[k] = true
		h.c.queue.Done(k)
	}
	if !got["ns/pdb"] || !got["ns/all"] || got["ns/other"] || len(got) != 2 {
		t.Fatalf("queued %v, want ns/pdb and ns/all", got)
	}
	if !strings.Contains(h.events(), "MultiplePodDisruptionBudgets") {
		t.Fatal("no MultiplePodDisruptionBudgets warning for a pod under two budgets")
	}
}

func disruptionTarget(reason string, since time.Duration) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
			Status: corev1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(t0.Add(-since))})
	}
}

func TestSyncStalePod(t *testing.T) {
	tests := []struct {
		name      string
		pod       *corev1.Pod
		wantReset bool
	}{
		{"stale after the timeout", pod("p", disruptionTarget("DeletionByTaintManager", StalePodDisruptionTimeout+time.Second)), true},
		{"not yet stale", pod("p", disruptionTarget("DeletionByTaintManager", time.Minute)), false},
		{"the kubelet's condition is never stale", pod("p", disruptionTarget(corev1.PodReasonTerminationByKubelet, time.Hour)), false},
		{"a pod being deleted", pod("p", deleting, disruptionTarget("EvictionByEvictionAPI", time.Hour)), false},
		{"a finished pod", pod("p", disruptionTarget("EvictionByEvictionAPI", time.Hour), func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), false},
		{"no condition", pod("p", ready), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.pod)
			if err := h.c.syncStalePod(context.Background(), "ns/p"); err != nil {
				t.Fatal(err)
			}
			var updated *corev1.Pod
			for _, a := range h.client.Actions() {
				if u, ok := a.(clienttesting.UpdateActionImpl); ok && u.Subresource == "status" {
					updated = u.Object.(*corev1.Pod)
				}
			}
			if (updated != nil) != tt.wantReset {
				t.Fatalf("reset = %v, want %v", updated != nil, tt.wantReset)
			}
			if updated == nil {
				return
			}
			cond := podCondition(updated, corev1.DisruptionTarget)
			if cond.Status != corev1.ConditionFalse || !cond.LastTransitionTime.Time.Equal(t0) || cond.Reason != "DeletionByTaintManager" {
				t.Fatalf("condition after reset = %+v, want False at %v keeping its reason", cond, t0)
			}
		})
	}
}

// A controller of a kind without a lister is found through its scale
// subresource.
func TestExpectedScaleThroughScaleSubresource(t *testing.T) {
	widgetKind := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	mapper := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{widgetKind.GroupVersion()})
	mapper.Add(widgetKind, apimeta.RESTScopeNamespace)
	tests := []struct {
		name    string
		scale   *autoscalingv1.Scale
		wantErr bool
		want    int32
	}{
		{"scale of the owner", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "w", UID: "uid-w"}, Spec: autoscalingv1.ScaleSpec{Replicas: 4}}, false, 4},
		{"an object with another UID is not the owner", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "w", UID: "other"}, Spec: autoscalingv1.ScaleSpec{Replicas: 4}}, true, 0},
		{"no such object", nil, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scales := &scalefake.FakeScaleClient{}
			scales.AddReactor("get", "widgets", func(a clienttesting.Action) (bool, runtime.Object, error) {
				if tt.scale == nil {
					return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "example.com", Resource: "widgets"}, "w")
				}
				return true, tt.scale, nil
			})
			objs := append([]runtime.Object{pdb(maxUnavailable(intstr.FromInt32(1)))}, pods(3, ready, ownedBy(widgetKind, "w"))...)
			client := fake.NewClientset(objs...)
			f := informers.NewSharedInformerFactory(client, 0)
			c, err := NewController(client, f, nil, nil, Options{Scales: scales, Mapper: mapper, Clock: clocktesting.NewFakeClock(t0)})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs[1:] {
				_ = f.Core().V1().Pods().Informer().GetIndexer().Add(o)
			}
			got, _, err := c.expectedScale(context.Background(), []*corev1.Pod{objs[1].(*corev1.Pod), objs[2].(*corev1.Pod)})
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("expectedScale = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestNewControllerRejectsHalfAScaleClient(t *testing.T) {
	client := fake.NewClientset()
	_, err := NewController(client, informers.NewSharedInformerFactory(client, 0), nil, nil, Options{Scales: &scalefake.FakeScaleClient{}})
	if err == nil {
		t.Fatal("NewController accepted Scales without Mapper")
	}
}
