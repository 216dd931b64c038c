package nodeipam

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

func node(name string, podCIDRs ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if len(podCIDRs) > 0 {
		n.Spec.PodCIDR = podCIDRs[0]
		n.Spec.PodCIDRs = podCIDRs
	}
	return n
}

type harness struct {
	c        *Controller
	client   *fake.Clientset
	recorder *record.FakeRecorder
	factory  informers.SharedInformerFactory
}

func newHarness(t *testing.T, opts Options, nodes ...*corev1.Node) *harness {
	t.Helper()
	var objs []runtime.Object
	for _, n := range nodes {
		objs = append(objs, n)
	}
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	rec := record.NewFakeRecorder(10)
	c, err := NewController(client, f.Core().V1().Nodes(), rec, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	for _, n := range nodes {
		if err := f.Core().V1().Nodes().Informer().GetIndexer().Add(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.occupyExisting(); err != nil {
		t.Fatal(err)
	}
	return &harness{c: c, client: client, recorder: rec, factory: f}
}

// patches returns the node patches sent.
func (h *harness) patches() map[string]string {
	out := map[string]string{}
	for _, a := range h.client.Actions() {
		if p, ok := a.(clienttesting.PatchActionImpl); ok {
			out[p.Name] = string(p.Patch)
		}
	}
	return out
}

func TestSyncAllocatesDistinctCIDRs(t *testing.T) {
	opts := Options{ClusterCIDR: "10.244.0.0/16", NodeCIDRMaskSize: 24}
	h := newHarness(t, opts, node("has", "10.244.0.0/24"), node("a"), node("b"))
	ctx := context.Background()
	for _, name := range []string{"has", "a", "b", "a"} {
		if err := h.c.sync(ctx, name); err != nil {
			t.Fatalf("sync %s: %v", name, err)
		}
	}
	got := h.patches()
	want := map[string]string{
		"a": `{"spec":{"podCIDR":"10.244.1.0/24","podCIDRs":["10.244.1.0/24"]}}`,
		"b": `{"spec":{"podCIDR":"10.244.2.0/24","podCIDRs":["10.244.2.0/24"]}}`,
	}
	if len(got) != len(want) {
		t.Fatalf("patches = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("patch of %s = %s, want %s", k, got[k], v)
		}
	}
	// Syncing "a" again before the cache shows its CIDR sent the same
	// CIDR, not a new one.
	n := 0
	for _, a := range h.client.Actions() {
		if p, ok := a.(clienttesting.PatchActionImpl); ok && p.Name == "a" {
			n++
			if string(p.Patch) != want["a"] {
				t.Errorf("second patch of a = %s", p.Patch)
			}
		}
	}
	if n != 2 {
		t.Errorf("a was patched %d times, want 2 (the same CIDR)", n)
	}
}

func TestReleasedCIDRIsReused(t *testing.T) {
	h := newHarness(t, Options{ClusterCIDR: "10.0.0.0/23", NodeCIDRMaskSize: 24}, node("x", "10.0.0.0/24"), node("y", "10.0.1.0/24"), node("z"))
	ctx := context.Background()
	if err := h.c.sync(ctx, "z"); err == nil {
		t.Fatal("sync of z with the range full succeeded")
	}
	select {
	case e := <-h.recorder.Events:
		if !strings.Contains(e, EventCIDRNotAvailable) {
			t.Errorf("event = %q, want %s", e, EventCIDRNotAvailable)
		}
	default:
		t.Error("no CIDRNotAvailable event")
	}
	h.c.nodeDeleted(node("x", "10.0.0.0/24"))
	if err := h.c.sync(ctx, "z"); err != nil {
		t.Fatal(err)
	}
	if got := h.patches()["z"]; !strings.Contains(got, `"10.0.0.0/24"`) {
		t.Errorf("patch of z = %s, want the released 10.0.0.0/24", got)
	}
}

func TestDualStack(t *testing.T) {
	h := newHarness(t, Options{ClusterCIDR: "10.244.0.0/16,fd00:10:244::/56", NodeCIDRMaskSize: 24, NodeCIDRMaskSizeIPv6: 64}, node("a"))
	if err := h.c.sync(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	want := `{"spec":{"podCIDR":"10.244.0.0/24","podCIDRs":["10.244.0.0/24","fd00:10:244::/64"]}}`
	if got := h.patches()["a"]; got != want {
		t.Errorf("patch = %s, want %s", got, want)
	}
}

func TestPatchFailureRecordsEventAndKeepsCIDR(t *testing.T) {
	h := newHarness(t, DefaultOptions(), node("a"))
	h.client.PrependReactor("patch", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, context.DeadlineExceeded
	})
	if err := h.c.sync(context.Background(), "a"); err == nil {
		t.Fatal("sync succeeded despite the failing patch")
	}
	if e := <-h.recorder.Events; !strings.Contains(e, EventCIDRAssignmentFailed) {
		t.Errorf("event = %q, want %s", e, EventCIDRAssignmentFailed)
	}
	if got := h.c.sets[0].Free(); got != 255 {
		t.Errorf("free subnets = %d, want 255 (the node's CIDR stays reserved for the retry)", got)
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{
		{ClusterCIDR: "", NodeCIDRMaskSize: 24},
		{ClusterCIDR: "10.0.0.0/33", NodeCIDRMaskSize: 24},
		{ClusterCIDR: "10.0.0.0/16", NodeCIDRMaskSize: 12},
		{ClusterCIDR: "10.0.0.0/16,10.1.0.0/16", NodeCIDRMaskSize: 24},
		{ClusterCIDR: "10.0.0.0/16", NodeCIDRMaskSize: 24, ServiceCIDR: "nope"},
	} {
		f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
		if _, err := NewController(fake.NewClientset(), f.Core().V1().Nodes(), nil, nil, o); err == nil {
			t.Errorf("NewController(%+v) succeeded, want an error", o)
		}
	}
}

func TestServiceCIDRIsNotHandedOut(t *testing.T) {
	h := newHarness(t, Options{ClusterCIDR: "10.0.0.0/23", NodeCIDRMaskSize: 24, ServiceCIDR: "10.0.0.0/24"}, node("a"))
	if err := h.c.sync(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if got := h.patches()["a"]; !strings.Contains(got, "10.0.1.0/24") {
		t.Errorf("patch = %s, want 10.0.1.0/24", got)
	}
}
