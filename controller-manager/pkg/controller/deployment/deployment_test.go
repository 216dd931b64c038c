package deployment

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

var now = time.Unix(1_700_000_000, 0)

const goldenHash = "6656b5f7bd"

type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	c        *Controller
	clock    *clocktesting.FakeClock
	dIdx     cache.Indexer
	rsIdx    cache.Indexer
	podIdx   cache.Indexer
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, client: fake.NewSimpleClientset(objs...), recorder: record.NewFakeRecorder(1000), clock: clocktesting.NewFakeClock(now)}
	factory := informers.NewSharedInformerFactory(f.client, 0)
	dInf, rsInf, podInf := factory.Apps().V1().Deployments(), factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods()
	f.c = NewController(f.client, dInf, rsInf, podInf, f.recorder, nil, Options{Clock: f.clock})
	f.dIdx, f.rsIdx, f.podIdx = dInf.Informer().GetIndexer(), rsInf.Informer().GetIndexer(), podInf.Informer().GetIndexer()
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			_ = f.dIdx.Add(o)
		case *appsv1.ReplicaSet:
			_ = f.rsIdx.Add(o)
		case *corev1.Pod:
			_ = f.podIdx.Add(o)
		}
	}
	return f
}

func (f *fixture) sync(d *appsv1.Deployment) {
	f.t.Helper()
	f.client.ClearActions()
	if err := f.c.sync(context.Background(), d.Namespace+"/"+d.Name); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
}

// writes returns the create/update/patch/delete actions as
// "verb resource[/sub] name".
func (f *fixture) writes() []string {
	var out []string
	for _, a := range f.client.Actions() {
		var name string
		switch a := a.(type) {
		case core.CreateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case core.UpdateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case core.PatchAction:
			name = a.GetName()
		case core.DeleteAction:
			name = a.GetName()
		default:
			continue
		}
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s+" "+name)
	}
	return out
}

// rsUpdates returns the ReplicaSets written by plain updates, by name.
func (f *fixture) rsUpdates() map[string]*appsv1.ReplicaSet {
	out := map[string]*appsv1.ReplicaSet{}
	for _, a := range f.client.Actions() {
		if u, ok := a.(core.UpdateAction); ok && a.GetVerb() == "update" && a.GetResource().Resource == "replicasets" && a.GetSubresource() == "" {
			rs := u.GetObject().(*appsv1.ReplicaSet)
			out[rs.Name] = rs
		}
	}
	return out
}

func (f *fixture) lastDeploymentStatus() *appsv1.Deployment {
	var d *appsv1.Deployment
	for _, a := range f.client.Actions() {
		if u, ok := a.(core.UpdateAction); ok && a.GetVerb() == "update" && a.GetResource().Resource == "deployments" && a.GetSubresource() == "status" {
			d = u.GetObject().(*appsv1.Deployment)
		}
	}
	return d
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

func newDeployment(name string, replicas int32, image string) *appsv1.Deployment {
	surge, unavailable := intstr.FromInt32(1), intstr.FromInt32(1)
	history, deadline := int32(10), int32(600)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}},
			},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}},
			RevisionHistoryLimit:    &history,
			ProgressDeadlineSeconds: &deadline,
		},
	}
}

