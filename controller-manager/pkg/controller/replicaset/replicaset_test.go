package replicaset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

var now = time.Unix(1_700_000_000, 0)

type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	c        *Controller
	rsIdx    cache.Indexer
	podIdx   cache.Indexer
	recorder *record.FakeRecorder
	created  atomic.Int64
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, client: fake.NewSimpleClientset(objs...), recorder: record.NewFakeRecorder(1000)}
	// The fake clientset does not implement generateName.
	f.client.PrependReactor("create", "pods", func(action core.Action) (bool, runtime.Object, error) {
		p := action.(core.CreateAction).GetObject().(*corev1.Pod)
		if p.Name == "" {
			p.Name = fmt.Sprintf("%s%05d", p.GenerateName, f.created.Add(1))
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(f.client, 0)
	rsInf, podInf := factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods()
	f.c = NewController(f.client, rsInf, podInf, f.recorder, nil, Options{Clock: clocktesting.NewFakeClock(now)})
	f.rsIdx, f.podIdx = rsInf.Informer().GetIndexer(), podInf.Informer().GetIndexer()
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.ReplicaSet:
			_ = f.rsIdx.Add(o)
		case *corev1.Pod:
			_ = f.podIdx.Add(o)
		}
	}
	return f
}

func (f *fixture) sync(rs *appsv1.ReplicaSet) error {
	f.client.ClearActions()
	return f.c.sync(context.Background(), rs.Namespace+"/"+rs.Name)
}

// actions returns the verb/resource(/subresource) of the recorded actions,
// without the list and watch of informers.
func (f *fixture) actions() []string {
	var out []string
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s)
	}
	return out
}

func (f *fixture) actionsOf(verb, resource string) []core.Action {
	var out []core.Action
	for _, a := range f.client.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource {
			out = append(out, a)
		}
	}
	return out
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func newRS(name string, replicas int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), Generation: 1},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
			},
		},
	}
}

// newPod is a pod of rs (owned when owned), ready when ready.
func newPod(name string, rs *appsv1.ReplicaSet, owned, ready bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rs.Namespace, UID: types.UID(name + "-uid"),
			Labels: map[string]string{"app": rs.Spec.Template.Labels["app"]}, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
			ResourceVersion: "1"},
		Spec:   corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if owned {
		p.OwnerReferences = []metav1.OwnerReference{*controllerutil.NewControllerRef(rs, "apps/v1", "ReplicaSet")}
	}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}}
	}
	return p
}

func TestSyncCreatesPods(t *testing.T) {
	rs := newRS("nginx", 3)
	f := newFixture(t, rs)
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	creates := f.actionsOf("create", "pods")
	if len(creates) != 3 {
		t.Fatalf("creates = %d, want 3 (actions %v)", len(creates), f.actions())
	}
	for _, a := range creates {
		p := a.(core.CreateAction).GetObject().(*corev1.Pod)
		ref := metav1.GetControllerOf(p)
		if p.GenerateName != "nginx-" || p.Labels["app"] != "nginx" || ref == nil || ref.UID != rs.UID || ref.Kind != "ReplicaSet" ||
			ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion || a.GetNamespace() != "default" {
			t.Errorf("created pod = %+v", p.ObjectMeta)
		}
	}
	if adds, _ := f.c.expectations.Pending("default/nginx"); adds != 3 {
		t.Errorf("expected creations = %d, want 3", adds)
	}
	evs := f.events()
	if len(evs) != 3 || !strings.HasPrefix(evs[0], "Normal SuccessfulCreate Created pod: nginx-") {
		t.Errorf("events = %v", evs)
	}
	// Status: observedGeneration set, no pods seen yet in the cache.
	updates := f.actionsOf("update", "replicasets")
	if len(updates) != 1 {
		t.Fatalf("status updates = %d, want 1", len(updates))
	}
	st := updates[0].(core.UpdateAction).GetObject().(*appsv1.ReplicaSet).Status
	if st.ObservedGeneration != 1 || st.Replicas != 0 {
		t.Errorf("status = %+v", st)
	}
}

func TestExpectationsPreventDoubleCreate(t *testing.T) {
	rs := newRS("nginx", 2)
	f := newFixture(t, rs)
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	// A second sync before the informer shows the pods must not create.
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actionsOf("create", "pods")); n != 0 {
		t.Fatalf("second sync created %d pods, want 0", n)
	}
	// The pods arrive through the informer handler: expectations met.
	for i, name := range []string{"nginx-a", "nginx-b"} {
		p := newPod(name, rs, true, false)
		_ = f.podIdx.Add(p)
		f.c.addPod(p)
		if sat := f.c.expectations.Satisfied("default/nginx"); sat != (i == 1) {
			t.Errorf("after %d pods: satisfied = %v", i+1, sat)
		}
	}
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actionsOf("create", "pods")); n != 0 {
		t.Errorf("created %d pods with 2 of 2 present", n)
	}
}

