package resourcequota

import (
	"context"
	"errors"
	"skiff.dev/component-base/quota"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

func newQuota(name string, hard corev1.ResourceList, used corev1.ResourceList, mods ...func(*corev1.ResourceQuota)) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1"},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
	}
	if used != nil {
		q.Status = corev1.ResourceQuotaStatus{Hard: hard.DeepCopy(), Used: used}
	}
	for _, m := range mods {
		m(q)
	}
	return q
}

type harness struct {
	c      *Controller
	client *fake.Clientset
	clock  *clocktesting.FakeClock
}

// newHarness builds a controller on a fake clientset whose informer caches
// hold objs.
func newHarness(t *testing.T, opts Options, objs ...runtime.Object) *harness {
	t.Helper()
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	clk := clocktesting.NewFakeClock(t0)
	opts.Clock = clk
	c, err := NewController(client, f, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	core := f.Core().V1()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.Pod:
			err = core.Pods().Informer().GetIndexer().Add(o)
		case *corev1.Service:
			err = core.Services().Informer().GetIndexer().Add(o)
		case *corev1.ConfigMap:
			err = core.ConfigMaps().Informer().GetIndexer().Add(o)
		case *corev1.PersistentVolumeClaim:
			err = core.PersistentVolumeClaims().Informer().GetIndexer().Add(o)
		case *corev1.ResourceQuota:
			err = core.ResourceQuotas().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The caches were filled by hand: call them synced.
	for _, s := range c.typed {
		s.synced = func() bool { return true }
	}
	return &harness{c: c, client: client, clock: clk}
}

// statusWrites returns the statuses the controller wrote.
func (h *harness) statusWrites() []corev1.ResourceQuotaStatus {
	var out []corev1.ResourceQuotaStatus
	for _, a := range h.client.Actions() {
		u, ok := a.(clienttesting.UpdateActionImpl)
		if !ok || u.Subresource != "status" {
			continue
		}
		out = append(out, u.Object.(*corev1.ResourceQuota).Status)
	}
	return out
}

func inNS(objs ...runtime.Object) []runtime.Object {
	for _, o := range objs {
		if m, ok := o.(metav1.Object); ok {
			m.SetNamespace("ns")
		}
	}
	return objs
}

func TestSync(t *testing.T) {
	cpuPod := func(name, cpu string, opts ...podOpt) *corev1.Pod {
		return newPod(name, append([]podOpt{withContainers(container(list("cpu", cpu, "memory", "10Mi"), list("cpu", cpu)))}, opts...)...)
	}
	tests := []struct {
		name      string
		quota     *corev1.ResourceQuota
		objs      []runtime.Object
		wantUsed  corev1.ResourceList
		wantWrite bool
	}{
		{
			name:  "first sync fills hard and used",
			quota: newQuota("q", list("pods", "10", "requests.cpu", "4", "limits.cpu", "4", "requests.memory", "1Gi", "count/pods", "20"), nil),
			objs: inNS(cpuPod("a", "100m"), cpuPod("b", "250m"), cpuPod("done", "1", inPhase(corev1.PodSucceeded)),
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}),
			wantUsed:  list("pods", "2", "requests.cpu", "350m", "limits.cpu", "350m", "requests.memory", "20Mi", "count/pods", "3"),
			wantWrite: true,
		},
		{
			name:      "a wrong usage is corrected",
			quota:     newQuota("q", list("pods", "10"), list("pods", "7")),
			objs:      inNS(cpuPod("a", "100m")),
			wantUsed:  list("pods", "1"),
			wantWrite: true,
		},
		{
			name:      "nothing changed: no write",
			quota:     newQuota("q", list("pods", "10", "configmaps", "5"), list("pods", "1", "configmaps", "1")),
			objs:      inNS(cpuPod("a", "100m"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}),
			wantUsed:  list("pods", "1", "configmaps", "1"),
			wantWrite: false,
		},
		{
			name:      "a changed spec.hard is written to status.hard",
			quota:     newQuota("q", list("pods", "10"), list("pods", "1"), func(q *corev1.ResourceQuota) { q.Status.Hard = list("pods", "5") }),
			objs:      inNS(cpuPod("a", "100m")),
			wantUsed:  list("pods", "1"),
			wantWrite: true,
		},
		{
			name:      "no objects: zero",
			quota:     newQuota("q", list("pods", "10", "services", "2", "services.nodeports", "4"), nil),
			wantUsed:  list("pods", "0", "services", "0", "services.nodeports", "0"),
			wantWrite: true,
		},
		{
			name: "BestEffort scope counts only best-effort pods",
			quota: newQuota("q", list("pods", "10"), nil, func(q *corev1.ResourceQuota) {
				q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
			}),
			objs: inNS(cpuPod("a", "100m"), newPod("be1", withContainers(container(nil, nil))),
				newPod("be2", withContainers(container(nil, nil)))),
			wantUsed:  list("pods", "2"),
			wantWrite: true,
		},
		{
			name: "PriorityClass selector",
			quota: newQuota("q", list("pods", "10", "requests.cpu", "10"), nil, func(q *corev1.ResourceQuota) {
				q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{pcReq(corev1.ScopeSelectorOpIn, "high")}}
			}),
			objs:      inNS(cpuPod("a", "100m", priority("high")), cpuPod("b", "200m", priority("low")), cpuPod("c", "400m")),
			wantUsed:  list("pods", "1", "requests.cpu", "100m"),
			wantWrite: true,
		},
		{
			name:      "pods of other namespaces do not count",
			quota:     newQuota("q", list("pods", "10"), nil),
			objs:      []runtime.Object{newPod("elsewhere", func(p *corev1.Pod) { p.Namespace = "other" })},
			wantUsed:  list("pods", "0"),
			wantWrite: true,
		},
		{
			name:      "a resource no kind counts keeps its usage",
			quota:     newQuota("q", list("pods", "10", "bogus", "3"), list("pods", "9", "bogus", "2")),
			wantUsed:  list("pods", "0", "bogus", "2"),
			wantWrite: true,
		},
		{
			name:      "kinds known only to discovery are left alone without metadata informers",
			quota:     newQuota("q", list("count/deployments.apps", "3", "secrets", "3"), list("count/deployments.apps", "1")),
			wantUsed:  list("count/deployments.apps", "1"),
			wantWrite: false,
		},
		{
			name:  "services, claims and quotas",
			quota: newQuota("q", list("services", "5", "services.loadbalancers", "2", "requests.storage", "10Gi", "persistentvolumeclaims", "3", "resourcequotas", "2"), nil),
			objs: inNS(
				&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}}},
				&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ip"}},
				&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: list("storage", "1Gi")}}},
				&corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
			),
			wantUsed:  list("services", "2", "services.loadbalancers", "1", "requests.storage", "1Gi", "persistentvolumeclaims", "1", "resourcequotas", "2"),
			wantWrite: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Options{}, append([]runtime.Object{tt.quota}, tt.objs...)...)
			if err := h.c.sync(context.Background(), "ns/q"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			writes := h.statusWrites()
			if !tt.wantWrite {
				if len(writes) != 0 {
					t.Fatalf("wrote %v, want no write", writes)
				}
				return
			}
			if len(writes) != 1 {
				t.Fatalf("%d status writes, want 1", len(writes))
			}
			if !quota.Equal(writes[0].Used, tt.wantUsed) {
				t.Errorf("used = %v, want %v", writes[0].Used, tt.wantUsed)
			}
			if !quota.Equal(writes[0].Hard, tt.quota.Spec.Hard) {
				t.Errorf("hard = %v, want spec.hard %v", writes[0].Hard, tt.quota.Spec.Hard)
			}
		})
	}
}

