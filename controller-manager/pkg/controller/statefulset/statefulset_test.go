package statefulset

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"skiff.dev/controller-manager/pkg/controller/history"
)

var now = time.Unix(1_700_000_000, 0)

// fixture is a controller over a fake client whose informer caches are
// filled by hand: refresh copies the client's objects into them, as the
// informers would after the writes of a sync.
type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	c        *Controller
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
	indexers map[string]cache.Indexer
	uids     atomic.Int64
	last     []core.Action // the actions of the last sync
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, client: fake.NewSimpleClientset(objs...), recorder: record.NewFakeRecorder(1000),
		clock: clocktesting.NewFakeClock(now)}
	// The API server gives new pods and claims a UID and a creation time;
	// a new pod is Pending.
	f.client.PrependReactor("create", "*", func(action core.Action) (bool, runtime.Object, error) {
		obj, ok := action.(core.CreateAction).GetObject().(metav1.Object)
		if ok {
			obj.SetUID(types.UID(fmt.Sprintf("uid-%d", f.uids.Add(1))))
			obj.SetCreationTimestamp(metav1.NewTime(f.clock.Now()))
		}
		if p, ok := obj.(*corev1.Pod); ok && p.Status.Phase == "" {
			p.Status.Phase = corev1.PodPending
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(f.client, 0)
	apps, corev := factory.Apps().V1(), factory.Core().V1()
	f.c = NewController(f.client, apps.StatefulSets(), corev.Pods(), corev.PersistentVolumeClaims(), apps.ControllerRevisions(),
		f.recorder, nil, Options{Clock: f.clock})
	f.indexers = map[string]cache.Indexer{
		"statefulsets":           apps.StatefulSets().Informer().GetIndexer(),
		"pods":                   corev.Pods().Informer().GetIndexer(),
		"persistentvolumeclaims": corev.PersistentVolumeClaims().Informer().GetIndexer(),
		"controllerrevisions":    apps.ControllerRevisions().Informer().GetIndexer(),
	}
	f.refresh()
	return f
}

// refresh replaces the caches' contents with the client's objects.
func (f *fixture) refresh() {
	f.t.Helper()
	ctx := context.Background()
	lists := map[string]func() ([]any, error){
		"statefulsets": func() ([]any, error) {
			l, err := f.client.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{})
			return items(l, err, func(i int) any { return &l.Items[i] }, func() int { return len(l.Items) })
		},
		"pods": func() ([]any, error) {
			l, err := f.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return items(l, err, func(i int) any { return &l.Items[i] }, func() int { return len(l.Items) })
		},
		"persistentvolumeclaims": func() ([]any, error) {
			l, err := f.client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
			return items(l, err, func(i int) any { return &l.Items[i] }, func() int { return len(l.Items) })
		},
		"controllerrevisions": func() ([]any, error) {
			l, err := f.client.AppsV1().ControllerRevisions("").List(ctx, metav1.ListOptions{})
			return items(l, err, func(i int) any { return &l.Items[i] }, func() int { return len(l.Items) })
		},
	}
	for name, list := range lists {
		objs, err := list()
		if err != nil {
			f.t.Fatal(err)
		}
		if err := f.indexers[name].Replace(objs, ""); err != nil {
			f.t.Fatal(err)
		}
	}
}

func items[L any](l L, err error, at func(int) any, n func() int) ([]any, error) {
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, n())
	for i := 0; i < n(); i++ {
		out = append(out, at(i))
	}
	return out, nil
}

// sync syncs set from fresh caches and refreshes them afterwards.
func (f *fixture) sync(set *appsv1.StatefulSet) error {
	f.t.Helper()
	f.refresh()
	f.client.ClearActions()
	err := f.c.sync(context.Background(), set.Namespace+"/"+set.Name)
	f.last = f.client.Actions()
	f.refresh()
	return err
}

func (f *fixture) mustSync(set *appsv1.StatefulSet) {
	f.t.Helper()
	if err := f.sync(set); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
}

