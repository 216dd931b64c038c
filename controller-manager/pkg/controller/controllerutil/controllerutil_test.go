package controllerutil

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestExpectations(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	e := NewExpectations(clk)
	const key = "ns/rs"
	if !e.Satisfied(key) {
		t.Fatal("no record: want satisfied")
	}
	e.ExpectCreations(key, 3)
	for i := 0; i < 2; i++ {
		e.CreationObserved(key)
		if e.Satisfied(key) {
			t.Fatalf("after %d of 3 creations: want unsatisfied", i+1)
		}
	}
	e.CreationObserved(key)
	if !e.Satisfied(key) {
		t.Fatal("all creations observed: want satisfied")
	}
	// Extra observations (a pod seen after a restart) never go negative.
	e.CreationObserved(key)
	if adds, _ := e.Pending(key); adds != 0 {
		t.Errorf("adds = %d, want 0", adds)
	}

	e.ExpectDeletions(key, []string{"ns/a", "ns/b"})
	e.DeletionObserved(key, "ns/a")
	e.DeletionObserved(key, "ns/a") // seen twice: graceful update, then removal
	if e.Satisfied(key) {
		t.Fatal("one of two deletions observed: want unsatisfied")
	}
	e.DeletionObserved(key, "ns/b")
	if !e.Satisfied(key) {
		t.Fatal("deletions observed: want satisfied")
	}

	e.ExpectCreations(key, 5)
	e.CreationsSkipped(key, 4)
	if adds, _ := e.Pending(key); adds != 1 {
		t.Errorf("after skipping 4 of 5: adds = %d, want 1", adds)
	}
	clk.Step(ExpectationsTimeout + time.Second)
	if !e.Satisfied(key) {
		t.Fatal("expired expectations: want satisfied")
	}
	e.ExpectCreations(key, 1)
	e.Delete(key)
	if !e.Satisfied(key) {
		t.Fatal("deleted: want satisfied")
	}
}

func TestSlowStartBatch(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		count     int
		failAfter int64 // calls after which fn fails; -1 never
		wantOK    int
		wantCalls int64
		wantErr   bool
	}{
		{name: "all succeed", count: 10, failAfter: -1, wantOK: 10, wantCalls: 10},
		{name: "zero", count: 0, failAfter: -1, wantOK: 0, wantCalls: 0},
		// Batches 1, 2, 4: the third batch (calls 4..7) fails entirely.
		{name: "fail from the 4th call", count: 10, failAfter: 3, wantOK: 3, wantCalls: 7, wantErr: true},
		{name: "first fails", count: 10, failAfter: 0, wantOK: 0, wantCalls: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int64
			ok, err := SlowStartBatch(tt.count, 1, func() error {
				n := calls.Add(1)
				if tt.failAfter >= 0 && n > tt.failAfter {
					return boom
				}
				return nil
			})
			if ok != tt.wantOK || calls.Load() != tt.wantCalls || (err != nil) != tt.wantErr {
				t.Errorf("got ok=%d calls=%d err=%v, want ok=%d calls=%d err=%v", ok, calls.Load(), err, tt.wantOK, tt.wantCalls, tt.wantErr)
			}
		})
	}
}

func readyPod(name string, readySince time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}, Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{
			Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(readySince)}}}}
	p.CreationTimestamp = metav1.NewTime(readySince.Add(-time.Minute))
	return p
}

func TestActivePodsWithRanksOrder(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	unscheduled := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unscheduled"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	unknown := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unknown"}, Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodUnknown}}
	notReady := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "not-ready"}, Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	readyShort := readyPod("ready-10s", now.Add(-10*time.Second))
	readyLong := readyPod("ready-1h", now.Add(-time.Hour))
	restarted := readyPod("ready-1h-restarted", now.Add(-time.Hour))
	restarted.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: 5}}
	cheap := readyPod("ready-1h-cost-minus", now.Add(-time.Hour))
	cheap.Annotations = map[string]string{PodDeletionCostAnnotation: "-10"}

	pods := []*corev1.Pod{readyLong, restarted, readyShort, notReady, cheap, unknown, pending, unscheduled}
	want := []string{"unscheduled", "pending", "unknown", "not-ready", "ready-1h-cost-minus", "ready-10s", "ready-1h-restarted", "ready-1h"}
	s := ActivePodsWithRanks{Pods: pods, Rank: make([]int, len(pods)), Now: metav1.NewTime(now)}
	sort.Sort(s)
	var got []string
	for _, p := range s.Pods {
		got = append(got, p.Name)
	}
	if !equalStrings(got, want) {
		t.Errorf("order = %v\nwant    %v", got, want)
	}
}

