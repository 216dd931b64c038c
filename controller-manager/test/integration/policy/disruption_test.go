package policy

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/pkg/controller/disruption"
)

const pdbNS = "pdb"

// activePods are the pods of the ReplicaSet web that are not being deleted.
func activePods(ctx context.Context, c kubernetes.Interface) ([]corev1.Pod, error) {
	l, err := c.CoreV1().Pods(pdbNS).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// budgetIs waits until the budget's status, for its current generation,
// is want (disruptedPods compared by length).
func budgetIs(t *testing.T, c kubernetes.Interface, what string, want policyv1.PodDisruptionBudgetStatus, reason string) {
	t.Helper()
	poll(t, what, func(ctx context.Context) (bool, string, error) {
		p, err := c.PolicyV1().PodDisruptionBudgets(pdbNS).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		s := p.Status
		cond := apimeta.FindStatusCondition(s.Conditions, policyv1.DisruptionAllowedCondition)
		state := fmt.Sprintf("generation %d observed %d expected %d healthy %d desired %d allowed %d disrupted %v condition %+v",
			p.Generation, s.ObservedGeneration, s.ExpectedPods, s.CurrentHealthy, s.DesiredHealthy, s.DisruptionsAllowed, s.DisruptedPods, cond)
		ok := s.ObservedGeneration == p.Generation && s.ExpectedPods == want.ExpectedPods && s.CurrentHealthy == want.CurrentHealthy &&
			s.DesiredHealthy == want.DesiredHealthy && s.DisruptionsAllowed == want.DisruptionsAllowed &&
			len(s.DisruptedPods) == len(want.DisruptedPods) && cond != nil && cond.Reason == reason
		return ok, state, nil
	})
}

// evict posts a policy/v1 Eviction for pod, without client-go's retries
// on 429 with Retry-After, so a refusal is seen as it is.
func evict(ctx context.Context, c kubernetes.Interface, pod string) error {
	ev := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: pod, Namespace: pdbNS},
		DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)},
	}
	return c.PolicyV1().RESTClient().Post().AbsPath("/api/v1").Namespace(pdbNS).Resource("pods").Name(pod).
		SubResource("eviction").Body(ev).MaxRetries(0).Do(ctx).Error()
}

// A PodDisruptionBudget over a ReplicaSet's pods: the controller computes
// its status once the pods are Ready, pods/eviction takes the one
// disruption it allows and refuses the next with 429, the controller drops
// the evicted pod from disruptedPods once it is gone, and a replacement
// turning Ready allows an eviction again.
func TestDisruptionBudgetGuardsEvictions(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, nil)
	cm := startCM(t, ts, func(o *cmapp.Options) { o.Controllers = []string{"replicaset", "disruption"} })
	c, ctx := ts.Client, context.Background()
	namespace(t, c, pdbNS)

	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "busybox"}}},
			},
		},
	}
	if _, err := c.AppsV1().ReplicaSets(pdbNS).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromString("60%")),
			Selector:     &metav1.LabelSelector{MatchLabels: labels},
		},
	}
	if _, err := c.PolicyV1().PodDisruptionBudgets(pdbNS).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	poll(t, "the ReplicaSet's 3 pods", func(ctx context.Context) (bool, string, error) {
		var err error
		pods, err = activePods(ctx, c)
		return len(pods) == 3, fmt.Sprintf("%d pods", len(pods)), err
	})
	// 60% of 3 rounded up: 2 must stay healthy. Nothing is Ready yet.
	budgetIs(t, c, "a budget with no healthy pod", policyv1.PodDisruptionBudgetStatus{
		ExpectedPods: 3, CurrentHealthy: 0, DesiredHealthy: 2, DisruptionsAllowed: 0}, policyv1.InsufficientPodsReason)

	for i := range pods {
		setPodStatus(t, c, &pods[i], corev1.PodRunning, true)
	}
	budgetIs(t, c, "one disruption allowed", policyv1.PodDisruptionBudgetStatus{
		ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1}, policyv1.SufficientPodsReason)

	if err := evict(ctx, c, pods[0].Name); err != nil {
		t.Fatalf("evicting %s with one disruption allowed: %v", pods[0].Name, err)
	}
	if err := evict(ctx, c, pods[1].Name); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evicting %s with no disruption left = %v, want 429 TooManyRequests", pods[1].Name, err)
	}
	// The evicted pod is gone and its replacement is not Ready: the
	// controller drops it from disruptedPods and still allows nothing.
	budgetIs(t, c, "the eviction accounted for", policyv1.PodDisruptionBudgetStatus{
		ExpectedPods: 3, CurrentHealthy: 2, DesiredHealthy: 2, DisruptionsAllowed: 0}, policyv1.InsufficientPodsReason)
	if err := evict(ctx, c, pods[1].Name); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evicting %s while the replacement is not Ready = %v, want 429 TooManyRequests", pods[1].Name, err)
	}

	var replacement *corev1.Pod
	poll(t, "a replacement pod", func(ctx context.Context) (bool, string, error) {
		now, err := activePods(ctx, c)
		for i, p := range now {
			if p.Name != pods[0].Name && p.Name != pods[1].Name && p.Name != pods[2].Name {
				replacement = &now[i]
			}
		}
		return replacement != nil, fmt.Sprintf("%d pods", len(now)), err
	})
	setPodStatus(t, c, replacement, corev1.PodRunning, true)
	budgetIs(t, c, "a disruption allowed again", policyv1.PodDisruptionBudgetStatus{
		ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1}, policyv1.SufficientPodsReason)
	if err := evict(ctx, c, pods[1].Name); err != nil {
		t.Fatalf("evicting %s once the replacement is Ready: %v", pods[1].Name, err)
	}
	if _, err := c.CoreV1().Pods(pdbNS).Get(ctx, pods[1].Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the evicted pod %s is still there: %v", pods[1].Name, err)
	}

	if n := metricValue(t, cm, "controller_sync_total", map[string]string{"controller": disruption.ControllerName, "result": "success"}); n == 0 {
		t.Error("controller_sync_total has no successful disruption-controller sync")
	}
	if n := metricValue(t, cm, "workqueue_adds_total", map[string]string{"name": "disruption"}); n == 0 {
		t.Error("workqueue_adds_total has nothing for the disruption queue")
	}
}