func TestSyncDeletesInUpstreamOrder(t *testing.T) {
	rs := newRS("nginx", 2)
	readyOld := newPod("ready-old", rs, true, true)
	readyNew := newPod("ready-new", rs, true, true)
	readyNew.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-time.Second))
	notReady := newPod("not-ready", rs, true, false)
	unscheduled := newPod("unscheduled", rs, true, false)
	unscheduled.Spec.NodeName = ""
	unscheduled.Status.Phase = corev1.PodPending
	pending := newPod("pending", rs, true, false)
	pending.Status.Phase = corev1.PodPending
	f := newFixture(t, rs, readyOld, readyNew, notReady, unscheduled, pending)
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, a := range f.actionsOf("delete", "pods") {
		deleted = append(deleted, a.(core.DeleteAction).GetName())
	}
	want := map[string]bool{"unscheduled": true, "pending": true, "not-ready": true}
	if len(deleted) != 3 {
		t.Fatalf("deleted %v, want 3 pods", deleted)
	}
	for _, d := range deleted {
		if !want[d] {
			t.Errorf("deleted %s; want unscheduled, pending and not-ready first (got %v)", d, deleted)
		}
	}
	if _, dels := f.c.expectations.Pending("default/nginx"); dels != 3 {
		t.Errorf("expected deletions = %d, want 3", dels)
	}
	// Scaling to 1 from two ready pods deletes the one ready for less time.
	rs1 := newRS("nginx", 1)
	f = newFixture(t, rs1, readyOld, readyNew)
	if err := f.sync(rs1); err != nil {
		t.Fatal(err)
	}
	dels := f.actionsOf("delete", "pods")
	if len(dels) != 1 || dels[0].(core.DeleteAction).GetName() != "ready-new" {
		t.Errorf("deletes = %v, want ready-new", f.actions())
	}
	if evs := f.events(); len(evs) != 1 || evs[0] != "Normal SuccessfulDelete Deleted pod: ready-new" {
		t.Errorf("events = %v", evs)
	}
}

func TestDeletionObservedThroughGracefulUpdate(t *testing.T) {
	rs := newRS("nginx", 0)
	p := newPod("p1", rs, true, true)
	f := newFixture(t, rs, p)
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	if f.c.expectations.Satisfied("default/nginx") {
		t.Fatal("deletion issued: want unsatisfied")
	}
	terminating := p.DeepCopy()
	ts := metav1.NewTime(now)
	terminating.DeletionTimestamp = &ts
	terminating.ResourceVersion = "2"
	f.c.updatePod(p, terminating)
	if !f.c.expectations.Satisfied("default/nginx") {
		t.Error("graceful deletion seen: want satisfied")
	}
}

func TestAdoptAndRelease(t *testing.T) {
	rs := newRS("nginx", 2)
	orphan := newPod("orphan", rs, false, true)
	strayed := newPod("strayed", rs, true, true)
	strayed.Labels = map[string]string{"app": "other"}
	f := newFixture(t, rs, orphan, strayed)
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	patches := map[string]string{}
	for _, a := range f.actionsOf("patch", "pods") {
		pa := a.(core.PatchAction)
		patches[pa.GetName()] = string(pa.GetPatch())
	}
	if !strings.Contains(patches["orphan"], `"controller":true`) || !strings.Contains(patches["strayed"], `"$patch":"delete"`) {
		t.Errorf("patches = %v", patches)
	}
	// One pod claimed (the orphan): one more is created.
	if n := len(f.actionsOf("create", "pods")); n != 1 {
		t.Errorf("creates = %d, want 1", n)
	}
	// Being deleted: no adoption, no pods created.
	deleting := newRS("nginx", 2)
	ts := metav1.NewTime(now)
	deleting.DeletionTimestamp = &ts
	f = newFixture(t, deleting, orphan)
	if err := f.sync(deleting); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actionsOf("patch", "pods")) + len(f.actionsOf("create", "pods")); n != 0 {
		t.Errorf("deleting ReplicaSet acted: %v", f.actions())
	}
}

func TestStatus(t *testing.T) {
	rs := newRS("nginx", 3)
	rs.Spec.MinReadySeconds = 120
	ready := newPod("ready-long", rs, true, true)
	ready.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-time.Hour))
	readyRecent := newPod("ready-recent", rs, true, true) // ready 1 minute: not yet available
	mislabeled := newPod("partial", rs, true, false)
	rs.Spec.Template.Labels["tier"] = "web"
	ready.Labels["tier"] = "web"
	readyRecent.Labels["tier"] = "web"
	f := newFixture(t, rs, ready, readyRecent, mislabeled)
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	ups := f.actionsOf("update", "replicasets")
	if len(ups) != 1 || ups[0].GetSubresource() != "status" {
		t.Fatalf("actions = %v", f.actions())
	}
	got := ups[0].(core.UpdateAction).GetObject().(*appsv1.ReplicaSet).Status
	want := appsv1.ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 1}
	if got.Replicas != want.Replicas || got.FullyLabeledReplicas != want.FullyLabeledReplicas || got.ReadyReplicas != want.ReadyReplicas ||
		got.AvailableReplicas != want.AvailableReplicas || got.ObservedGeneration != want.ObservedGeneration {
		t.Errorf("status = %+v, want %+v", got, want)
	}
	// With that status in place, another sync writes nothing.
	rs2 := rs.DeepCopy()
	rs2.Status = got
	f = newFixture(t, rs2, ready, readyRecent, mislabeled)
	if err := f.sync(rs2); err != nil {
		t.Fatal(err)
	}
	if a := f.actions(); len(a) != 0 {
		t.Errorf("unchanged status: actions %v, want none", a)
	}
}