// actions returns "verb resource[/subresource] name" of the writes of the
// last sync.
func (f *fixture) actions() []string {
	var out []string
	for _, a := range f.last {
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		switch a := a.(type) {
		case core.CreateAction:
			s += " " + a.GetObject().(metav1.Object).GetName()
		case core.UpdateAction:
			s += " " + a.GetObject().(metav1.Object).GetName()
		case core.DeleteAction:
			s += " " + a.GetName()
		case core.PatchAction:
			s += " " + a.GetName()
		case core.GetAction:
			s += " " + a.GetName()
		}
		out = append(out, s)
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

// kubelet plays the kubelet: every pod that is not terminating becomes
// Running and Ready (ready since the fake clock's now).
func (f *fixture) kubelet() {
	f.t.Helper()
	pods, err := f.client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodRunning {
			continue
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(f.clock.Now())}}
		if _, err := f.client.CoreV1().Pods("default").UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
			f.t.Fatal(err)
		}
	}
	f.refresh()
}

// setPod changes one pod in the client.
func (f *fixture) setPod(name string, change func(*corev1.Pod)) {
	f.t.Helper()
	p, err := f.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	change(p)
	if _, err := f.client.CoreV1().Pods("default").Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	f.refresh()
}

func (f *fixture) pods() []*corev1.Pod {
	objs := f.indexers["pods"].List()
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*corev1.Pod))
	}
	sort.Slice(out, func(i, j int) bool { return getOrdinal(out[i]) < getOrdinal(out[j]) })
	return out
}

// podNames is "name@revision" of each pod, by ordinal.
func (f *fixture) podRevisions() []string {
	var out []string
	for _, p := range f.pods() {
		out = append(out, p.Name+"@"+getPodRevision(p))
	}
	return out
}

func (f *fixture) podNames() string {
	var out []string
	for _, p := range f.pods() {
		out = append(out, p.Name)
	}
	return strings.Join(out, ",")
}

func (f *fixture) get(set *appsv1.StatefulSet) *appsv1.StatefulSet {
	f.t.Helper()
	got, err := f.client.AppsV1().StatefulSets(set.Namespace).Get(context.Background(), set.Name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return got
}

// update writes a change of set's spec (the generation goes up).
func (f *fixture) update(set *appsv1.StatefulSet, change func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	f.t.Helper()
	cur := f.get(set)
	change(cur)
	cur.Generation++
	updated, err := f.client.AppsV1().StatefulSets(set.Namespace).Update(context.Background(), cur, metav1.UpdateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.refresh()
	return updated
}

func (f *fixture) revisions() []*appsv1.ControllerRevision {
	var out []*appsv1.ControllerRevision
	for _, o := range f.indexers["controllerrevisions"].List() {
		out = append(out, o.(*appsv1.ControllerRevision))
	}
	history.SortControllerRevisions(out)
	return out
}

func newSet(name string, replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), Generation: 1},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: name + "-svc",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1"}}},
			},
			PodManagementPolicy:  appsv1.OrderedReadyPodManagement,
			UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			RevisionHistoryLimit: ptr(int32(10)),
		},
	}
}

func ptr[T any](v T) *T { return &v }

func withClaims(set *appsv1.StatefulSet, names ...string) *appsv1.StatefulSet {
	for _, n := range names {
		set.Spec.VolumeClaimTemplates = append(set.Spec.VolumeClaimTemplates, corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: n},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		})
	}
	return set
}