// A pod whose controller has no scale the controller can read makes the
// budget fail safe: no disruption allowed, reason SyncFailed, and the
// eviction is refused.
func TestDisruptionBudgetFailsSafe(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, nil)
	startCM(t, ts, func(o *cmapp.Options) { o.Controllers = []string{"disruption"} })
	c, ctx := ts.Client, context.Background()
	namespace(t, c, pdbNS)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan-ish", Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "missing", UID: "no-such-uid", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "busybox"}}},
	}
	created, err := c.CoreV1().Pods(pdbNS).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setPodStatus(t, c, created, corev1.PodRunning, true)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	if _, err := c.PolicyV1().PodDisruptionBudgets(pdbNS).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the SyncFailed condition", func(ctx context.Context) (bool, string, error) {
		p, err := c.PolicyV1().PodDisruptionBudgets(pdbNS).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		cond := apimeta.FindStatusCondition(p.Status.Conditions, policyv1.DisruptionAllowedCondition)
		return cond != nil && cond.Reason == policyv1.SyncFailedReason && cond.Status == metav1.ConditionFalse &&
			p.Status.DisruptionsAllowed == 0, fmt.Sprintf("%+v", p.Status), nil
	})
	if err := evict(ctx, c, "orphan-ish"); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evicting under a failed budget = %v, want 429 TooManyRequests", err)
	}
}

// A DisruptionTarget condition that no deletion followed is set back to
// False once it is older than the stale timeout.
func TestStaleDisruptionTargetReset(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, nil)
	startCM(t, ts, func(o *cmapp.Options) { o.Controllers = []string{"disruption"} })
	c, ctx := ts.Client, context.Background()
	namespace(t, c, pdbNS)

	for _, name := range []string{"stale", "fresh"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
		}
		created, err := c.CoreV1().Pods(pdbNS).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setPodStatus(t, c, created, corev1.PodRunning, true)
		age := time.Second
		if name == "stale" {
			age = disruption.StalePodDisruptionTimeout + time.Minute
		}
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := c.CoreV1().Pods(pdbNS).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Status.Conditions = append(cur.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
				Status: corev1.ConditionTrue, Reason: "DeletionByTaintManager", LastTransitionTime: metav1.NewTime(time.Now().Add(-age))})
			_, err = c.CoreV1().Pods(pdbNS).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	condition := func(ctx context.Context, name string) (*corev1.PodCondition, error) {
		p, err := c.CoreV1().Pods(pdbNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
				return &p.Status.Conditions[i], nil
			}
		}
		return nil, nil
	}
	poll(t, "the stale condition reset to False", func(ctx context.Context) (bool, string, error) {
		cond, err := condition(ctx, "stale")
		return cond != nil && cond.Status == corev1.ConditionFalse, fmt.Sprintf("%+v", cond), err
	})
	cond, err := condition(ctx, "fresh")
	if err != nil {
		t.Fatal(err)
	}
	if cond == nil || cond.Status != corev1.ConditionTrue {
		t.Fatalf("the fresh condition was touched: %+v", cond)
	}
}

// A pod whose controller is a kind the controller has no lister for (here
// a Deployment owning pods directly) is counted through the owner's scale
// subresource.
func TestDisruptionBudgetReadsScaleSubresource(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, nil)
	startCM(t, ts, func(o *cmapp.Options) { o.Controllers = []string{"disruption"} })
	c, ctx := ts.Client, context.Background()
	namespace(t, c, pdbNS)

	labels := map[string]string{"app": "web"}
	d, err := c.AppsV1().Deployments(pdbNS).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "busybox"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web-a", "web-b"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "busybox"}}},
		}
		created, err := c.CoreV1().Pods(pdbNS).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setPodStatus(t, c, created, corev1.PodRunning, true)
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromString("50%")),
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
		},
	}
	if _, err := c.PolicyV1().PodDisruptionBudgets(pdbNS).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The scale says 4; half of them may be unavailable: 2 must be healthy.
	budgetIs(t, c, "the scale subresource's replicas expected", policyv1.PodDisruptionBudgetStatus{
		ExpectedPods: 4, CurrentHealthy: 2, DesiredHealthy: 2, DisruptionsAllowed: 0}, policyv1.InsufficientPodsReason)
}
