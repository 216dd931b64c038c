package nodelifecycle

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testNode(name string, ready corev1.ConditionStatus, taints ...corev1.Taint) *corev1.Node {
	hb := metav1.NewTime(t0.Add(-time.Second))
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: ready, LastHeartbeatTime: hb, LastTransitionTime: hb},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: hb, LastTransitionTime: hb},
		}},
	}
}

func testLease(name string, renew time.Time) *coordinationv1.Lease {
	r := metav1.NewMicroTime(renew)
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: LeaseNamespace}, Spec: coordinationv1.LeaseSpec{RenewTime: &r}}
}

func testPod(name, node string, tolerations ...corev1.Toleration) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: node, Tolerations: tolerations},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

func toleration(key string, seconds *int64) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}
}

func ptr(v int64) *int64 { return &v }

type harness struct {
	t        *testing.T
	c        *Controller
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
}

func newHarness(t *testing.T, objs ...runtime.Object) *harness {
	t.Helper()
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	clk := clocktesting.NewFakeClock(t0)
	rec := record.NewFakeRecorder(100)
	opts := DefaultOptions()
	opts.Clock = clk
	c, err := NewController(client, f.Core().V1().Nodes(), f.Coordination().V1().Leases(), f.Core().V1().Pods(), rec, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, c: c, client: client, factory: f, clock: clk, recorder: rec}
	h.refresh()
	return h
}

// refresh makes the listers show what the fake API holds.
func (h *harness) refresh() {
	h.t.Helper()
	ctx := context.Background()
	nodes, _ := h.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	pods, _ := h.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	leases, _ := h.client.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{})
	var items []any
	for i := range nodes.Items {
		items = append(items, &nodes.Items[i])
	}
	must(h.t, h.factory.Core().V1().Nodes().Informer().GetIndexer().Replace(items, ""))
	items = nil
	for i := range pods.Items {
		items = append(items, &pods.Items[i])
	}
	must(h.t, h.factory.Core().V1().Pods().Informer().GetIndexer().Replace(items, ""))
	items = nil
	for i := range leases.Items {
		items = append(items, &leases.Items[i])
	}
	must(h.t, h.factory.Coordination().V1().Leases().Informer().GetIndexer().Replace(items, ""))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// pass runs a monitor pass and a tainting/eviction pass, refreshing the
// caches after each.
func (h *harness) pass() {
	h.t.Helper()
	ctx := context.Background()
	must(h.t, h.c.MonitorNodeHealth(ctx))
	h.refresh()
	must(h.t, h.c.TaintAndEvict(ctx))
	h.refresh()
}

func (h *harness) node(name string) *corev1.Node {
	n, err := h.client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	must(h.t, err)
	return n
}

func (h *harness) renew(name string) {
	_, err := h.client.CoordinationV1().Leases(LeaseNamespace).Update(context.Background(), testLease(name, h.clock.Now()), metav1.UpdateOptions{})
	must(h.t, err)
}

func taintKeys(n *corev1.Node) []string {
	var out []string
	for _, t := range n.Spec.Taints {
		out = append(out, t.Key+":"+string(t.Effect))
	}
	sort.Strings(out)
	return out
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (h *harness) deletedPods() []string {
	var out []string
	for _, a := range h.client.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok && d.Resource.Resource == "pods" {
			out = append(out, d.Name)
		}
	}
	sort.Strings(out)
	return out
}

func TestNodeWithoutHeartbeatTurnsUnknownAndIsTainted(t *testing.T) {
	h := newHarness(t, testNode("a", corev1.ConditionTrue), testLease("a", t0), testNode("b", corev1.ConditionTrue), testLease("b", t0),
		testPod("p", "a", toleration(corev1.TaintNodeUnreachable, ptr(300))))
	h.pass()
	h.clock.Step(30 * time.Second)
	h.renew("a")
	h.renew("b")
	h.refresh()
	h.pass()
	if got := readyCondition(&h.node("a").Status).Status; got != corev1.ConditionTrue {
		t.Fatalf("a is %s with a renewed lease", got)
	}
	// b keeps renewing; a stops.
	h.clock.Step(41 * time.Second)
	h.renew("b")
	h.refresh()
	h.pass()
	a := h.node("a")
	for _, c := range a.Status.Conditions {
		// Conditions the kubelet posted turn Unknown; missing monitored
		// ones are added as never updated.
		reason, message := "NodeStatusUnknown", "Kubelet stopped posting node status."
		if c.Type == corev1.NodeDiskPressure || c.Type == corev1.NodePIDPressure {
			reason, message = "NodeStatusNeverUpdated", "Kubelet never posted node status."
		}
		if c.Status != corev1.ConditionUnknown || c.Reason != reason || c.Message != message {
			t.Errorf("condition %s = %s/%s/%s, want Unknown/%s", c.Type, c.Status, c.Reason, c.Message, reason)
		}
	}
	if len(a.Status.Conditions) != 4 {
		t.Errorf("a has %d conditions, want the 4 monitored ones", len(a.Status.Conditions))
	}
	want := []string{"node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unreachable:NoSchedule"}
	if got := taintKeys(a); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("taints of a = %v, want %v", got, want)
	}
	if got := readyCondition(&h.node("b").Status).Status; got != corev1.ConditionTrue {
		t.Errorf("b is %s, want True", got)
	}
	p, _ := h.client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
	if p.Status.Conditions[0].Status != corev1.ConditionFalse {
		t.Errorf("pod Ready = %s, want False", p.Status.Conditions[0].Status)
	}
	evs := strings.Join(h.events(), "\n")
	for _, want := range []string{"Normal RegisteredNode Node a event: Registered Node a in Controller",
		"Normal NodeNotReady Node a status is now: NodeNotReady", "Warning NodeNotReady Node is not ready"} {
		if !strings.Contains(evs, want) {
			t.Errorf("events lack %q:\n%s", want, evs)
		}
	}
	// The kubelet comes back: lease renewed and Ready posted.
	h.clock.Step(5 * time.Second)
	n := h.node("a")
	n.Status.Conditions = testNode("a", corev1.ConditionTrue).Status.Conditions
	n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(h.clock.Now())
	_, err := h.client.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{})
	must(t, err)
	h.renew("a")
	h.refresh()
	h.pass()
	if got := taintKeys(h.node("a")); len(got) != 0 {
		t.Errorf("taints of the recovered node = %v, want none", got)
	}
}