func equal(a []string, b ...string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

func TestCreatesPodsInOrder(t *testing.T) {
	set := withClaims(newSet("web", 3), "data")
	f := newFixture(t, set)
	f.mustSync(set)
	revs := f.revisions()
	if len(revs) != 1 {
		t.Fatalf("revisions = %d, want 1", len(revs))
	}
	rev := revs[0].Name
	if want := []string{
		"create controllerrevisions " + rev,
		"create persistentvolumeclaims data-web-0",
		"create pods web-0",
		"update statefulsets/status web",
	}; !equal(f.actions(), want...) {
		t.Errorf("actions:\n%s\nwant:\n%s", strings.Join(f.actions(), "\n"), strings.Join(want, "\n"))
	}
	pod := f.pods()[0]
	if pod.Spec.Hostname != "web-0" || pod.Spec.Subdomain != "web-svc" {
		t.Errorf("hostname/subdomain = %q/%q", pod.Spec.Hostname, pod.Spec.Subdomain)
	}
	wantLabels := map[string]string{"app": "web", "statefulset.kubernetes.io/pod-name": "web-0",
		"apps.kubernetes.io/pod-index": "0", "controller-revision-hash": rev}
	for k, v := range wantLabels {
		if pod.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, pod.Labels[k], v)
		}
	}
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != set.UID || ref.Kind != "StatefulSet" {
		t.Errorf("owner = %+v", pod.OwnerReferences)
	}
	if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].PersistentVolumeClaim == nil || pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-web-0" {
		t.Errorf("volumes = %+v", pod.Spec.Volumes)
	}
	if ev := f.events(); !equal(ev,
		"Normal SuccessfulCreate create Claim data-web-0 Pod web-0 in StatefulSet web success",
		"Normal SuccessfulCreate create Pod web-0 in StatefulSet web successful") {
		t.Errorf("events = %q", ev)
	}
	// As upstream, the pod just created is counted once it is seen.
	if s := f.get(set).Status; s.Replicas != 0 || s.ReadyReplicas != 0 ||
		s.CurrentRevision != rev || s.UpdateRevision != rev || s.ObservedGeneration != 1 || s.CollisionCount == nil || *s.CollisionCount != 0 {
		t.Errorf("status = %+v", s)
	}

	// web-0 is not ready: web-1 waits.
	f.mustSync(set)
	if got := f.podNames(); got != "web-0" {
		t.Errorf("before web-0 is ready: pods %s", got)
	}
	for _, want := range []string{"web-0,web-1", "web-0,web-1,web-2"} {
		f.kubelet()
		f.mustSync(set)
		if got := f.podNames(); got != want {
			t.Errorf("pods %s, want %s", got, want)
		}
	}
	f.kubelet()
	f.mustSync(set)
	if s := f.get(set).Status; s.Replicas != 3 || s.ReadyReplicas != 3 || s.AvailableReplicas != 3 || s.CurrentReplicas != 3 || s.UpdatedReplicas != 3 {
		t.Errorf("status = %+v", s)
	}
	// Nothing left to do: no writes.
	f.mustSync(set)
	if a := f.actions(); len(a) != 0 {
		t.Errorf("steady state: actions %v", a)
	}
}

func TestParallelCreatesAllAtOnce(t *testing.T) {
	set := newSet("web", 3)
	set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	f := newFixture(t, set)
	f.mustSync(set)
	if got := f.podNames(); got != "web-0,web-1,web-2" {
		t.Errorf("pods %s, want all three", got)
	}
	// Scaling down deletes all the surplus at once, ready or not.
	set = f.update(set, func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr(int32(0)) })
	f.mustSync(set)
	if got := f.podNames(); got != "" {
		t.Errorf("after scale to 0: pods %s", got)
	}
}

func TestOrdinalsStart(t *testing.T) {
	set := newSet("web", 2)
	set.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 5}
	f := newFixture(t, set)
	for range 2 {
		f.mustSync(set)
		f.kubelet()
	}
	if got := f.podNames(); got != "web-5,web-6" {
		t.Errorf("pods %s, want web-5,web-6", got)
	}
	if p := f.pods()[0]; p.Labels[appsv1.PodIndexLabel] != "5" {
		t.Errorf("pod-index = %q", p.Labels[appsv1.PodIndexLabel])
	}
	// Moving the start condemns web-5 and creates web-7.
	set = f.update(set, func(s *appsv1.StatefulSet) { s.Spec.Ordinals.Start = 6 })
	f.mustSync(set)
	f.kubelet()
	f.mustSync(set)
	if got := f.podNames(); got != "web-6,web-7" {
		t.Errorf("after start 6: pods %s", got)
	}
}

