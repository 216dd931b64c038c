package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func readyPod(name string) *corev1.Pod {
	p := testPod(name, "node-1")
	p.Labels = map[string]string{"app": "guarded"}
	return p
}

// An evicted pod is marked DisruptionTarget (EvictionByEvictionAPI) before
// it is deleted, as upstream's eviction: a pod kept by a finalizer shows
// the condition beside its deletion timestamp.
func TestEvictionMarksDisruptionTarget(t *testing.T) {
	ts := start(t, nil)
	pods := ts.Client.CoreV1().Pods("default")
	p := readyPod("marked")
	p.Finalizers = []string{"example.com/keep"}
	p, err := pods.Create(ctx(t), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx(t), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.EvictV1(ctx(t), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "marked", Namespace: "default"}}); err != nil {
		t.Fatalf("eviction: %v", err)
	}
	got, err := pods.Get(ctx(t), "marked", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.DeletionTimestamp == nil {
		t.Error("evicted pod has no deletion timestamp")
	}
	var cond *corev1.PodCondition
	for i := range got.Status.Conditions {
		if got.Status.Conditions[i].Type == corev1.DisruptionTarget {
			cond = &got.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != "EvictionByEvictionAPI" || cond.LastTransitionTime.IsZero() {
		t.Errorf("DisruptionTarget condition = %+v", cond)
	}
	got.Finalizers = nil
	if _, err := pods.Update(ctx(t), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestEvictionHonoursDisruptionBudget(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	pods := c.CoreV1().Pods("default")
	for _, n := range []string{"a", "b"} {
		p, err := pods.Create(ctx(t), readyPod(n), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if _, err := pods.UpdateStatus(ctx(t), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pdbs := c.PolicyV1().PodDisruptionBudgets("default")
	pdb, err := pdbs.Create(ctx(t), &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "guard"}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What the disruption controller would write: one disruption allowed.
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 1, CurrentHealthy: 2, DesiredHealthy: 1, ExpectedPods: 2}
	if _, err := pdbs.UpdateStatus(ctx(t), pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	evict := func(name string) error {
		return pods.EvictV1(ctx(t), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}})
	}
	if err := evict("a"); err != nil {
		t.Fatalf("first eviction: %v", err)
	}
	if _, err := pods.Get(ctx(t), "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("evicted pod still there: %v", err)
	}
	got, err := pdbs.Get(ctx(t), "guard", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.DisruptionsAllowed != 0 {
		t.Errorf("disruptionsAllowed = %d, want 0", got.Status.DisruptionsAllowed)
	}
	if _, ok := got.Status.DisruptedPods["a"]; !ok {
		t.Errorf("disruptedPods = %v, want a", got.Status.DisruptedPods)
	}
	err = evict("b")
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Fatalf("second eviction: %v, want 429", err)
	}
	if _, err := pods.Get(ctx(t), "b", metav1.GetOptions{}); err != nil {
		t.Errorf("pod b went despite the budget: %v", err)
	}
}
