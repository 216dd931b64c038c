package drain

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func pod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func ownedBy(kind, name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, Controller: &yes}}
	}
}

func emptyDir(p *corev1.Pod) {
	p.Spec.Volumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
}

// newClient is a fake clientset whose discovery serves pods/eviction.
func newClient(objs ...runtime.Object) *fake.Clientset {
	c := fake.NewSimpleClientset(objs...)
	c.Resources = []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "pods", Kind: "Pod", Namespaced: true},
		{Name: "pods/eviction", Kind: "Eviction", Group: "policy", Version: "v1", Namespaced: true},
	}}}
	return c
}

func TestFilters(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ds", Namespace: "ns"}}
	objs := []runtime.Object{ds,
		pod("rs", ownedBy("ReplicaSet", "web")),
		pod("ds", ownedBy("DaemonSet", "ds")),
		pod("orphan-ds", ownedBy("DaemonSet", "gone")),
		pod("bare"),
		pod("bare-done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		pod("mirror", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }),
		pod("scratch", ownedBy("ReplicaSet", "web"), emptyDir),
	}
	verdicts := func(h *Helper) (map[string]Verdict, *List, []error) {
		h.Client = newClient(objs...)
		l, errs := h.PodsForDeletion(context.Background(), "n1")
		got := map[string]Verdict{}
		if l == nil {
			return got, l, errs
		}
		for _, i := range l.Items {
			got[i.Pod.Name] = i.Verdict
		}
		return got, l, errs
	}

	got, l, errs := verdicts(&Helper{})
	want := map[string]string{"rs": Okay, "ds": Error, "orphan-ds": Error, "bare": Error, "bare-done": Okay, "mirror": Skip, "scratch": Error}
	for name, kind := range want {
		if got[name].Kind != kind {
			t.Errorf("default flags: %s = %+v, want %s", name, got[name], kind)
		}
	}
	msg := aggregateError(errs).Error()
	for _, s := range []string{
		"cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): ns/ds",
		"cannot delete Pods with local storage (use --delete-emptydir-data to override): ns/scratch",
		"cannot delete cannot delete Pods that declare no controller (use --force to override): ns/bare",
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("errors %q lack %q", msg, s)
		}
	}
	if len(l.Pods()) != 2 {
		t.Errorf("pods to delete = %d, want rs and bare-done", len(l.Pods()))
	}

	got, l, errs = verdicts(&Helper{IgnoreAllDaemonSets: true, Force: true, DeleteEmptyDirData: true})
	if errs != nil {
		t.Fatalf("with every override: %v", errs)
	}
	// As kubectl's: a later filter's verdict replaces an earlier warning
	// that let the pod go, so a managed pod with emptyDir, or an orphan of
	// a DaemonSet, ends Okay with no warning.
	want = map[string]string{"rs": Okay, "ds": Warning, "orphan-ds": Okay, "bare": Warning, "mirror": Skip, "scratch": Okay}
	for name, kind := range want {
		if got[name].Kind != kind {
			t.Errorf("overrides: %s = %+v, want %s", name, got[name], kind)
		}
	}
	if got["ds"].Delete || !got["orphan-ds"].Delete || !got["bare"].Delete {
		t.Errorf("the DaemonSet pod stays, the orphaned one and the bare one go: %+v", got)
	}
	w := l.Warnings()
	for _, s := range []string{"ignoring DaemonSet-managed Pods: ns/ds", "deleting Pods that declare no controller: ns/bare"} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings %q lack %q", w, s)
		}
	}

	if _, _, errs := verdicts(&Helper{PodSelector: "a in ("}); errs == nil {
		t.Error("a bad pod selector was accepted")
	}
}