// newRunningSet returns a fixture with set's pods all created, running and
// ready.
func newRunningSet(t *testing.T, set *appsv1.StatefulSet) *fixture {
	t.Helper()
	f := newFixture(t, set)
	for range int(replicasOf(set)) + 1 {
		f.mustSync(set)
		f.kubelet()
	}
	f.mustSync(set)
	if got := len(f.pods()); got != int(replicasOf(set)) {
		t.Fatalf("set up %d pods, want %d", got, replicasOf(set))
	}
	f.events()
	return f
}

func TestScaleDownInReverseOrder(t *testing.T) {
	set := newSet("web", 4)
	f := newRunningSet(t, set)
	set = f.update(set, func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr(int32(1)) })
	for _, want := range []string{"web-0,web-1,web-2", "web-0,web-1", "web-0"} {
		f.mustSync(set)
		if got := f.podNames(); got != want {
			t.Fatalf("pods %s, want %s", got, want)
		}
	}
	f.mustSync(set)
	if ev := f.events(); !equal(ev,
		"Normal SuccessfulDelete delete Pod web-3 in StatefulSet web successful",
		"Normal SuccessfulDelete delete Pod web-2 in StatefulSet web successful",
		"Normal SuccessfulDelete delete Pod web-1 in StatefulSet web successful") {
		t.Errorf("events = %q", ev)
	}
	if s := f.get(set).Status; s.Replicas != 1 || s.ReadyReplicas != 1 {
		t.Errorf("status = %+v", s)
	}
}

func TestScaleDownWaits(t *testing.T) {
	tests := []struct {
		name       string
		notReady   string
		terminates string
		wantDelete string
	}{
		{name: "a predecessor is not ready", notReady: "web-0"},
		{name: "the first unhealthy pod goes first", notReady: "web-2", wantDelete: "web-2"},
		{name: "a higher pod still terminating", terminates: "web-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newSet("web", 3)
			f := newRunningSet(t, set)
			set = f.update(set, func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr(int32(1)) })
			if tt.notReady != "" {
				f.setPod(tt.notReady, func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse })
			}
			if tt.terminates != "" {
				f.setPod(tt.terminates, func(p *corev1.Pod) { p.DeletionTimestamp = ptr(metav1.NewTime(now)) })
			}
			f.mustSync(set)
			var deletes []string
			for _, a := range f.actions() {
				if strings.HasPrefix(a, "delete pods ") {
					deletes = append(deletes, strings.TrimPrefix(a, "delete pods "))
				}
			}
			if got := strings.Join(deletes, ","); got != tt.wantDelete {
				t.Errorf("deleted %q, want %q", got, tt.wantDelete)
			}
		})
	}
}

// rollOut syncs and plays the kubelet until the set's status says the
// rollout is done, or fails after n rounds.
func (f *fixture) rollOut(set *appsv1.StatefulSet, n int) *appsv1.StatefulSet {
	f.t.Helper()
	for range n {
		f.mustSync(set)
		f.kubelet()
		s := f.get(set).Status
		if s.CurrentRevision == s.UpdateRevision && s.UpdatedReplicas == replicasOf(set) && s.ReadyReplicas == replicasOf(set) {
			f.mustSync(set)
			return f.get(set)
		}
	}
	f.t.Fatalf("rollout not done: %+v; pods %v", f.get(set).Status, f.podRevisions())
	return nil
}