func TestActivePodsWithRanksDoubledUpFirst(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	a := readyPod("alone", now.Add(-time.Hour))
	a.Spec.NodeName = "n2"
	b := readyPod("crowded", now.Add(-time.Hour))
	related := []*corev1.Pod{a, b, readyPod("other", now.Add(-time.Hour))} // two on n1
	pods := []*corev1.Pod{a, b}
	s := ActivePodsWithRanks{Pods: pods, Rank: RanksByRelatedPodsOnSameNode(pods, related), Now: metav1.NewTime(now)}
	sort.Sort(s)
	if s.Pods[0].Name != "crowded" {
		t.Errorf("first = %s, want the pod sharing its node", s.Pods[0].Name)
	}
}

func TestActivePodsCreationTimeBuckets(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	// Not ready: ordered by creation, newer first; within the same
	// power-of-two bucket of age, by UID.
	mk := func(name string, age time.Duration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(now.Add(-age))},
			Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	old := mk("a-old", time.Hour)
	newer := mk("z-new", time.Second)
	pods := []*corev1.Pod{old, newer}
	sort.Sort(ActivePodsWithRanks{Pods: pods, Rank: []int{0, 0}, Now: metav1.NewTime(now)})
	if pods[0].Name != "z-new" {
		t.Errorf("first = %s, want the newer pod", pods[0].Name)
	}
}

func TestIsPodAvailable(t *testing.T) {
	now := time.Unix(1000, 0)
	p := readyPod("p", now.Add(-5*time.Second))
	tests := []struct {
		name       string
		minReady   int32
		pod        *corev1.Pod
		wantResult bool
	}{
		{"ready, no minReadySeconds", 0, p, true},
		{"ready 5s, minReadySeconds 3", 3, p, true},
		{"ready 5s, minReadySeconds 10", 10, p, false},
		{"not ready", 0, &corev1.Pod{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsPodAvailable(tt.pod, tt.minReady, now); got != tt.wantResult {
				t.Errorf("IsPodAvailable = %v, want %v", got, tt.wantResult)
			}
		})
	}
}

func TestPodControlCreate(t *testing.T) {
	client := fake.NewSimpleClientset()
	rec := record.NewFakeRecorder(10)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "rs-uid"}}
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	client.PrependReactor("create", "pods", func(action core.Action) (bool, runtime.Object, error) {
		p := action.(core.CreateAction).GetObject().(*corev1.Pod)
		p.Name = p.GenerateName + "abcde"
		return false, nil, nil
	})
	pc := RealPodControl{Client: client, Recorder: rec}
	ref := NewControllerRef(rs, "apps/v1", "ReplicaSet")
	if err := pc.CreatePod(context.Background(), "ns", tmpl, rs, ref); err != nil {
		t.Fatal(err)
	}
	p, err := client.CoreV1().Pods("ns").Get(context.Background(), "web-abcde", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.GenerateName != "web-" || p.Labels["app"] != "web" || p.Annotations["a"] != "b" || p.Spec.Containers[0].Image != "nginx" {
		t.Errorf("pod = %+v", p.ObjectMeta)
	}
	owner := metav1.GetControllerOf(p)
	if owner == nil || owner.UID != "rs-uid" || owner.Kind != "ReplicaSet" || owner.APIVersion != "apps/v1" ||
		owner.BlockOwnerDeletion == nil || !*owner.BlockOwnerDeletion {
		t.Errorf("controller ref = %+v", owner)
	}
	if ev := <-rec.Events; ev != "Normal SuccessfulCreate Created pod: web-abcde" {
		t.Errorf("event = %q", ev)
	}
	tmpl.Labels = nil
	if err := pc.CreatePod(context.Background(), "ns", tmpl, rs, ref); !errors.Is(err, ErrNoPodLabels) {
		t.Errorf("create without labels: err = %v, want ErrNoPodLabels", err)
	}
}