// newRSFor is a ReplicaSet of d with image, replicas (all available when
// available) and revision, created age ago.
func newRSFor(d *appsv1.Deployment, image string, replicas, available int32, revision int, age time.Duration) *appsv1.ReplicaSet {
	tmpl := *d.Spec.Template.DeepCopy()
	tmpl.Spec.Containers[0].Image = image
	hash := ComputeHash(&tmpl, nil)
	tmpl.Labels = cloneAndAddLabel(tmpl.Labels, DefaultDeploymentUniqueLabelKey, hash)
	name := d.Name + "-" + hash
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: d.Namespace, UID: types.UID(name + "-uid"), Labels: tmpl.Labels,
			CreationTimestamp: metav1.NewTime(now.Add(-age)), Generation: 1,
			OwnerReferences: []metav1.OwnerReference{*controllerutil.NewControllerRef(d, "apps/v1", "Deployment")},
			Annotations: map[string]string{
				RevisionAnnotation:        fmt.Sprint(revision),
				DesiredReplicasAnnotation: fmt.Sprint(*d.Spec.Replicas),
				MaxReplicasAnnotation:     fmt.Sprint(*d.Spec.Replicas + MaxSurge(d)),
			},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas, Template: tmpl,
			Selector: cloneSelectorAndAddLabel(d.Spec.Selector, DefaultDeploymentUniqueLabelKey, hash),
		},
		Status: appsv1.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: available, AvailableReplicas: available, ObservedGeneration: 1},
	}
}

func TestComputeHashStable(t *testing.T) {
	d := newDeployment("web", 1, "nginx:1.25")
	h1 := ComputeHash(&d.Spec.Template, nil)
	if h2 := ComputeHash(d.Spec.Template.DeepCopy(), nil); h1 != h2 {
		t.Fatalf("hash of a copy differs: %s vs %s", h1, h2)
	}
	// Golden value: a change of this number means ReplicaSet names would
	// change across an upgrade, and that they no longer match upstream's.
	if h1 != goldenHash {
		t.Errorf("hash = %s, want %s", h1, goldenHash)
	}
	other := d.Spec.Template.DeepCopy()
	other.Spec.Containers[0].Image = "nginx:1.26"
	if ComputeHash(other, nil) == h1 {
		t.Error("different templates hash the same")
	}
	one := int32(1)
	if ComputeHash(&d.Spec.Template, &one) == h1 {
		t.Error("collisionCount does not change the hash")
	}
	for _, r := range h1 {
		if strings.ContainsRune("aeiou013", r) {
			t.Errorf("hash %q has characters SafeEncodeString never produces", h1)
		}
	}
}

func TestResolveFenceposts(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int32) *intstr.IntOrString { v := intstr.FromInt32(n); return &v }
	tests := []struct {
		name                string
		surge, unavail      *intstr.IntOrString
		desired             int32
		wantSurge, wantUnav int32
	}{
		{"defaults 25% of 10: surge rounds up, unavailable down", pct("25%"), pct("25%"), 10, 3, 2},
		{"25% of 1", pct("25%"), pct("25%"), 1, 1, 0},
		{"both round to zero: unavailable 1", pct("0%"), pct("10%"), 5, 0, 1},
		{"ints", num(1), num(1), 4, 1, 1},
		{"nil values", nil, nil, 4, 0, 1},
		{"50% of 3", pct("50%"), pct("50%"), 3, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, u, err := ResolveFenceposts(tt.surge, tt.unavail, tt.desired)
			if err != nil || s != tt.wantSurge || u != tt.wantUnav {
				t.Errorf("got %d, %d, %v; want %d, %d", s, u, err, tt.wantSurge, tt.wantUnav)
			}
		})
	}
	d := newDeployment("web", 2, "a")
	v := intstr.FromInt32(5)
	d.Spec.Strategy.RollingUpdate.MaxUnavailable = &v
	if got := MaxUnavailable(d); got != 2 {
		t.Errorf("MaxUnavailable capped at replicas: got %d, want 2", got)
	}
}