func TestNeverReportingNodeUsesStartupGracePeriod(t *testing.T) {
	fresh := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "new", CreationTimestamp: metav1.NewTime(t0)}}
	h := newHarness(t, fresh, testNode("b", corev1.ConditionTrue), testLease("b", t0))
	h.clock.Step(50 * time.Second)
	h.renew("b")
	h.refresh()
	h.pass()
	if c := readyCondition(&h.node("new").Status); c != nil {
		t.Fatalf("node got %+v within the startup grace period", c)
	}
	h.clock.Step(11 * time.Second)
	h.renew("b")
	h.refresh()
	h.pass()
	c := readyCondition(&h.node("new").Status)
	if c == nil || c.Status != corev1.ConditionUnknown || c.Reason != "NodeStatusNeverUpdated" {
		t.Fatalf("Ready = %+v, want Unknown/NodeStatusNeverUpdated", c)
	}
}

func TestNoExecuteTaintingIsRateLimited(t *testing.T) {
	h := newHarness(t,
		testNode("ok1", corev1.ConditionTrue), testLease("ok1", t0), testNode("ok2", corev1.ConditionTrue), testLease("ok2", t0),
		testNode("bad1", corev1.ConditionFalse), testLease("bad1", t0), testNode("bad2", corev1.ConditionFalse), testLease("bad2", t0))
	tainted := func() []string {
		var out []string
		for _, n := range []string{"bad1", "bad2"} {
			if hasTaint(h.node(n), NotReadyNoExecute) {
				out = append(out, n)
			}
		}
		return out
	}
	h.pass()
	if got := tainted(); len(got) != 1 {
		t.Fatalf("tainted at once: %v, want one node", got)
	}
	h.clock.Step(5 * time.Second)
	must(t, h.c.TaintAndEvict(context.Background()))
	if got := tainted(); len(got) != 1 {
		t.Fatalf("tainted after 5s: %v, want still one (0.1 nodes/s)", got)
	}
	h.clock.Step(5 * time.Second)
	must(t, h.c.TaintAndEvict(context.Background()))
	if got := tainted(); len(got) != 2 {
		t.Fatalf("tainted after 10s: %v, want both", got)
	}
	// Both got the NoSchedule taint at once, without rate limit.
	for _, n := range []string{"bad1", "bad2"} {
		if !hasTaint(h.node(n), corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}) {
			t.Errorf("%s lacks the not-ready NoSchedule taint", n)
		}
	}
}

func TestFullDisruptionStopsEviction(t *testing.T) {
	h := newHarness(t,
		testNode("a", corev1.ConditionFalse, NotReadyNoExecute), testLease("a", t0),
		testNode("b", corev1.ConditionFalse), testLease("b", t0),
		testPod("p", "b"))
	h.pass()
	h.clock.Step(time.Minute)
	must(t, h.c.TaintAndEvict(context.Background()))
	for _, n := range []string{"a", "b"} {
		if hasTaint(h.node(n), NotReadyNoExecute) || hasTaint(h.node(n), UnreachableNoExecute) {
			t.Errorf("%s has a NoExecute taint in full disruption: %v", n, taintKeys(h.node(n)))
		}
	}
	if got := h.deletedPods(); len(got) != 0 {
		t.Errorf("pods evicted in full disruption: %v", got)
	}
}

func TestPartialDisruptionOfASmallZoneStopsTainting(t *testing.T) {
	var objs []runtime.Object
	for i, ready := range []corev1.ConditionStatus{"True", "True", "False", "False", "False"} {
		name := string(rune('a' + i))
		objs = append(objs, testNode(name, ready), testLease(name, t0))
	}
	h := newHarness(t, objs...)
	h.pass()
	for _, n := range []string{"c", "d", "e"} {
		if hasTaint(h.node(n), NotReadyNoExecute) {
			t.Errorf("%s tainted although 3 of 5 nodes of a small zone are not ready", n)
		}
	}
	if got := h.c.zones[""]; got != statePartialDisruption {
		t.Errorf("zone state = %s, want %s", got, statePartialDisruption)
	}
}