func TestRollingUpdateAndRollback(t *testing.T) {
	set := newSet("web", 3)
	f := newRunningSet(t, set)
	rev1 := f.get(set).Status.CurrentRevision

	set = f.update(set, func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "busybox:2" })
	f.mustSync(set)
	st := f.get(set).Status
	rev2 := st.UpdateRevision
	if rev2 == rev1 || st.CurrentRevision != rev1 {
		t.Fatalf("after the template change: current %s update %s (rev1 %s)", st.CurrentRevision, rev2, rev1)
	}
	// The highest ordinal goes first, and only it.
	if got := f.podRevisions(); !equal(got, "web-0@"+rev1, "web-1@"+rev1) {
		t.Errorf("pods %v, want web-2 deleted", got)
	}
	f.mustSync(set)
	if p := f.pods()[2]; getPodRevision(p) != rev2 || p.Spec.Containers[0].Image != "busybox:2" {
		t.Errorf("recreated web-2: revision %s image %s", getPodRevision(p), p.Spec.Containers[0].Image)
	}
	set = f.rollOut(set, 10)
	if set.Status.CurrentRevision != rev2 || set.Status.CurrentReplicas != 3 || set.Status.UpdatedReplicas != 3 {
		t.Errorf("after the rollout: %+v", set.Status)
	}

	// Back to the first template: its revision is reused, renumbered.
	set = f.update(set, func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "busybox:1" })
	f.mustSync(set)
	if st := f.get(set).Status; st.UpdateRevision != rev1 || st.CurrentRevision != rev2 {
		t.Errorf("rollback: current %s update %s, want %s then %s", st.CurrentRevision, st.UpdateRevision, rev2, rev1)
	}
	revs := f.revisions()
	if len(revs) != 2 || revs[1].Name != rev1 || revs[1].Revision != 3 {
		var got []string
		for _, r := range revs {
			got = append(got, fmt.Sprintf("%s=%d", r.Name, r.Revision))
		}
		t.Errorf("revisions %v, want %s renumbered 3 and no new one", got, rev1)
	}
	set = f.rollOut(set, 10)
	if set.Status.CurrentRevision != rev1 {
		t.Errorf("after the rollback: %+v", set.Status)
	}
	for _, p := range f.pods() {
		if p.Spec.Containers[0].Image != "busybox:1" {
			t.Errorf("%s runs %s after the rollback", p.Name, p.Spec.Containers[0].Image)
		}
	}
}

func TestRollingUpdateStrategies(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*appsv1.StatefulSet)
		// wantDeleted are the pods deleted by the first sync after the
		// template change.
		wantDeleted string
		// wantFinal are the pods at the new revision once it settles.
		wantUpdated string
	}{
		{name: "one at a time", wantDeleted: "web-3", wantUpdated: "web-0,web-1,web-2,web-3"},
		{
			name: "partition 2",
			modify: func(s *appsv1.StatefulSet) {
				s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(2))}
			},
			wantDeleted: "web-3", wantUpdated: "web-2,web-3",
		},
		{
			name: "maxUnavailable 2",
			modify: func(s *appsv1.StatefulSet) {
				s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(0)), MaxUnavailable: ptr(intstr.FromInt32(2))}
			},
			wantDeleted: "web-3,web-2", wantUpdated: "web-0,web-1,web-2,web-3",
		},
		{
			name: "maxUnavailable 50% with partition 1",
			modify: func(s *appsv1.StatefulSet) {
				s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(1)), MaxUnavailable: ptr(intstr.FromString("50%"))}
			},
			wantDeleted: "web-3,web-2", wantUpdated: "web-1,web-2,web-3",
		},
		{
			name: "OnDelete",
			modify: func(s *appsv1.StatefulSet) {
				s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newSet("web", 4)
			if tt.modify != nil {
				tt.modify(set)
			}
			f := newRunningSet(t, set)
			set = f.update(set, func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "busybox:2" })
			f.mustSync(set)
			var deleted []string
			for _, a := range f.actions() {
				if strings.HasPrefix(a, "delete pods ") {
					deleted = append(deleted, strings.TrimPrefix(a, "delete pods "))
				}
			}
			if got := strings.Join(deleted, ","); got != tt.wantDeleted {
				t.Errorf("first sync deleted %q, want %q", got, tt.wantDeleted)
			}
			for range 12 {
				f.mustSync(set)
				f.kubelet()
			}
			update := f.get(set).Status.UpdateRevision
			var updated []string
			for _, p := range f.pods() {
				if getPodRevision(p) == update {
					updated = append(updated, p.Name)
				}
			}
			if got := strings.Join(updated, ","); got != tt.wantUpdated {
				t.Errorf("at the update revision: %q, want %q", got, tt.wantUpdated)
			}
			if st := f.get(set).Status; st.UpdatedReplicas != int32(len(updated)) || st.ReadyReplicas != 4 {
				t.Errorf("status = %+v", st)
			}
		})
	}
}