func TestSyncDeletedQuota(t *testing.T) {
	h := newHarness(t, Options{})
	if err := h.c.sync(context.Background(), "ns/gone"); err != nil {
		t.Fatalf("sync of a deleted quota: %v", err)
	}
	if w := h.statusWrites(); len(w) != 0 {
		t.Fatalf("wrote %v for a deleted quota", w)
	}
}

// A pod stuck terminating stops counting once its grace period has run
// out; the sync asks to be run again at that moment.
func TestSyncTerminatingPodRecheck(t *testing.T) {
	pod := newPod("stuck", withContainers(container(list("cpu", "1"), nil)), deletedAt(t0.Add(10*time.Second), 30))
	h := newHarness(t, Options{}, newQuota("q", list("requests.cpu", "4"), nil), pod)
	if err := h.c.sync(context.Background(), "ns/q"); err != nil {
		t.Fatal(err)
	}
	if got := h.statusWrites()[0].Used[corev1.ResourceRequestsCPU]; got.String() != "1" {
		t.Fatalf("requests.cpu = %s while the pod is within its grace period, want 1", got.String())
	}
	if n := h.c.queue.Len(); n != 0 {
		t.Fatalf("queue holds %d keys before the recheck time", n)
	}
	// The recheck is queued with AddAfter; the fake clock does not drive the
	// real queue, so check the computation directly.
	_, recheck, err := h.c.calculateUsage(h.mustQuota(t), t0)
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(40 * time.Second); !recheck.Equal(want) {
		t.Fatalf("recheck at %v, want %v", recheck, want)
	}
	used, _, err := h.c.calculateUsage(h.mustQuota(t), t0.Add(41*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := used[corev1.ResourceRequestsCPU]; got.Sign() != 0 {
		t.Fatalf("requests.cpu = %s after the grace period, want 0", got.String())
	}
}

func (h *harness) mustQuota(t *testing.T) *corev1.ResourceQuota {
	t.Helper()
	q, err := h.c.quotaLister.ResourceQuotas("ns").Get("q")
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// Kinds without a typed informer are counted through a metadata informer
// started on demand, once discovery says the server serves them.
func TestSyncCountsKindsFromDiscovery(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	deploy := func(name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		}
	}
	md := metadatafake.NewSimpleMetadataClient(scheme, deploy("a"), deploy("b"))
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	disc.Resources = []*metav1.APIResourceList{{
		GroupVersion: "apps/v1",
		APIResources: []metav1.APIResource{{Name: "deployments", Namespaced: true, Kind: "Deployment", Verbs: []string{"get", "list", "watch"}}},
	}}
	h := newHarness(t, Options{Metadata: md, Discovery: disc},
		newQuota("q", list("count/deployments.apps", "5", "count/widgets.example.com", "5"), list("count/widgets.example.com", "1")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.c.others.start(ctx.Done())
	defer h.c.others.factory.Shutdown()
	defer cancel()

	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		err := h.c.sync(ctx, "ns/q")
		if errors.Is(err, errNotSynced) {
			return false, nil
		}
		return true, err
	})
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	writes := h.statusWrites()
	if len(writes) == 0 {
		t.Fatal("no status write")
	}
	want := list("count/deployments.apps", "2", "count/widgets.example.com", "1")
	if got := writes[len(writes)-1].Used; !quota.Equal(got, want) {
		t.Fatalf("used = %v, want %v (the unserved kind keeps its usage)", got, want)
	}
	if _, ok := h.c.others.sources[schema.GroupResource{Group: "apps", Resource: "deployments"}]; !ok {
		t.Fatal("no metadata informer for deployments.apps")
	}
}

func drain(c *Controller) map[string]bool {
	got := map[string]bool{}
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		got[k] = true
		c.queue.Done(k)
	}
	return got
}

// Object events queue the quotas of the object's namespace that count its
// kind, and only those; quota status changes queue nothing.
func TestEventsQueueTrackingQuotas(t *testing.T) {
	podsQ := newQuota("pods-q", list("requests.cpu", "1"), nil)
	cmQ := newQuota("cm-q", list("configmaps", "1"), nil)
	elsewhere := newQuota("elsewhere", list("pods", "1"), nil, func(q *corev1.ResourceQuota) { q.Namespace = "other" })
	h := newHarness(t, Options{}, podsQ, cmQ, elsewhere)

	h.c.objectChanged(quota.PodsGR, newPod("p"))
	if got := drain(h.c); len(got) != 1 || !got["ns/pods-q"] {
		t.Errorf("a pod event queued %v, want ns/pods-q", got)
	}
	h.c.objectChanged(schema.GroupResource{Resource: "configmaps"}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}})
	if got := drain(h.c); len(got) != 1 || !got["ns/cm-q"] {
		t.Errorf("a ConfigMap event queued %v, want ns/cm-q", got)
	}

	running := newPod("p", withContainers(container(list("cpu", "1"), nil)))
	failed := running.DeepCopy()
	failed.Status.Phase = corev1.PodFailed
	handler := h.c.objectHandler(quota.PodsGR)
	handler.OnUpdate(running, running.DeepCopy())
	if got := drain(h.c); len(got) != 0 {
		t.Errorf("an update that changes no usage queued %v", got)
	}
	handler.OnUpdate(running, failed)
	if got := drain(h.c); !got["ns/pods-q"] {
		t.Errorf("a pod turning Failed queued %v, want ns/pods-q", got)
	}

	statusOnly := podsQ.DeepCopy()
	statusOnly.Status.Used = list("requests.cpu", "3")
	h.c.updateQuota(podsQ, statusOnly)
	if got := drain(h.c); len(got) != 0 {
		t.Errorf("a status-only quota update queued %v", got)
	}
	// A decrease (the API server giving back a deleted object's usage,
	// perhaps after this controller counted the deletion) is checked.
	released := statusOnly.DeepCopy()
	released.Status.Used = list("requests.cpu", "2")
	h.c.updateQuota(statusOnly, released)
	if got := drain(h.c); !got["ns/pods-q"] {
		t.Errorf("a decrease of status.used queued %v, want ns/pods-q", got)
	}
	specChange := podsQ.DeepCopy()
	specChange.Spec.Hard = list("requests.cpu", "2")
	h.c.updateQuota(podsQ, specChange)
	if got := drain(h.c); !got["ns/pods-q"] {
		t.Errorf("a spec change queued %v, want ns/pods-q", got)
	}
}

