package lifecycle

import (
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"skiff.dev/controller-manager/pkg/controller/nodeipam"
	"skiff.dev/controller-manager/pkg/controller/nodelifecycle"
	"skiff.dev/controller-manager/pkg/controller/podgc"
)

func (e *env) createNode(t testing.TB, n *corev1.Node) {
	t.Helper()
	if _, err := e.client.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) podCIDR(name string) string {
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return n.Spec.PodCIDR
}

func TestNodeIPAM(t *testing.T) {
	e := start(t)
	// A node that has its CIDR before the controller starts keeps it.
	e.createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "pre"}, Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24", PodCIDRs: []string{"10.244.1.0/24"}}})
	ipam, err := nodeipam.NewController(e.client, e.informers.Core().V1().Nodes(), e.recorder, nil,
		nodeipam.Options{ClusterCIDR: "10.244.0.0/22", NodeCIDRMaskSize: 24})
	if err != nil {
		t.Fatal(err)
	}
	e.run("node IPAM", ipam.Run)
	for _, n := range []string{"a", "b", "c"} {
		e.createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	e.poll(t, "every node to get a pod CIDR", func() (bool, error) {
		for _, n := range []string{"a", "b", "c"} {
			if e.podCIDR(n) == "" {
				return false, nil
			}
		}
		return true, nil
	})
	seen := map[string]string{"10.244.1.0/24": "pre"}
	for _, n := range []string{"a", "b", "c"} {
		node, err := e.client.CoreV1().Nodes().Get(e.ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := node.Spec.PodCIDR
		if other, dup := seen[c]; dup {
			t.Errorf("%s and %s both got %s", n, other, c)
		}
		seen[c] = n
		if len(node.Spec.PodCIDRs) != 1 || node.Spec.PodCIDRs[0] != c {
			t.Errorf("%s: podCIDRs %v do not match podCIDR %s", n, node.Spec.PodCIDRs, c)
		}
	}
	if got := e.podCIDR("pre"); got != "10.244.1.0/24" {
		t.Errorf("pre's pod CIDR = %q, want the one it had", got)
	}

	// The range (4 subnets) is full: a fifth node waits, with an event.
	e.createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "d"}})
	e.poll(t, "a CIDRNotAvailable event", func() (bool, error) {
		evs, err := e.client.CoreV1().Events("").List(e.ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("reason", nodeipam.EventCIDRNotAvailable).String()})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Name == "d" {
				return true, nil
			}
		}
		return false, nil
	})
	if got := e.podCIDR("d"); got != "" {
		t.Fatalf("d got %s from a full range", got)
	}
	// Deleting a node frees its CIDR for the waiting one.
	freed := e.podCIDR("b")
	if err := e.client.CoreV1().Nodes().Delete(e.ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll(t, "d to get the freed CIDR", func() (bool, error) { return e.podCIDR("d") == freed, nil })
}

func readyNode(name string) *corev1.Node {
	now := metav1.Now()
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}}}
}

// heartbeat plays a kubelet's lease: it creates or renews node's Lease.
func (e *env) heartbeat(t testing.TB, node string) {
	t.Helper()
	leases := e.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Get(e.ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(e.ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &node, RenewTime: &now}}, metav1.CreateOptions{})
	} else if err == nil {
		l.Spec.RenewTime = &now
		_, err = leases.Update(e.ctx, l, metav1.UpdateOptions{})
	}
	if err != nil && e.ctx.Err() == nil {
		t.Errorf("renewing the lease of %s: %v", node, err)
	}
}

// keepAlive renews node's lease every 300ms until the test ends.
func (e *env) keepAlive(t *testing.T, node string) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				e.heartbeat(t, node)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