func TestNewRSNewReplicas(t *testing.T) {
	tests := []struct {
		name        string
		replicas    int32
		oldReplicas int32
		newReplicas int32
		recreate    bool
		want        int32
	}{
		{"fresh deployment scales straight to replicas", 5, 0, 0, false, 5},
		{"surge of 1 over 4 old", 4, 4, 0, false, 1},
		{"no room left", 4, 3, 2, false, 2},
		{"room for 2 more", 4, 1, 2, false, 4},
		{"recreate", 4, 4, 0, true, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDeployment("web", tt.replicas, "b")
			if tt.recreate {
				d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
			}
			oldRS := newRSFor(d, "a", tt.oldReplicas, tt.oldReplicas, 1, time.Hour)
			newRS := newRSFor(d, "b", tt.newReplicas, 0, 2, time.Minute)
			got, err := NewRSNewReplicas(d, []*appsv1.ReplicaSet{oldRS, newRS}, newRS)
			if err != nil || got != tt.want {
				t.Errorf("got %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func TestNewDeploymentCreatesReplicaSet(t *testing.T) {
	d := newDeployment("web", 3, "nginx")
	f := newFixture(t, d)
	f.sync(d)
	var created *appsv1.ReplicaSet
	for _, a := range f.client.Actions() {
		if c, ok := a.(core.CreateAction); ok && a.GetVerb() == "create" && a.GetResource().Resource == "replicasets" {
			created = c.GetObject().(*appsv1.ReplicaSet)
		}
	}
	if created == nil {
		t.Fatalf("no ReplicaSet created: %v", f.writes())
	}
	hash := ComputeHash(&d.Spec.Template, nil)
	if created.Name != "web-"+hash || created.Labels[DefaultDeploymentUniqueLabelKey] != hash ||
		created.Spec.Selector.MatchLabels[DefaultDeploymentUniqueLabelKey] != hash ||
		created.Spec.Template.Labels[DefaultDeploymentUniqueLabelKey] != hash || created.Spec.Template.Labels["app"] != "web" {
		t.Errorf("created = %+v", created.ObjectMeta)
	}
	if *created.Spec.Replicas != 3 || created.Annotations[RevisionAnnotation] != "1" ||
		created.Annotations[DesiredReplicasAnnotation] != "3" || created.Annotations[MaxReplicasAnnotation] != "4" {
		t.Errorf("replicas %d annotations %v", *created.Spec.Replicas, created.Annotations)
	}
	if ref := metav1.GetControllerOf(created); ref == nil || ref.UID != d.UID || ref.Kind != "Deployment" {
		t.Errorf("owner = %+v", ref)
	}
	st := f.lastDeploymentStatus()
	if st == nil || st.Annotations[RevisionAnnotation] != "1" {
		t.Fatalf("deployment revision not written: %v", f.writes())
	}
	if c := GetDeploymentCondition(st.Status, appsv1.DeploymentProgressing); c == nil || c.Reason != NewReplicaSetReason {
		t.Errorf("progressing = %+v", c)
	}
	evs := f.events()
	if len(evs) != 1 || evs[0] != "Normal ScalingReplicaSet Scaled up replica set web-"+hash+" from 0 to 3" {
		t.Errorf("events = %v", evs)
	}
}

func TestRollingUpdateSteps(t *testing.T) {
	d := newDeployment("web", 4, "b")
	d.Annotations = map[string]string{RevisionAnnotation: "1"}
	oldRS := newRSFor(d, "a", 4, 4, 1, time.Hour)
	f := newFixture(t, d, oldRS)
	f.sync(d)
	// Step 1: the new ReplicaSet is created with the surge only, and, as
	// upstream does in the same sync, one old replica goes (4 of 5 pods
	// stay available, 3 needed).
	var newRS *appsv1.ReplicaSet
	for _, a := range f.client.Actions() {
		if c, ok := a.(core.CreateAction); ok && a.GetVerb() == "create" && a.GetResource().Resource == "replicasets" {
			newRS = c.GetObject().(*appsv1.ReplicaSet)
		}
	}
	if newRS == nil || *newRS.Spec.Replicas != 1 || newRS.Annotations[RevisionAnnotation] != "2" {
		t.Fatalf("new ReplicaSet = %+v (writes %v)", newRS, f.writes())
	}
	ups := f.rsUpdates()
	if len(ups) != 1 || ups[oldRS.Name] == nil || *ups[oldRS.Name].Spec.Replicas != 3 {
		t.Fatalf("updates = %v", f.writes())
	}
	want := []string{
		fmt.Sprintf("Normal ScalingReplicaSet Scaled up replica set %s from 0 to 1", newRS.Name),
		fmt.Sprintf("Normal ScalingReplicaSet Scaled down replica set %s from 4 to 3", oldRS.Name),
	}
	if evs := f.events(); strings.Join(evs, "|") != strings.Join(want, "|") {
		t.Errorf("events = %v, want %v", evs, want)
	}

	// Step 2: old at 3 (3 available), new at 1 (0 available): the new one
	// may grow to 2 (total 5), and nothing else may go.
	newRS.CreationTimestamp = metav1.NewTime(now)
	newRS.UID = "new-uid"
	newRS.Status = appsv1.ReplicaSetStatus{Replicas: 1}
	old3 := oldRS.DeepCopy()
	*old3.Spec.Replicas = 3
	old3.Status = appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, ObservedGeneration: 1}
	f = newFixture(t, d, old3, newRS)
	f.sync(d)
	ups = f.rsUpdates()
	if len(ups) != 1 || ups[newRS.Name] == nil || *ups[newRS.Name].Spec.Replicas != 2 {
		t.Fatalf("updates = %v", f.writes())
	}

	// Step 3: new at 2 with 0 available, old at 3: no scale down allowed
	// (availability would drop under 3).
	new2 := newRS.DeepCopy()
	*new2.Spec.Replicas = 2
	new2.Status = appsv1.ReplicaSetStatus{Replicas: 2}
	f = newFixture(t, d, old3, new2)
	f.sync(d)
	if ups := f.rsUpdates(); len(ups) != 0 {
		t.Errorf("scaled with no room: %v", f.writes())
	}

	// Step 4: one new pod available: one old replica may go.
	new2.Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}
	f = newFixture(t, d, old3, new2)
	f.sync(d)
	if ups := f.rsUpdates(); len(ups) != 1 || ups[old3.Name] == nil || *ups[old3.Name].Spec.Replicas != 2 {
		t.Errorf("updates = %v", f.writes())
	}
}

func TestScaleDownIgnoresPodsAboutToGo(t *testing.T) {
	// The old ReplicaSet was just scaled 4 -> 3 and still reports 4
	// available. Counting those would allow scaling it down to 1 once one
	// new pod is available, leaving 2 available pods of 4 (maxUnavailable
	// 1). Bounded by spec.replicas, it may go to 2 only.
	d := newDeployment("web", 4, "b")
	old := newRSFor(d, "a", 3, 4, 1, time.Hour)
	newRS := newRSFor(d, "b", 2, 1, 2, time.Minute)
	f := newFixture(t, d, old, newRS)
	f.sync(d)
	ups := f.rsUpdates()
	if ups[old.Name] == nil || *ups[old.Name].Spec.Replicas != 2 {
		t.Errorf("writes = %v", f.writes())
	}
}

func TestRolloutCompletesAndCleansUp(t *testing.T) {
	d := newDeployment("web", 2, "d")
	limit := int32(1)
	d.Spec.RevisionHistoryLimit = &limit
	d.Annotations = map[string]string{RevisionAnnotation: "4"}
	rs1 := newRSFor(d, "a", 0, 0, 1, 4*time.Hour)
	rs2 := newRSFor(d, "b", 0, 0, 2, 3*time.Hour)
	rs3 := newRSFor(d, "c", 0, 0, 3, 2*time.Hour)
	rs4 := newRSFor(d, "d", 2, 2, 4, time.Hour)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
	f := newFixture(t, d, rs1, rs2, rs3, rs4)
	f.sync(d)
	var deleted []string
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "delete" {
			deleted = append(deleted, a.(core.DeleteAction).GetName())
		}
	}
	if len(deleted) != 2 || deleted[0] != rs1.Name || deleted[1] != rs2.Name {
		t.Errorf("deleted %v, want the two oldest revisions", deleted)
	}
	st := f.lastDeploymentStatus()
	if st == nil {
		t.Fatalf("no status written: %v", f.writes())
	}
	if c := GetDeploymentCondition(st.Status, appsv1.DeploymentProgressing); c == nil || c.Reason != NewRSAvailableReason || c.Status != corev1.ConditionTrue {
		t.Errorf("progressing = %+v", c)
	}
	if c := GetDeploymentCondition(st.Status, appsv1.DeploymentAvailable); c == nil || c.Reason != MinimumReplicasAvailable || c.Status != corev1.ConditionTrue {
		t.Errorf("available = %+v", c)
	}
	// Synced again with that status: nothing to write.
	d2 := d.DeepCopy()
	d2.Status = st.Status
	f = newFixture(t, d2, rs3, rs4)
	f.sync(d2)
	if w := f.writes(); len(w) != 0 {
		t.Errorf("steady state writes %v", w)
	}
}

func TestProportionalScaling(t *testing.T) {
	d := newDeployment("web", 10, "b")
	surge, unav := intstr.FromInt32(3), intstr.FromInt32(2)
	d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unav}
	oldRS := newRSFor(d, "a", 8, 8, 1, time.Hour)
	newRS := newRSFor(d, "b", 5, 0, 2, time.Minute)
	scaled := d.DeepCopy()
	*scaled.Spec.Replicas = 15 // allowed 18: +5 spread as 8*18/13 and 5*18/13
	f := newFixture(t, scaled, oldRS, newRS)
	f.sync(scaled)
	ups := f.rsUpdates()
	if ups[oldRS.Name] == nil || ups[newRS.Name] == nil {
		t.Fatalf("writes = %v", f.writes())
	}
	if o, n := *ups[oldRS.Name].Spec.Replicas, *ups[newRS.Name].Spec.Replicas; o != 11 || n != 7 {
		t.Errorf("old %d new %d, want 11 and 7", o, n)
	}
	for _, rs := range ups {
		if rs.Annotations[DesiredReplicasAnnotation] != "15" || rs.Annotations[MaxReplicasAnnotation] != "18" {
			t.Errorf("%s annotations %v", rs.Name, rs.Annotations)
		}
	}
	// Scale down to 5: allowed 8, -5 spread from the largest.
	down := d.DeepCopy()
	*down.Spec.Replicas = 5
	f = newFixture(t, down, oldRS, newRS)
	f.sync(down)
	ups = f.rsUpdates()
	if o, n := *ups[oldRS.Name].Spec.Replicas, *ups[newRS.Name].Spec.Replicas; o+n != 8 || o != 5 || n != 3 {
		t.Errorf("old %d new %d, want 5 and 3", o, n)
	}
}