func TestRefManagerClaim(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "rs-uid"}}
	ref := NewControllerRef(rs, "apps/v1", "ReplicaSet")
	other := NewControllerRef(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "other"}}, "apps/v1", "ReplicaSet")
	mk := func(name string, app string, owner *metav1.OwnerReference) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid"), Labels: map[string]string{"app": app}}}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		return p
	}
	pods := []*corev1.Pod{
		mk("owned-match", "web", ref),
		mk("owned-nomatch", "db", ref),
		mk("orphan-match", "web", nil),
		mk("orphan-nomatch", "db", nil),
		mk("others", "web", other),
	}
	client := fake.NewSimpleClientset()
	var patches []string
	client.PrependReactor("patch", "pods", func(action core.Action) (bool, runtime.Object, error) {
		pa := action.(core.PatchAction)
		patches = append(patches, pa.GetName()+" "+string(pa.GetPatch()))
		return true, &corev1.Pod{}, nil
	})
	checked := 0
	m := NewPodRefManager(client, rs, "apps/v1", "ReplicaSet", labels.SelectorFromSet(labels.Set{"app": "web"}), func(context.Context) error {
		checked++
		return nil
	})
	got, err := m.Claim(context.Background(), pods)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	if !equalStrings(names, []string{"owned-match", "orphan-match"}) {
		t.Errorf("claimed %v", names)
	}
	if len(patches) != 2 || checked != 1 {
		t.Fatalf("patches = %v, canAdopt calls = %d", patches, checked)
	}
	var release, adopt map[string]any
	_ = json.Unmarshal([]byte(patches[0][len("owned-nomatch "):]), &release)
	_ = json.Unmarshal([]byte(patches[1][len("orphan-match "):]), &adopt)
	relRefs := release["metadata"].(map[string]any)["ownerReferences"].([]any)[0].(map[string]any)
	if relRefs["$patch"] != "delete" || relRefs["uid"] != "rs-uid" || release["metadata"].(map[string]any)["uid"] != "owned-nomatch-uid" {
		t.Errorf("release patch = %s", patches[0])
	}
	adRefs := adopt["metadata"].(map[string]any)["ownerReferences"].([]any)[0].(map[string]any)
	if adRefs["controller"] != true || adRefs["blockOwnerDeletion"] != true || adRefs["uid"] != "rs-uid" || adopt["metadata"].(map[string]any)["uid"] != "orphan-match-uid" {
		t.Errorf("adopt patch = %s", patches[1])
	}

	// A controller being deleted neither adopts nor releases.
	now := metav1.Now()
	deleting := rs.DeepCopy()
	deleting.DeletionTimestamp = &now
	patches = nil
	m = NewPodRefManager(client, deleting, "apps/v1", "ReplicaSet", labels.SelectorFromSet(labels.Set{"app": "web"}), nil)
	got, _ = m.Claim(context.Background(), pods)
	if len(got) != 1 || got[0].Name != "owned-match" || len(patches) != 0 {
		t.Errorf("deleting controller: claimed %d, patches %v", len(got), patches)
	}

	// canAdopt refusing blocks adoption with an error.
	m = NewPodRefManager(client, rs, "apps/v1", "ReplicaSet", labels.Everything(), func(context.Context) error { return errors.New("gone") })
	if _, err := m.Claim(context.Background(), []*corev1.Pod{mk("o", "web", nil)}); err == nil {
		t.Error("adoption refused: want an error")
	}
}

func TestControllerUIDIndex(t *testing.T) {
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Pod{}, 0, cache.Indexers{})
	if err := AddControllerUIDIndex(inf); err != nil {
		t.Fatal(err)
	}
	if err := AddControllerUIDIndex(inf); err != nil {
		t.Fatalf("second add: %v", err)
	}
	owner := NewControllerRef(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", UID: "u1"}}, "apps/v1", "ReplicaSet")
	idx := inf.GetIndexer()
	_ = idx.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{*owner}}})
	_ = idx.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}})
	_ = idx.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "other"}})
	owned, _ := ByController[*corev1.Pod](idx, "u1")
	orphans, _ := Orphans[*corev1.Pod](idx, "ns")
	if len(owned) != 1 || owned[0].Name != "a" || len(orphans) != 1 || orphans[0].Name != "b" {
		t.Errorf("owned %v orphans %v", owned, orphans)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