func hasTaint(n *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

func TestNodeLifecycle(t *testing.T) {
	e := start(t)
	opts := nodelifecycle.DefaultOptions()
	opts.NodeMonitorPeriod = 200 * time.Millisecond
	opts.NodeMonitorGracePeriod = 2 * time.Second
	nlc, err := nodelifecycle.NewController(e.client, e.informers.Core().V1().Nodes(), e.informers.Coordination().V1().Leases(),
		e.informers.Core().V1().Pods(), e.recorder, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.namespace("work")
	for _, n := range []string{"alive", "stale"} {
		e.createNode(t, readyNode(n))
		e.heartbeat(t, n)
	}
	e.keepAlive(t, "alive")
	zero, never := int64(0), (*int64)(nil)
	pod := func(name, node string, seconds *int64) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}}}}
		if _, err := e.client.CoreV1().Pods("work").Create(e.ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// tolerationSeconds 0: evicted as soon as the taint is there (a pod
	// without any toleration gets the 300s default from admission).
	pod("evict-me", "stale", &zero)
	pod("forever", "stale", never)
	pod("healthy", "alive", &zero)
	e.run("node lifecycle", nlc.Run)

	e.poll(t, "the stale node to turn Unknown and be tainted", func() (bool, error) {
		n, err := e.client.CoreV1().Nodes().Get(e.ctx, "stale", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && (c.Status != corev1.ConditionUnknown || c.Reason != "NodeStatusUnknown") {
				return false, nil
			}
		}
		return hasTaint(n, corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute) && hasTaint(n, corev1.TaintNodeUnreachable, corev1.TaintEffectNoSchedule), nil
	})
	e.poll(t, "the non-tolerating pod to be evicted", func() (bool, error) {
		_, err := e.client.CoreV1().Pods("work").Get(e.ctx, "evict-me", metav1.GetOptions{})
		if err == nil {
			return false, nil
		}
		return gone(err)
	})
	for _, name := range []string{"forever", "healthy"} {
		if _, err := e.client.CoreV1().Pods("work").Get(e.ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("pod %s: %v, want it kept", name, err)
		}
	}
	alive, err := e.client.CoreV1().Nodes().Get(e.ctx, "alive", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(alive.Spec.Taints) != 0 {
		t.Errorf("the live node got taints %v", alive.Spec.Taints)
	}
	e.poll(t, "a NodeNotReady event", func() (bool, error) {
		evs, err := e.client.CoreV1().Events("").List(e.ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("reason", nodelifecycle.EventNodeNotReady).String()})
		return err == nil && len(evs.Items) > 0, err
	})

	// The kubelet comes back: lease renewed, Ready posted.
	e.keepAlive(t, "stale")
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, "stale", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
	if _, err := e.client.CoreV1().Nodes().UpdateStatus(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll(t, "the recovered node's taints to be removed", func() (bool, error) {
		n, err := e.client.CoreV1().Nodes().Get(e.ctx, "stale", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return len(n.Spec.Taints) == 0, nil
	})
}

func TestPodGCRemovesPodsOfDeletedNodes(t *testing.T) {
	e := start(t)
	gc, err := podgc.NewController(e.client, e.informers.Core().V1().Pods(), e.informers.Core().V1().Nodes(), e.recorder, nil,
		podgc.Options{TerminatedPodGCThreshold: podgc.DefaultTerminatedPodGCThreshold, GCPeriod: 200 * time.Millisecond, QuarantineTime: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.namespace("work")
	for _, n := range []string{"doomed", "kept"} {
		e.createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	for i, node := range []string{"doomed", "doomed", "kept"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d-%s", i, node)},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := e.client.CoreV1().Pods("work").Create(e.ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.run("pod GC", gc.Run)
	if err := e.client.CoreV1().Nodes().Delete(e.ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll(t, "the pods of the deleted node to be deleted", func() (bool, error) {
		pods, err := e.client.CoreV1().Pods("work").List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "doomed" {
				return false, nil
			}
		}
		return true, nil
	})
	if _, err := e.client.CoreV1().Pods("work").Get(e.ctx, "p2-kept", metav1.GetOptions{}); err != nil {
		t.Errorf("the pod of the existing node: %v", err)
	}
}