func TestProportionalSizesLeftover(t *testing.T) {
	d := newDeployment("web", 7, "b")
	a := newRSFor(d, "a", 3, 3, 1, time.Hour)
	b := newRSFor(d, "b", 3, 3, 2, time.Minute)
	a.Annotations[MaxReplicasAnnotation], b.Annotations[MaxReplicasAnnotation] = "6", "6"
	// allowed = 7+1 = 8; toAdd = 2; each fraction round(3*8/6)-3 = 1.
	sizes := proportionalSizes(d, []*appsv1.ReplicaSet{a, b}, 2)
	if sizes[0]+sizes[1] != 8 {
		t.Errorf("sizes %v do not add up to 8", sizes)
	}
}

func TestPausedDeployment(t *testing.T) {
	d := newDeployment("web", 3, "b")
	d.Spec.Paused = true
	d.Annotations = map[string]string{RevisionAnnotation: "1"}
	oldRS := newRSFor(d, "a", 3, 3, 1, time.Hour)
	f := newFixture(t, d, oldRS)
	f.sync(d)
	for _, w := range f.writes() {
		if strings.HasPrefix(w, "create replicasets") || strings.HasPrefix(w, "update replicasets ") {
			t.Errorf("paused deployment rolled out: %v", f.writes())
		}
	}
	st := f.lastDeploymentStatus()
	if st == nil {
		t.Fatalf("no status write: %v", f.writes())
	}
	if c := GetDeploymentCondition(st.Status, appsv1.DeploymentProgressing); c == nil || c.Reason != PausedDeployReason || c.Status != corev1.ConditionUnknown {
		t.Errorf("progressing = %+v", c)
	}
	// Scaling still works while paused.
	scaled := st.DeepCopy()
	*scaled.Spec.Replicas = 5
	f = newFixture(t, scaled, oldRS)
	f.sync(scaled)
	if ups := f.rsUpdates(); ups[oldRS.Name] == nil || *ups[oldRS.Name].Spec.Replicas != 5 {
		t.Errorf("paused scale: %v", f.writes())
	}
	// Resume: the condition says so, and the rollout starts.
	resumed := st.DeepCopy()
	resumed.Spec.Paused = false
	f = newFixture(t, resumed, oldRS)
	f.sync(resumed)
	var sawResumed, created bool
	for _, a := range f.client.Actions() {
		if u, ok := a.(core.UpdateAction); ok && a.GetVerb() == "update" && a.GetSubresource() == "status" {
			if c := GetDeploymentCondition(u.GetObject().(*appsv1.Deployment).Status, appsv1.DeploymentProgressing); c != nil && c.Reason == ResumedDeployReason {
				sawResumed = true
			}
		}
		if a.GetVerb() == "create" && a.GetResource().Resource == "replicasets" {
			created = true
		}
	}
	if !sawResumed || !created {
		t.Errorf("resume: condition %v, new ReplicaSet %v (%v)", sawResumed, created, f.writes())
	}
}