// An eviction refused with 429 is retried until it is accepted; the pod
// is then waited for and reported.
func TestEvictRetriesTooManyRequests(t *testing.T) {
	p := pod("web", ownedBy("ReplicaSet", "web"))
	c := newClient(p)
	var calls atomic.Int32
	c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		if g := ev.DeleteOptions.GracePeriodSeconds; g == nil || *g != 3 {
			t.Errorf("grace period = %v, want 3", g)
		}
		if calls.Add(1) < 3 {
			return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		}
		return true, nil, c.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "ns", "web")
	})
	var out, errOut bytes.Buffer
	h := &Helper{Client: c, GracePeriodSeconds: 3, Out: &out, ErrOut: &errOut, RetryInterval: 10 * time.Millisecond}
	var evicted []string
	err := h.DeleteOrEvict(context.Background(), []corev1.Pod{*p}, func(p *corev1.Pod, ev bool) {
		if ev {
			evicted = append(evicted, p.Name)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 || len(evicted) != 1 {
		t.Errorf("evictions = %d, evicted = %v; want 3 tries and web evicted", calls.Load(), evicted)
	}
	if n := strings.Count(errOut.String(), "(will retry after 10ms): Cannot evict pod"); n != 2 {
		t.Errorf("retries reported %d times, want 2:\n%s", n, errOut.String())
	}
	if n := strings.Count(out.String(), "evicting pod ns/web\n"); n != 3 {
		t.Errorf("out:\n%s", out.String())
	}
}

// A budget that never allows the eviction ends at --timeout with
// kubectl's message.
func TestEvictTimeout(t *testing.T) {
	p := pod("web", ownedBy("ReplicaSet", "web"))
	c := newClient(p)
	c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	})
	var out bytes.Buffer
	h := &Helper{Client: c, Timeout: 200 * time.Millisecond, Out: &out, ErrOut: &out, RetryInterval: 50 * time.Millisecond}
	err := h.DeleteOrEvict(context.Background(), []corev1.Pod{*p}, nil)
	want := `error when evicting pods/"web" -n "ns": global timeout reached: 200ms`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

// DisableEviction deletes instead; server dry run deletes with dryRun=All
// and does not wait.
func TestDeleteAndDryRun(t *testing.T) {
	p := pod("web", ownedBy("ReplicaSet", "web"))
	c := newClient(p)
	var out bytes.Buffer
	h := &Helper{Client: c, DisableEviction: true, GracePeriodSeconds: 0, Out: &out, ErrOut: &out, DryRun: DryRunServer}
	var dry []string
	c.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		dry = a.(k8stesting.DeleteAction).GetDeleteOptions().DryRun
		return true, nil, nil
	})
	if err := h.DeleteOrEvict(context.Background(), []corev1.Pod{*p}, nil); err != nil {
		t.Fatal(err)
	}
	if len(dry) != 1 || dry[0] != metav1.DryRunAll {
		t.Errorf("dry run = %v", dry)
	}
	for _, a := range c.Actions() {
		if a.GetSubresource() == "eviction" {
			t.Errorf("DisableEviction evicted: %v", a)
		}
	}
}

func TestCordon(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	c := newClient(n)
	ctx := context.Background()
	if changed, err := Cordon(ctx, c, n, true, DryRunClient); err != nil || !changed || len(c.Actions()) != 0 {
		t.Fatalf("client dry run: changed %v err %v actions %v", changed, err, c.Actions())
	}
	if changed, err := Cordon(ctx, c, n, true, DryRunNone); err != nil || !changed {
		t.Fatalf("cordon: %v %v", changed, err)
	}
	cur, _ := c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if !cur.Spec.Unschedulable {
		t.Fatal("not unschedulable after cordon")
	}
	c.ClearActions()
	if changed, err := Cordon(ctx, c, cur, true, DryRunNone); err != nil || changed || len(c.Actions()) != 0 {
		t.Fatalf("cordon twice: changed %v err %v actions %v", changed, err, c.Actions())
	}
	if _, err := Cordon(ctx, c, cur, false, DryRunNone); err != nil {
		t.Fatal(err)
	}
	cur, _ = c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if cur.Spec.Unschedulable {
		t.Fatal("still unschedulable after uncordon")
	}
}

func TestParseDryRun(t *testing.T) {
	for in, want := range map[string]DryRun{"": DryRunNone, "none": DryRunNone, "client": DryRunClient, "server": DryRunServer} {
		if got, err := ParseDryRun(in); err != nil || got != want {
			t.Errorf("%q = %v %v", in, got, err)
		}
	}
	if _, err := ParseDryRun("maybe"); err == nil || err.Error() != `Invalid dry-run value (maybe). Must be "none", "server", or "client".` {
		t.Errorf("maybe: %v", err)
	}
	for in, want := range map[string]DryRun{DryRunNoValue: DryRunClient, "true": DryRunClient, "false": DryRunNone} {
		if got, err := ParseDryRun(in); err != nil || got != want {
			t.Errorf("deprecated %q = %v %v, want %v", in, got, err, want)
		}
	}
}