// A client's write of status.hard, as upstream's conformance test "should
// apply changes to a resourcequota status" makes, stays until the quota is
// synced for another reason, as upstream's controller leaves it: an update
// of a quota's status alone queues nothing (upstream reacts to spec.hard
// changes only). The next sync (the periodic full resync here) writes
// spec.hard back, as upstream's statusLimitsDirty does, and so does a
// change of spec.hard. The controller runs: informers on a fake clientset,
// one worker.
func TestStatusHardWriteLeftUntilNextSync(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	client := fake.NewClientset(newQuota("q", list("cpu", "1", "memory", "1Gi"), nil),
		newQuota("marker", list("configmaps", "1"), nil))
	f := informers.NewSharedInformerFactory(client, 0)
	c, err := NewController(client, f, nil, Options{SyncPeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(ctx, 1)
	}()
	defer func() {
		cancel()
		<-done
		f.Shutdown()
	}()
	rqs := client.CoreV1().ResourceQuotas("ns")
	// cached waits until the controller's cache holds name with status.hard
	// equal to want: what the API holds has reached the controller.
	cached := func(what, name string, want corev1.ResourceList) {
		t.Helper()
		var last corev1.ResourceList
		err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			q, err := c.quotaLister.ResourceQuotas("ns").Get(name)
			if err != nil {
				return false, nil
			}
			last = q.Status.Hard
			return quota.Equal(last, want), nil
		})
		if err != nil {
			t.Fatalf("%s: status.hard of %s = %v, want %v", what, name, last, want)
		}
	}
	patch := func(name, body string, sub ...string) {
		t.Helper()
		if _, err := rqs.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}, sub...); err != nil {
			t.Fatal(err)
		}
	}
	cached("the first sync", "q", list("cpu", "1", "memory", "1Gi"))
	cached("the first sync", "marker", list("configmaps", "1"))

	patch("q", `{"status":{"hard":{"cpu":"2","memory":"2Gi"}}}`, "status")
	// A barrier: the controller's handler sees quota events in order and
	// its one worker takes keys in order, so once marker's spec change is
	// in marker's status, q was synced too if the status write queued it.
	patch("marker", `{"spec":{"hard":{"configmaps":"2"}}}`)
	cached("marker's spec change", "marker", list("configmaps", "2"))
	q, err := rqs.Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := list("cpu", "2", "memory", "2Gi"); !quota.Equal(q.Status.Hard, want) {
		t.Fatalf("status.hard = %v right after the client wrote %v: the controller wrote it over", q.Status.Hard, want)
	}

	c.resyncAll() // what the periodic resync runs
	cached("the full resync", "q", list("cpu", "1", "memory", "1Gi"))

	patch("q", `{"status":{"hard":{"cpu":"2","memory":"2Gi"}}}`, "status")
	patch("q", `{"spec":{"hard":{"cpu":"3"}}}`)
	cached("a spec change", "q", list("cpu", "3", "memory", "1Gi"))
}
