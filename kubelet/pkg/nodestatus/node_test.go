package nodestatus

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newManager(client *fake.Clientset, clk *fakeClock, rtErr, netErr *error) *Manager {
	return New(Options{
		NodeName: "node-1", Client: client, NodeIP: "192.0.2.2", Hostname: "host-1",
		Machine:        Machine{CPUs: 4, MemoryBytes: 8 << 30, EphemeralStorage: 100 << 30, KernelVersion: "6.1", OSImage: "Debian"},
		KubeletVersion: "v1.32.0-skiff", KubeletPort: 10250,
		RuntimeVersion: func(context.Context) (string, error) { return "1.6.20", *rtErr },
		NetworkStatus:  func(context.Context) error { return *netErr },
		Now:            clk.Now,
	})
}

func ready(st corev1.NodeStatus) corev1.NodeCondition {
	for _, c := range st.Conditions {
		if c.Type == corev1.NodeReady {
			return c
		}
	}
	return corev1.NodeCondition{}
}

func TestStatusReady(t *testing.T) {
	tests := []struct {
		name       string
		rtErr      error
		netErr     error
		want       corev1.ConditionStatus
		wantInMsg  string
		wantRuntme string
	}{
		{name: "ready", want: corev1.ConditionTrue, wantInMsg: "kubelet is posting ready status", wantRuntme: "containerd://1.6.20"},
		{name: "runtime down", rtErr: errors.New("connection refused"), want: corev1.ConditionFalse, wantInMsg: "container runtime is down: connection refused"},
		{name: "no network", netErr: errors.New("no pod CIDR yet"), want: corev1.ConditionFalse, wantInMsg: "NetworkPluginNotReady", wantRuntme: "containerd://1.6.20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Now()}
			m := newManager(fake.NewSimpleClientset(), clk, &tt.rtErr, &tt.netErr)
			st := m.Status(context.Background(), nil)
			r := ready(st)
			if r.Status != tt.want || !strings.Contains(r.Message, tt.wantInMsg) {
				t.Errorf("Ready = %+v", r)
			}
			if st.NodeInfo.ContainerRuntimeVersion != tt.wantRuntme {
				t.Errorf("runtime version = %q, want %q", st.NodeInfo.ContainerRuntimeVersion, tt.wantRuntme)
			}
			if st.Capacity.Pods().Value() != 110 || st.Capacity.Cpu().Value() != 4 || st.Allocatable.Memory().Value() != 8<<30 {
				t.Errorf("capacity = %v allocatable = %v", st.Capacity, st.Allocatable)
			}
			if len(st.Addresses) != 2 || st.Addresses[0].Address != "192.0.2.2" || st.Addresses[1].Type != corev1.NodeHostName {
				t.Errorf("addresses = %v", st.Addresses)
			}
		})
	}
}

func TestRegisterAndUpdate(t *testing.T) {
	client := fake.NewSimpleClientset()
	clk := &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	var rtErr, netErr error
	netErr = errors.New("no pod CIDR yet")
	m := newManager(client, clk, &rtErr, &netErr)
	ctx := context.Background()
	if a := m.ReportedAddresses(); a != nil {
		t.Fatalf("addresses reported before registration: %v", a)
	}
	if err := m.Register(ctx); err != nil {
		t.Fatal(err)
	}
	// The serving certificate asks for what the Node now says.
	if a := m.ReportedAddresses(); len(a) != 2 || a[0].Address != "192.0.2.2" || a[1].Address != "host-1" {
		t.Fatalf("reported addresses = %v", a)
	}
	node, err := client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ready(node.Status).Status != corev1.ConditionFalse || node.Labels[corev1.LabelHostname] != "node-1" || node.Labels[corev1.LabelOSStable] != "linux" {
		t.Fatalf("registered node = %+v", node)
	}
	statusUpdates := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "update" && a.GetSubresource() == "status" {
				n++
			}
		}
		return n
	}
	// Nothing changed: nothing is sent.
	clk.Step(10 * time.Second)
	if err := m.update(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := statusUpdates(); got != 0 {
		t.Errorf("status updates = %d, want 0", got)
	}
	// The network comes up: sent at once.
	netErr = nil
	clk.Step(10 * time.Second)
	if err := m.update(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := statusUpdates(); got != 1 {
		t.Errorf("status updates = %d, want 1", got)
	}
	node, _ = client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if r := ready(node.Status); r.Status != corev1.ConditionTrue || !r.LastTransitionTime.Time.Equal(clk.Now()) {
		t.Errorf("Ready after the network = %+v", r)
	}
	// Unchanged for 5 minutes: sent as a heartbeat.
	clk.Step(4 * time.Minute)
	_ = m.update(ctx, false)
	if got := statusUpdates(); got != 1 {
		t.Errorf("status updates = %d before the report frequency, want 1", got)
	}
	clk.Step(time.Minute)
	_ = m.update(ctx, false)
	if got := statusUpdates(); got != 2 {
		t.Errorf("status updates = %d after the report frequency, want 2", got)
	}
	node, _ = client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	r := ready(node.Status)
	if !r.LastHeartbeatTime.Time.Equal(clk.Now()) || r.LastTransitionTime.Time.Equal(clk.Now()) {
		t.Errorf("heartbeat %v transition %v: the heartbeat must move, the transition not", r.LastHeartbeatTime, r.LastTransitionTime)
	}
}

func TestRegisterExistingNode(t *testing.T) {
	existing := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"custom": "yes"}}}
	client := fake.NewSimpleClientset(existing)
	clk := &fakeClock{t: time.Now()}
	var rtErr, netErr error
	m := newManager(client, clk, &rtErr, &netErr)
	if err := m.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	node, _ := client.CoreV1().Nodes().Get(context.Background(), "node-1", metav1.GetOptions{})
	if node.Labels["custom"] != "yes" || node.Labels[corev1.LabelArchStable] == "" || ready(node.Status).Status != corev1.ConditionTrue {
		t.Errorf("node = %+v", node)
	}
}

func TestRenewLease(t *testing.T) {
	client := fake.NewSimpleClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}})
	clk := &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	var rtErr, netErr error
	m := newManager(client, clk, &rtErr, &netErr)
	ctx := context.Background()
	if err := m.RenewLease(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Step(10 * time.Second)
	if err := m.RenewLease(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := client.CoordinationV1().Leases(LeaseNamespace).Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *l.Spec.HolderIdentity != "node-1" || *l.Spec.LeaseDurationSeconds != 40 || !l.Spec.RenewTime.Time.Equal(clk.Now()) {
		t.Errorf("lease = %+v", l.Spec)
	}
	if len(l.OwnerReferences) != 1 || l.OwnerReferences[0].Kind != "Node" || l.OwnerReferences[0].UID != "node-uid" {
		t.Errorf("owner = %+v", l.OwnerReferences)
	}
	creates := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "leases" {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("lease creates = %d, want 1", creates)
	}
}

func TestRegisterError(t *testing.T) {
	client := fake.NewSimpleClientset()
	client.PrependReactor("create", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	var rtErr, netErr error
	m := newManager(client, &fakeClock{t: time.Now()}, &rtErr, &netErr)
	if err := m.Register(context.Background()); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("err = %v", err)
	}
}

func TestMemTotal(t *testing.T) {
	n, err := memTotal("/proc/meminfo")
	if err != nil || n <= 0 {
		t.Errorf("memTotal = %d, %v", n, err)
	}
	if _, err := ReadMachine(t.TempDir()); err != nil {
		t.Errorf("ReadMachine: %v", err)
	}
}