func TestRollbackByTemplateReusesOldReplicaSet(t *testing.T) {
	// kubectl rollout undo: the Deployment's template is the one of
	// revision 1 again.
	d := newDeployment("web", 3, "a")
	d.Annotations = map[string]string{RevisionAnnotation: "2"}
	rs1 := newRSFor(d, "a", 0, 0, 1, 2*time.Hour)
	rs2 := newRSFor(d, "b", 3, 3, 2, time.Hour)
	f := newFixture(t, d, rs1, rs2)
	f.sync(d)
	ups := f.rsUpdates()
	got := ups[rs1.Name]
	// The old ReplicaSet is the new one again: revision 3 (history 1), and
	// it gets the surge replica in the same sync.
	if got == nil || got.Annotations[RevisionAnnotation] != "3" || got.Annotations[RevisionHistoryAnnotation] != "1" || *got.Spec.Replicas != 1 {
		t.Fatalf("writes %v, rs1 = %+v", f.writes(), got)
	}
	for _, w := range f.writes() {
		if strings.HasPrefix(w, "create replicasets") {
			t.Errorf("a new ReplicaSet was created: %v", f.writes())
		}
	}
	// Next sync (the cache has the bumped ReplicaSet): the Deployment
	// gets revision 3 and rs2 starts scaling down.
	f = newFixture(t, d, got, rs2)
	f.sync(d)
	var revs []string
	for _, a := range f.client.Actions() {
		if u, ok := a.(core.UpdateAction); ok && a.GetVerb() == "update" && a.GetResource().Resource == "deployments" {
			revs = append(revs, u.GetObject().(*appsv1.Deployment).Annotations[RevisionAnnotation])
		}
	}
	if len(revs) == 0 || revs[0] != "3" {
		t.Errorf("deployment revisions written %v, want 3", revs)
	}
	if u := f.rsUpdates()[rs2.Name]; u == nil || *u.Spec.Replicas != 2 {
		t.Errorf("rs2 not scaled down: %v", f.writes())
	}
}