func TestOnDeleteRecreatesAtUpdateRevision(t *testing.T) {
	set := newSet("web", 2)
	set.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	f := newRunningSet(t, set)
	set = f.update(set, func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "busybox:2" })
	f.mustSync(set)
	if err := f.client.CoreV1().Pods("default").Delete(context.Background(), "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.mustSync(set)
	st := f.get(set).Status
	if got := f.podRevisions(); !equal(got, "web-0@"+st.CurrentRevision, "web-1@"+st.UpdateRevision) {
		t.Errorf("pods %v; current %s update %s", got, st.CurrentRevision, st.UpdateRevision)
	}
}

func TestMinReadySeconds(t *testing.T) {
	set := newSet("web", 2)
	set.Spec.MinReadySeconds = 30
	f := newFixture(t, set)
	f.mustSync(set)
	f.kubelet()
	f.mustSync(set)
	if got := f.podNames(); got != "web-0" {
		t.Errorf("web-0 ready but not available: pods %s", got)
	}
	if s := f.get(set).Status; s.ReadyReplicas != 1 || s.AvailableReplicas != 0 {
		t.Errorf("status = %+v, want ready 1 available 0", s)
	}
	f.clock.Step(31 * time.Second)
	f.mustSync(set)
	if got := f.podNames(); got != "web-0,web-1" {
		t.Errorf("web-0 available: pods %s", got)
	}
	if s := f.get(set).Status; s.AvailableReplicas != 1 {
		t.Errorf("status = %+v, want available 1", s)
	}
}

func TestFinishedPodIsReplaced(t *testing.T) {
	for _, phase := range []corev1.PodPhase{corev1.PodFailed, corev1.PodSucceeded} {
		t.Run(string(phase), func(t *testing.T) {
			set := newSet("web", 2)
			f := newRunningSet(t, set)
			f.setPod("web-1", func(p *corev1.Pod) { p.Status.Phase = phase })
			f.mustSync(set)
			if !equal(f.actions(), "delete pods web-1", "update statefulsets/status web") {
				t.Errorf("actions %v", f.actions())
			}
			f.mustSync(set)
			if p := f.pods(); len(p) != 2 || p[1].Status.Phase != corev1.PodPending {
				t.Errorf("web-1 not recreated: %v", f.podRevisions())
			}
		})
	}
}

func claimOwners(t *testing.T, f *fixture, name string) string {
	t.Helper()
	c, err := f.client.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range c.OwnerReferences {
		out = append(out, r.Kind+"/"+r.Name)
	}
	return strings.Join(out, ",")
}