func TestFailedCreatesSlowStartAndCondition(t *testing.T) {
	rs := newRS("nginx", 10)
	f := newFixture(t, rs)
	var attempts atomic.Int64
	f.client.PrependReactor("create", "pods", func(core.Action) (bool, runtime.Object, error) {
		if attempts.Add(1) > 1 {
			return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "", errors.New("exceeded quota"))
		}
		return false, nil, nil
	})
	err := f.sync(rs)
	if err == nil {
		t.Fatal("want the create error")
	}
	// Batches 1 (ok) and 2 (both fail): 3 attempts, not 10.
	if n := attempts.Load(); n != 3 {
		t.Errorf("create attempts = %d, want 3", n)
	}
	// Only the one successful create is still expected.
	if adds, _ := f.c.expectations.Pending("default/nginx"); adds != 1 {
		t.Errorf("expected creations = %d, want 1", adds)
	}
	ups := f.actionsOf("update", "replicasets")
	if len(ups) != 1 {
		t.Fatalf("actions = %v", f.actions())
	}
	st := ups[0].(core.UpdateAction).GetObject().(*appsv1.ReplicaSet).Status
	if len(st.Conditions) != 1 || st.Conditions[0].Type != appsv1.ReplicaSetReplicaFailure || st.Conditions[0].Reason != "FailedCreate" ||
		!strings.Contains(st.Conditions[0].Message, "exceeded quota") {
		t.Errorf("conditions = %+v", st.Conditions)
	}
	var failed int
	for _, e := range f.events() {
		if strings.HasPrefix(e, "Warning FailedCreate Error creating:") {
			failed++
		}
	}
	if failed != 2 {
		t.Errorf("FailedCreate events = %d, want 2", failed)
	}
}

func TestReplicaFailureClearedOnSuccess(t *testing.T) {
	rs := newRS("nginx", 1)
	rs.Status.Conditions = []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate"}}
	f := newFixture(t, rs, newPod("p", rs, true, false))
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	ups := f.actionsOf("update", "replicasets")
	if len(ups) != 1 || len(ups[0].(core.UpdateAction).GetObject().(*appsv1.ReplicaSet).Status.Conditions) != 0 {
		t.Errorf("want the ReplicaFailure condition removed: %v", f.actions())
	}
}

func TestBurstLimit(t *testing.T) {
	rs := newRS("big", 1200)
	f := newFixture(t, rs)
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	if n := len(f.actionsOf("create", "pods")); n != BurstReplicas {
		t.Errorf("creates = %d, want %d", n, BurstReplicas)
	}
}

func TestDeletedReplicaSetForgetsExpectations(t *testing.T) {
	rs := newRS("nginx", 1)
	f := newFixture(t, rs)
	f.c.expectations.ExpectCreations("default/nginx", 1)
	_ = f.rsIdx.Delete(rs)
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	if adds, _ := f.c.expectations.Pending("default/nginx"); adds != 0 {
		t.Errorf("expectations kept for a deleted ReplicaSet")
	}
}

func TestPodEventsEnqueue(t *testing.T) {
	rs := newRS("nginx", 1)
	other := newRS("other", 1)
	f := newFixture(t, rs, other)
	orphan := newPod("o", rs, false, false)
	f.c.addPod(orphan)
	if f.c.queue.Len() != 1 {
		t.Fatalf("orphan add: queue len %d, want 1", f.c.queue.Len())
	}
	key, _ := f.c.queue.Get()
	f.c.queue.Done(key)
	if key != "default/nginx" {
		t.Errorf("queued %q", key)
	}
	// minReadySeconds: a pod turning ready requeues after the delay too.
	rsMin := newRS("min", 1)
	rsMin.Spec.MinReadySeconds = 5
	_ = f.rsIdx.Add(rsMin)
	oldPod := newPod("m", rsMin, true, false)
	curPod := newPod("m", rsMin, true, true)
	curPod.ResourceVersion = "2"
	f.c.updatePod(oldPod, curPod)
	if f.c.queue.Len() != 1 {
		t.Errorf("ready pod: queue len %d, want 1", f.c.queue.Len())
	}
}