func TestRollbackAnnotation(t *testing.T) {
	d := newDeployment("web", 3, "b")
	d.Annotations = map[string]string{RevisionAnnotation: "2", RollbackToAnnotation: "1"}
	rs1 := newRSFor(d, "a", 0, 0, 1, 2*time.Hour)
	rs2 := newRSFor(d, "b", 3, 3, 2, time.Hour)
	f := newFixture(t, d, rs1, rs2)
	f.sync(d)
	var updated *appsv1.Deployment
	for _, a := range f.client.Actions() {
		if u, ok := a.(core.UpdateAction); ok && a.GetVerb() == "update" && a.GetResource().Resource == "deployments" && a.GetSubresource() == "" {
			updated = u.GetObject().(*appsv1.Deployment)
		}
	}
	if updated == nil {
		t.Fatalf("deployment not updated: %v", f.writes())
	}
	if updated.Spec.Template.Spec.Containers[0].Image != "a" || updated.Spec.Template.Labels[DefaultDeploymentUniqueLabelKey] != "" {
		t.Errorf("template = %+v", updated.Spec.Template)
	}
	if _, ok := updated.Annotations[RollbackToAnnotation]; ok {
		t.Error("rollback annotation not cleared")
	}
	if evs := f.events(); len(evs) != 1 || evs[0] != `Normal DeploymentRollback Rolled back deployment "web" to revision 1` {
		t.Errorf("events = %v", evs)
	}
	// Unknown revision: a warning, and the request is dropped.
	d.Annotations[RollbackToAnnotation] = "9"
	f = newFixture(t, d, rs1, rs2)
	f.sync(d)
	if evs := f.events(); len(evs) != 1 || !strings.Contains(evs[0], RollbackRevisionNotFound) {
		t.Errorf("events = %v", evs)
	}
}