func TestClaimRetentionPolicy(t *testing.T) {
	tests := []struct {
		name                   string
		whenDeleted, whenScale appsv1.PersistentVolumeClaimRetentionPolicyType
		// owners of data-web-0 (kept) and data-web-1 (its pod scaled away)
		// just before web-1 is deleted.
		wantKept, wantScaled string
	}{
		{"Retain/Retain", retain, retain, "", ""},
		{"whenDeleted Delete", del, retain, "StatefulSet/web", "StatefulSet/web"},
		{"whenScaled Delete", retain, del, "", "Pod/web-1"},
		{"Delete/Delete", del, del, "StatefulSet/web", "Pod/web-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := withClaims(newSet("web", 2), "data")
			set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: tt.whenDeleted, WhenScaled: tt.whenScale}
			f := newRunningSet(t, set)
			set = f.update(set, func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr(int32(1)) })
			// Fail the deletion so the claim's owners can be seen.
			f.client.PrependReactor("delete", "pods", func(core.Action) (bool, runtime.Object, error) {
				return true, nil, errors.New("boom")
			})
			_ = f.sync(set)
			if got := claimOwners(t, f, "data-web-0"); got != tt.wantKept {
				t.Errorf("data-web-0 owners %q, want %q", got, tt.wantKept)
			}
			if got := claimOwners(t, f, "data-web-1"); got != tt.wantScaled {
				t.Errorf("data-web-1 owners %q, want %q", got, tt.wantScaled)
			}
			if ev := f.events(); len(ev) == 0 || !strings.HasPrefix(ev[len(ev)-1], "Warning FailedDelete delete Pod web-1 in StatefulSet web failed error: boom") {
				t.Errorf("events = %q", ev)
			}
		})
	}
}

func TestStaleClaimBlocksCreation(t *testing.T) {
	set := withClaims(newSet("web", 1), "data")
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: retain, WhenScaled: del}
	stale := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-web-0", Namespace: "default",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "web-0", UID: "old-pod", Controller: ptr(true)}}}}
	f := newFixture(t, set, stale)
	f.mustSync(set)
	for _, a := range f.actions() {
		if strings.HasPrefix(a, "create pods") {
			t.Fatalf("created a pod on a stale claim: %v", f.actions())
		}
	}
	if err := f.client.CoreV1().PersistentVolumeClaims("default").Delete(context.Background(), "data-web-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.mustSync(set)
	if f.podNames() != "web-0" {
		t.Errorf("after the stale claim went: pods %q", f.podNames())
	}
}

func TestCreateFailureRecordsEventAndRetries(t *testing.T) {
	set := newSet("web", 2)
	f := newFixture(t, set)
	f.client.PrependReactor("create", "pods", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "web-0", errors.New("quota exceeded"))
	})
	err := f.sync(set)
	if err == nil {
		t.Fatal("sync: want the create error")
	}
	ev := f.events()
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning FailedCreate create Pod web-0 in StatefulSet web failed error: ") {
		t.Errorf("events = %q", ev)
	}
	// The status still says what the controller saw.
	if s := f.get(set).Status; s.ObservedGeneration != 1 || s.UpdateRevision == "" {
		t.Errorf("status = %+v", s)
	}
}

func TestInvalidSelectorRecordsEvent(t *testing.T) {
	set := newSet("web", 1)
	set.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	f := newFixture(t, set)
	if err := f.sync(set); err != nil {
		t.Fatalf("sync = %v, want nil (not retried)", err)
	}
	if ev := f.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning InvalidSelector") {
		t.Errorf("events = %q", ev)
	}
	if a := f.actions(); len(a) != 0 {
		t.Errorf("actions %v", a)
	}
}

func TestAdoptsOrphans(t *testing.T) {
	set := newSet("web", 1)
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", UID: "orphan-uid",
		Labels: map[string]string{"app": "web"}}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cache-0", Namespace: "default", UID: "other-uid",
		Labels: map[string]string{"app": "web"}}}
	rev := history.NewControllerRevision(set, controllerKind, nil, runtime.RawExtension{Raw: []byte(`{}`)}, 1, nil)
	rev.OwnerReferences = nil
	rev.Labels = map[string]string{"app": "web"}
	f := newFixture(t, set, orphan, other, rev)
	f.mustSync(set)
	var patched []string
	for _, a := range f.actions() {
		if strings.HasPrefix(a, "patch ") {
			patched = append(patched, a)
		}
	}
	sort.Strings(patched)
	if !equal(patched, "patch controllerrevisions "+rev.Name, "patch pods web-0") {
		t.Errorf("patches %v, want the revision and web-0 adopted (not cache-0)", patched)
	}
}

