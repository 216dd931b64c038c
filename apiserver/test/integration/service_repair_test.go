package integration

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"

	"skiff.dev/apiserver/pkg/registry/core/service"
	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
)

const allocations = "/registry/skiff/allocations/"

// newRepair builds a repair over the test server's etcd, with the ranges
// given, recording its events.
func newRepair(ts *testserver.TestServer, cidr string, portBase, portSize int, events *[]string) *service.ServiceRepair {
	a := &service.ServiceAllocator{Client: ts.Server.EtcdClient(), CIDR: netip.MustParsePrefix(cidr)}
	a.NodePort.Base, a.NodePort.Size = portBase, portSize
	return &service.ServiceRepair{
		Alloc: a,
		Services: func(ctx context.Context) ([]corev1.Service, error) {
			l, err := ts.Client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			return l.Items, nil
		},
		Event: func(_ context.Context, e service.RepairEvent) {
			*events = append(*events, fmt.Sprintf("%s/%s %s %s: %s", e.Service.Namespace, e.Service.Name, e.Controller, e.Reason, e.Note))
		},
	}
}

// The repair pass, one pass at a time: leaked allocations are freed after
// three passes, missing ones are taken back, duplicates and values out of
// the ranges are reported with upstream's reasons.
func TestServiceRepairPasses(t *testing.T) {
	// The server's own repair runs at start only (its interval is long),
	// so this test's passes are the only ones after that.
	ts := start(t, func(o *server.Options) { o.ServiceRepairInterval = time.Hour })
	etcd := ts.Server.EtcdClient()
	svcs := ts.Client.CoreV1().Services("default")
	var events []string
	repair := newRepair(ts, "10.96.0.0/16", 30000, 2768, &events)
	found := map[string]int{}
	repair.Found = func(kind, errType string) { found[kind+"/"+errType]++ }
	pass := func() {
		t.Helper()
		events = nil
		if err := repair.RunOnce(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(key string) bool {
		t.Helper()
		r, err := etcd.Get(ctx(t), allocations+key)
		if err != nil {
			t.Fatal(err)
		}
		return len(r.Kvs) == 1
	}

	// Nothing to repair on a consistent store.
	pass()
	if len(events) != 0 {
		t.Fatalf("events on a consistent store: %v", events)
	}

	// A crash between allocating and storing leaves an allocation with no
	// Service: freed on the third pass that finds it so, not before.
	if _, err := etcd.Put(ctx(t), allocations+"serviceips/10.96.200.200", "default/ghost"); err != nil {
		t.Fatal(err)
	}
	if _, err := etcd.Put(ctx(t), allocations+"nodeports/31999", "default/ghost"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		pass()
		want := i < 3
		if exists("serviceips/10.96.200.200") != want || exists("nodeports/31999") != want {
			t.Fatalf("after pass %d: leaked keys present %v %v, want %v", i, exists("serviceips/10.96.200.200"), exists("nodeports/31999"), want)
		}
	}

	if found["ip/leak"] != 1 || found["port/leak"] != 1 {
		t.Errorf("leaks counted: %v", found)
	}

	// A Service whose allocations are missing gets them back, with events.
	np, err := svcs.Create(ctx(t), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"a": "b"}, Ports: []corev1.ServicePort{{Port: 80}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ipKey, portKey := "serviceips/"+np.Spec.ClusterIP, fmt.Sprintf("nodeports/%d", np.Spec.Ports[0].NodePort)
	for _, k := range []string{ipKey, portKey} {
		if _, err := etcd.Delete(ctx(t), allocations+k); err != nil {
			t.Fatal(err)
		}
	}
	pass()
	want := []string{
		fmt.Sprintf("default/np ipallocator-repair-controller ClusterIPNotAllocated: Cluster IP [IPv4]:%s is not allocated; repairing", np.Spec.ClusterIP),
		fmt.Sprintf("default/np portallocator-repair-controller PortNotAllocated: Port %d is not allocated; repairing", np.Spec.Ports[0].NodePort),
	}
	sort.Strings(events)
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
	for _, k := range []string{ipKey, portKey} {
		r, err := etcd.Get(ctx(t), allocations+k)
		if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "default/np" {
			t.Errorf("%s after repair: %v %v", k, err, r.Kvs)
		}
	}
	pass()
	if len(events) != 0 {
		t.Errorf("a second pass reported again: %v", events)
	}

	// Two Services with one cluster IP (the key was lost, and another
	// Service took the address): the one not holding it is told.
	if _, err := etcd.Delete(ctx(t), allocations+ipKey); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(ctx(t), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "dup"}, Spec: corev1.ServiceSpec{
		ClusterIP: np.Spec.ClusterIP, Selector: map[string]string{"a": "b"}, Ports: []corev1.ServicePort{{Port: 80}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pass()
	if found["ip/repair"] != 1 || found["port/repair"] != 1 || found["ip/duplicate"] != 1 {
		t.Errorf("found: %v", found)
	}
	wantDup := fmt.Sprintf("default/np ipallocator-repair-controller ClusterIPAlreadyAllocated: Cluster IP [IPv4]:%s was assigned to multiple services; please recreate service", np.Spec.ClusterIP)
	if len(events) != 1 || events[0] != wantDup {
		t.Errorf("events: %v, want [%s]", events, wantDup)
	}

	// Ranges that no longer hold what Services have (the flags changed).
	var narrowEvents []string
	narrow := newRepair(ts, "10.96.0.0/30", 30000, 1, &narrowEvents)
	narrow.LeakPasses = 100
	if err := narrow.RunOnce(ctx(t)); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(narrowEvents, "\n")
	for _, w := range []string{
		fmt.Sprintf("default/np ipallocator-repair-controller ClusterIPOutOfRange: Cluster IP [IPv4]:%s is not within the configured Service CIDR 10.96.0.0/30; please recreate service", np.Spec.ClusterIP),
		fmt.Sprintf("default/np portallocator-repair-controller PortOutOfRange: Port %d is not within the port range 30000-30000; please recreate service", np.Spec.Ports[0].NodePort),
	} {
		if !strings.Contains(joined, w) {
			t.Errorf("missing event %q in:\n%s", w, joined)
		}
	}
}

// The server runs the repair by itself and records its events on the
// Service, where kubectl describe shows them.
func TestServiceRepairLoop(t *testing.T) {
	ts := start(t, func(o *server.Options) { o.ServiceRepairInterval = 200 * time.Millisecond })
	svcs := ts.Client.CoreV1().Services("default")
	np, err := svcs.Create(ctx(t), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"a": "b"}, Ports: []corev1.ServicePort{{Port: 80}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	port := np.Spec.Ports[0].NodePort
	key := fmt.Sprintf("%snodeports/%d", allocations, port)
	if _, err := ts.Server.EtcdClient().Delete(ctx(t), key); err != nil {
		t.Fatal(err)
	}
	var ev corev1.Event
	err = wait.PollUntilContextTimeout(ctx(t), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := ts.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": "np", "reason": "PortNotAllocated"}.String()})
		if err != nil || len(l.Items) == 0 {
			return false, err
		}
		ev = l.Items[0]
		return true, nil
	})
	if err != nil {
		t.Fatalf("no PortNotAllocated event: %v", err)
	}
	if ev.Type != corev1.EventTypeWarning || ev.InvolvedObject.UID != np.UID || ev.ReportingController != "portallocator-repair-controller" ||
		ev.Action != "PortAllocation" || ev.Message != fmt.Sprintf("Port %d is not allocated; repairing", port) {
		t.Errorf("event: %+v", ev)
	}
	r, err := ts.Server.EtcdClient().Get(ctx(t), key)
	if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "default/np" {
		t.Errorf("the node port was not taken back: %v %v", err, r.Kvs)
	}
	code, body := raw(t, ts, "GET", "/metrics", "", nil)
	if code != 200 || !strings.Contains(string(body), `apiserver_nodeport_repair_port_errors_total{type="repair"} 1`) {
		t.Errorf("metrics: %d, no apiserver_nodeport_repair_port_errors_total{type=\"repair\"} 1", code)
	}
}