func TestProgressDeadline(t *testing.T) {
	d := newDeployment("web", 2, "b")
	d.Annotations = map[string]string{RevisionAnnotation: "2"}
	old := newRSFor(d, "a", 1, 1, 1, time.Hour)
	newRS := newRSFor(d, "b", 2, 0, 2, time.Hour)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 2}
	stale := metav1.NewTime(now.Add(-11 * time.Minute))
	d.Status.Conditions = []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: MinimumReplicasAvailable, Message: "Deployment has minimum availability.", LastUpdateTime: stale, LastTransitionTime: stale},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: ReplicaSetUpdatedReason, LastUpdateTime: stale, LastTransitionTime: stale},
	}
	f := newFixture(t, d, old, newRS)
	f.sync(d)
	st := f.lastDeploymentStatus()
	if st == nil {
		t.Fatalf("no status: %v", f.writes())
	}
	c := GetDeploymentCondition(st.Status, appsv1.DeploymentProgressing)
	if c == nil || c.Reason != TimedOutReason || c.Status != corev1.ConditionFalse ||
		c.Message != fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name) {
		t.Errorf("progressing = %+v", c)
	}

	// Within the deadline: no write, and a requeue for the deadline.
	fresh := metav1.NewTime(now.Add(-time.Minute))
	d.Status.Conditions[1].LastUpdateTime = fresh
	f = newFixture(t, d, old, newRS)
	f.sync(d)
	if w := f.writes(); len(w) != 0 {
		t.Errorf("writes %v", w)
	}
	if got := f.c.requeueStuckDeployment(d, d.Status); got != 9*time.Minute {
		t.Errorf("requeue after %v, want 9m", got)
	}
}