func TestRepairsIdentityAndStorage(t *testing.T) {
	set := withClaims(newSet("web", 1), "data")
	f := newRunningSet(t, set)
	f.setPod("web-0", func(p *corev1.Pod) {
		delete(p.Labels, appsv1.StatefulSetPodNameLabel)
	})
	f.mustSync(set)
	if !equal(f.actions(), "update pods web-0") {
		t.Errorf("actions %v", f.actions())
	}
	if p := f.pods()[0]; p.Labels[appsv1.StatefulSetPodNameLabel] != "web-0" {
		t.Errorf("labels %v", p.Labels)
	}
	if ev := f.events(); !equal(ev, "Normal SuccessfulUpdate update Pod web-0 in StatefulSet web successful") {
		t.Errorf("events %q", ev)
	}
}

func TestRevisionHistoryLimit(t *testing.T) {
	set := newSet("web", 1)
	set.Spec.RevisionHistoryLimit = ptr(int32(1))
	f := newRunningSet(t, set)
	for _, image := range []string{"busybox:2", "busybox:3", "busybox:4"} {
		set = f.update(set, func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = image })
		set = f.rollOut(set, 6)
	}
	// The live revision and one more.
	revs := f.revisions()
	if len(revs) != 2 || revs[1].Name != set.Status.CurrentRevision {
		var got []string
		for _, r := range revs {
			got = append(got, fmt.Sprintf("%s=%d", r.Name, r.Revision))
		}
		t.Errorf("revisions %v, current %s", got, set.Status.CurrentRevision)
	}
}

func TestCollisionCount(t *testing.T) {
	set := newSet("web", 1)
	want, err := newRevision(set, 1, ptr(int32(0)))
	if err != nil {
		t.Fatal(err)
	}
	// Another set's revision holds the name this one would take.
	squatter := want.DeepCopy()
	squatter.Data.Raw = []byte(`{"other":true}`)
	squatter.Labels = map[string]string{"app": "other"}
	squatter.OwnerReferences = nil
	f := newFixture(t, set, squatter)
	f.mustSync(set)
	st := f.get(set).Status
	if st.CollisionCount == nil || *st.CollisionCount != 1 || st.UpdateRevision == want.Name {
		t.Errorf("status = %+v, want collisionCount 1 and another name than %s", st, want.Name)
	}
}

func TestDeletedSetOnlyUpdatesStatus(t *testing.T) {
	set := newSet("web", 2)
	f := newRunningSet(t, set)
	set = f.update(set, func(s *appsv1.StatefulSet) {
		s.DeletionTimestamp = ptr(metav1.NewTime(now))
		s.Spec.Replicas = ptr(int32(0))
	})
	f.mustSync(set)
	for _, a := range f.actions() {
		if strings.Contains(a, " pods ") {
			t.Errorf("acted on pods of a set being deleted: %v", f.actions())
		}
	}
}

func TestHelpers(t *testing.T) {
	tests := []struct {
		name       string
		pod        string
		wantParent string
		wantOrd    int
	}{
		{"plain", "web-0", "web", 0},
		{"dashes", "my-web-12", "my-web", 12},
		{"no ordinal", "web", "", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, ord := getParentNameAndOrdinal(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tt.pod}})
			if parent != tt.wantParent || ord != tt.wantOrd {
				t.Errorf("got %q %d", parent, ord)
			}
		})
	}
	set := newSet("web", 3)
	patch, err := getPatch(set)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(patch), `{"spec":{"template":{"$patch":"replace",`) {
		t.Errorf("patch = %s", patch)
	}
	changed := set.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "other"
	restored, err := applyRevision(changed, &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: patch}})
	if err != nil {
		t.Fatal(err)
	}
	if restored.Spec.Template.Spec.Containers[0].Image != "busybox:1" || *restored.Spec.Replicas != 3 {
		t.Errorf("restored template %+v", restored.Spec.Template.Spec)
	}
}