func TestNotReadyAndUnreachableSwap(t *testing.T) {
	h := newHarness(t, testNode("a", corev1.ConditionUnknown, NotReadyNoExecute), testLease("a", t0),
		testNode("b", corev1.ConditionTrue), testLease("b", t0))
	must(t, h.c.MonitorNodeHealth(context.Background()))
	a := h.node("a")
	if !hasTaint(a, UnreachableNoExecute) || hasTaint(a, NotReadyNoExecute) {
		t.Errorf("taints = %v, want unreachable instead of not-ready", taintKeys(a))
	}
}

func TestTaintEviction(t *testing.T) {
	h := newHarness(t,
		testNode("bad", corev1.ConditionUnknown, UnreachableNoExecute), testLease("bad", t0),
		testNode("ok", corev1.ConditionTrue), testLease("ok", t0),
		testPod("intolerant", "bad"),
		testPod("five-minutes", "bad", toleration(corev1.TaintNodeUnreachable, ptr(300)), toleration(corev1.TaintNodeNotReady, ptr(300))),
		testPod("forever", "bad", toleration(corev1.TaintNodeUnreachable, nil)),
		testPod("elsewhere", "ok"),
	)
	ctx := context.Background()
	must(t, h.c.TaintAndEvict(ctx))
	if got := h.deletedPods(); strings.Join(got, ",") != "intolerant" {
		t.Fatalf("evicted at once: %v, want [intolerant]", got)
	}
	h.refresh()
	h.clock.Step(299 * time.Second)
	must(t, h.c.TaintAndEvict(ctx))
	if got := h.deletedPods(); strings.Join(got, ",") != "intolerant" {
		t.Fatalf("evicted before 300s: %v", got)
	}
	h.clock.Step(time.Second)
	must(t, h.c.TaintAndEvict(ctx))
	h.refresh()
	h.clock.Step(time.Hour)
	must(t, h.c.TaintAndEvict(ctx))
	if got := h.deletedPods(); strings.Join(got, ",") != "five-minutes,intolerant" {
		t.Fatalf("evicted = %v, want five-minutes and intolerant only", got)
	}
	evs := strings.Join(h.events(), "\n")
	if !strings.Contains(evs, "Normal TaintManagerEviction Marking for deletion Pod ns/intolerant") {
		t.Errorf("no TaintManagerEviction event:\n%s", evs)
	}
	if strings.Count(evs, "TaintManagerEviction") != 2 {
		t.Errorf("want 2 eviction events:\n%s", evs)
	}
}

func TestTolerationTime(t *testing.T) {
	unreachable := []corev1.Taint{UnreachableNoExecute}
	both := []corev1.Taint{UnreachableNoExecute, NotReadyNoExecute}
	tests := []struct {
		name        string
		tolerations []corev1.Toleration
		taints      []corev1.Taint
		tolerated   bool
		want        time.Duration
	}{
		{name: "none", taints: unreachable, tolerated: false},
		{name: "forever", tolerations: []corev1.Toleration{toleration(corev1.TaintNodeUnreachable, nil)}, taints: unreachable, tolerated: true, want: -1},
		{name: "seconds", tolerations: []corev1.Toleration{toleration(corev1.TaintNodeUnreachable, ptr(30))}, taints: unreachable, tolerated: true, want: 30 * time.Second},
		{name: "zero means now", tolerations: []corev1.Toleration{toleration(corev1.TaintNodeUnreachable, ptr(0))}, taints: unreachable, tolerated: true, want: 0},
		{name: "one of two taints", tolerations: []corev1.Toleration{toleration(corev1.TaintNodeUnreachable, nil)}, taints: both, tolerated: false},
		{name: "smallest of the used", tolerations: []corev1.Toleration{toleration(corev1.TaintNodeUnreachable, nil), toleration(corev1.TaintNodeNotReady, ptr(60))},
			taints: both, tolerated: true, want: 60 * time.Second},
		{name: "wildcard", tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, taints: both, tolerated: true, want: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, d := tolerationTime(tt.tolerations, tt.taints)
			if ok != tt.tolerated || (ok && d != tt.want) {
				t.Errorf("tolerationTime = %v, %v; want %v, %v", ok, d, tt.tolerated, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	bad := []func(*Options){
		func(o *Options) { o.NodeMonitorPeriod = 0 },
		func(o *Options) { o.NodeMonitorGracePeriod = -1 },
		func(o *Options) { o.NodeEvictionRate = -1 },
		func(o *Options) { o.UnhealthyZoneThreshold = 2 },
	}
	for i, f := range bad {
		o := DefaultOptions()
		f(&o)
		if o.Validate() == nil {
			t.Errorf("case %d: Validate accepted %+v", i, o)
		}
	}
	if err := DefaultOptions().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