func TestAvailableConditionFalse(t *testing.T) {
	d := newDeployment("web", 4, "a")
	d.Annotations = map[string]string{RevisionAnnotation: "1"}
	rs := newRSFor(d, "a", 4, 2, 1, time.Hour)
	f := newFixture(t, d, rs)
	f.sync(d)
	st := f.lastDeploymentStatus()
	if st == nil {
		t.Fatalf("no status: %v", f.writes())
	}
	c := GetDeploymentCondition(st.Status, appsv1.DeploymentAvailable)
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != MinimumReplicasUnavailable {
		t.Errorf("available = %+v", c)
	}
	if st.Status.UnavailableReplicas != 2 || st.Status.AvailableReplicas != 2 || st.Status.Replicas != 4 || st.Status.UpdatedReplicas != 4 {
		t.Errorf("status = %+v", st.Status)
	}
}

func TestRecreate(t *testing.T) {
	d := newDeployment("web", 3, "b")
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	d.Annotations = map[string]string{RevisionAnnotation: "1"}
	old := newRSFor(d, "a", 3, 3, 1, time.Hour)
	f := newFixture(t, d, old)
	f.sync(d)
	if ups := f.rsUpdates(); ups[old.Name] == nil || *ups[old.Name].Spec.Replicas != 0 {
		t.Fatalf("writes %v", f.writes())
	}
	for _, w := range f.writes() {
		if strings.HasPrefix(w, "create") {
			t.Errorf("created before old pods are gone: %v", f.writes())
		}
	}
	// Old at zero but a pod still running: wait.
	old0 := old.DeepCopy()
	*old0.Spec.Replicas = 0
	old0.Status = appsv1.ReplicaSetStatus{ObservedGeneration: 1}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default",
		OwnerReferences: []metav1.OwnerReference{*controllerutil.NewControllerRef(old0, "apps/v1", "ReplicaSet")}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	f = newFixture(t, d, old0, pod)
	f.sync(d)
	for _, w := range f.writes() {
		if strings.HasPrefix(w, "create") {
			t.Errorf("created while an old pod runs: %v", f.writes())
		}
	}
	// Gone: the new ReplicaSet is created at full size.
	f = newFixture(t, d, old0)
	f.sync(d)
	var created *appsv1.ReplicaSet
	for _, a := range f.client.Actions() {
		if c, ok := a.(core.CreateAction); ok && a.GetVerb() == "create" && a.GetResource().Resource == "replicasets" {
			created = c.GetObject().(*appsv1.ReplicaSet)
		}
	}
	if created == nil || *created.Spec.Replicas != 3 {
		t.Errorf("writes %v", f.writes())
	}
}

func TestAdoptsOrphanReplicaSet(t *testing.T) {
	d := newDeployment("web", 2, "a")
	rs := newRSFor(d, "a", 2, 2, 1, time.Hour)
	rs.OwnerReferences = nil
	f := newFixture(t, d, rs)
	f.client.PrependReactor("patch", "replicasets", func(core.Action) (bool, runtime.Object, error) {
		return true, rs, nil
	})
	f.sync(d)
	var patched bool
	for _, a := range f.client.Actions() {
		if p, ok := a.(core.PatchAction); ok && a.GetResource().Resource == "replicasets" && strings.Contains(string(p.GetPatch()), `"controller":true`) {
			patched = true
		}
	}
	if !patched {
		t.Errorf("orphan not adopted: %v", f.writes())
	}
	for _, w := range f.writes() {
		if strings.HasPrefix(w, "create replicasets") {
			t.Errorf("created a ReplicaSet next to an adoptable one: %v", f.writes())
		}
	}
}

func TestScaleEventsWording(t *testing.T) {
	d := newDeployment("web", 5, "a")
	d.Annotations = map[string]string{RevisionAnnotation: "1"}
	rs := newRSFor(newDeployment("web", 3, "a"), "a", 3, 3, 1, time.Hour)
	f := newFixture(t, d, rs)
	f.sync(d)
	if evs := f.events(); len(evs) != 1 || evs[0] != fmt.Sprintf("Normal ScalingReplicaSet Scaled up replica set %s from 3 to 5", rs.Name) {
		t.Errorf("events = %v", evs)
	}
}
