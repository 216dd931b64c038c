package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// highPriority gives a pod priority 1000: through a PriorityClass when the
// API server serves them (and may run priority admission), and in the spec
// for when it does not.
func (e *env) highPriority() podOpt {
	e.t.Helper()
	class := ""
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}
	_, err := e.client.SchedulingV1().PriorityClasses().Create(e.ctx, pc, metav1.CreateOptions{})
	switch {
	case err == nil || apierrors.IsAlreadyExists(err):
		class = "high"
	case apierrors.IsNotFound(err):
	default:
		e.t.Fatalf("creating the PriorityClass: %v", err)
	}
	return func(p *corev1.Pod) {
		v := int32(1000)
		p.Spec.Priority, p.Spec.PriorityClassName = &v, class
	}
}

func TestPreemption(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.node("node-a", "2", "4Gi", 110, map[string]string{corev1.LabelHostname: "node-a"})
	e.node("node-b", "2", "4Gi", 110, map[string]string{corev1.LabelHostname: "node-b"})
	low := map[string]string{}
	for _, name := range []string{"low-0", "low-1"} {
		e.pod(name, "1500m")
		low[name] = e.waitBound(name)
	}
	if low["low-0"] == low["low-1"] {
		t.Fatalf("both low pods on %s", low["low-0"])
	}
	vip := e.pod("vip", "1", e.highPriority())

	// The scheduler nominates a node for vip and deletes the low pod there.
	p := e.waitPod("vip", "a nominated node", func(p *corev1.Pod) bool { return p.Status.NominatedNodeName != "" })
	node := p.Status.NominatedNodeName
	victim := ""
	for name, n := range low {
		if n == node {
			victim = name
		}
	}
	if victim == "" {
		t.Fatalf("vip nominated to %s, which runs no low pod (%v)", node, low)
	}
	var gone bool
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		v, err := e.client.CoreV1().Pods("default").Get(ctx, victim, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			gone = true
			return true, nil
		}
		if err != nil || v.DeletionTimestamp == nil {
			return false, nil
		}
		for _, c := range v.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonPreemptionByScheduler {
				return true, nil
			}
		}
		return false, fmt.Errorf("victim %s is being deleted without a DisruptionTarget condition: %+v", victim, v.Status.Conditions)
	})
	if err != nil {
		t.Fatalf("victim %s: %v", victim, err)
	}
	// The other low pod stays.
	other, err := e.client.CoreV1().Pods("default").Get(e.ctx, map[string]string{"low-0": "low-1", "low-1": "low-0"}[victim], metav1.GetOptions{})
	if err != nil || other.DeletionTimestamp != nil {
		t.Fatalf("the other low pod: %v, deleting=%v", err, other.DeletionTimestamp != nil)
	}
	// Without a kubelet, finish the graceful deletion as it would.
	if !gone {
		if err := e.client.CoreV1().Pods("default").Delete(e.ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	if n := e.waitBound("vip"); n != node {
		t.Fatalf("vip bound to %s, nominated %s", n, node)
	}
	want := fmt.Sprintf("Preempted by pod %s on node %s", vip.UID, node)
	err = wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, ev := range l.Items {
			if ev.InvolvedObject.Name == victim && ev.Reason == "Preempted" && ev.Message == want && ev.Source.Component == "default-scheduler" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Preempted event %q on %s: %v", want, victim, err)
	}

	// A pod of the same priority as the running ones preempts nothing.
	e.pod("peer", "1500m")
	e.waitUnschedulable("peer", "0/2 nodes are available: 2 Insufficient cpu. "+
		"preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..")
}
