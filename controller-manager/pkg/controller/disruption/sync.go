package disruption

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

// sync brings the status of the budget keyed key up to date. A failure
// other than a write conflict sets the fail-safe status (no disruptions
// allowed, reason SyncFailed) and is retried with back-off.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	pdb, err := c.pdbLister.PodDisruptionBudgets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("PodDisruptionBudget has been deleted", "podDisruptionBudget", key)
		return nil
	}
	if err != nil {
		return err
	}
	err = c.trySync(ctx, pdb)
	if err == nil || apierrors.IsConflict(err) || ctx.Err() != nil {
		// A conflict is retried without the fail-safe; so is a sync cut
		// short by shutdown.
		return err
	}
	logger.Error(err, "Failed to sync PodDisruptionBudget", "podDisruptionBudget", klog.KObj(pdb))
	if fsErr := c.failSafe(ctx, pdb, err); fsErr != nil {
		return errors.Join(err, fsErr)
	}
	return err
}

func (c *Controller) trySync(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	pods, err := c.podsFor(pdb)
	if err != nil {
		c.event(pdb, corev1.EventTypeWarning, "NoPods", "Failed to get pods: %v", err)
		return err
	}
	if len(pods) == 0 {
		c.event(pdb, corev1.EventTypeNormal, "NoPods", "No matching pods found")
	}
	expected, desired, unmanaged, err := c.expectedPodCount(ctx, pdb, pods)
	if err != nil {
		c.event(pdb, corev1.EventTypeWarning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: %v", err)
		return err
	}
	if len(unmanaged) > 0 {
		klog.FromContext(ctx).V(4).Info("Pods without a controller are selected by the PodDisruptionBudget",
			"podDisruptionBudget", klog.KObj(pdb), "pods", unmanaged)
		c.event(pdb, corev1.EventTypeWarning, "UnmanagedPods", "Pods selected by this PodDisruptionBudget (selector: %v) were found "+
			"to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. "+
			"To account for these pods please set \".spec.minAvailable\" "+
			"field of the PDB to an integer value.", pdb.Spec.Selector)
	}
	now := c.clock.Now()
	disrupted, recheck := c.disruptedPodMap(ctx, pods, pdb, now)
	healthy := countHealthyPods(pods, disrupted, now)
	if err := c.updateStatus(ctx, pdb, healthy, desired, expected, disrupted); err != nil {
		return err
	}
	if !recheck.IsZero() {
		key, _ := cache.MetaNamespaceKeyFunc(pdb)
		c.queue.AddAfter(key, recheck.Sub(now))
	}
	return nil
}

// podsFor lists the pods of the budget's namespace its selector matches
// (an empty selector matches every pod, as in policy/v1).
func (c *Controller) podsFor(pdb *policyv1.PodDisruptionBudget) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil, err
	}
	return c.podLister.Pods(pdb.Namespace).List(sel)
}

// expectedPodCount is upstream's getExpectedPodCount: with maxUnavailable
// or a percentage minAvailable, the controllers' scale is what is expected
// and the percentage is rounded up; with an integer minAvailable, the
// number of selected pods.
func (c *Controller) expectedPodCount(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int32, unmanaged []string, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		expected, unmanaged, err = c.expectedScale(ctx, pods)
		if err != nil {
			return 0, 0, nil, err
		}
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, nil, err
		}
		desired = max(expected-int32(maxUnavailable), 0)
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		desired = pdb.Spec.MinAvailable.IntVal
		expected = int32(len(pods))
	case pdb.Spec.MinAvailable != nil:
		expected, unmanaged, err = c.expectedScale(ctx, pods)
		if err != nil {
			return 0, 0, nil, err
		}
		minAvailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return 0, 0, nil, err
		}
		desired = int32(minAvailable)
	}
	return expected, desired, unmanaged, nil
}

// disruptedPodMap keeps the disruptedPods entries of pods that still exist,
// are not being deleted and were evicted less than DeletionTimeout ago;
// recheck is when the first kept entry expires.
func (c *Controller) disruptedPodMap(ctx context.Context, pods []*corev1.Pod, pdb *policyv1.PodDisruptionBudget, now time.Time) (map[string]metav1.Time, time.Time) {
	out := map[string]metav1.Time{}
	var recheck time.Time
	if pdb.Status.DisruptedPods == nil {
		return out, recheck
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		at, ok := pdb.Status.DisruptedPods[pod.Name]
		if !ok {
			continue
		}
		deadline := at.Add(DeletionTimeout)
		if deadline.Before(now) {
			klog.FromContext(ctx).V(1).Info("Pod was expected to be deleted but it was not, updating the PodDisruptionBudget",
				"pod", klog.KObj(pod), "podDisruptionBudget", klog.KObj(pdb))
			if c.recorder != nil {
				c.recorder.Eventf(pod, corev1.EventTypeWarning, "NotDeleted", "Pod was expected by PDB %s/%s to be deleted but it wasn't",
					pdb.Namespace, pdb.Name)
			}
			continue
		}
		if recheck.IsZero() || deadline.Before(recheck) {
			recheck = deadline
		}
		out[pod.Name] = at
	}
	return out, recheck
}

// countHealthyPods counts the Ready pods that are neither being deleted nor
// recently evicted.
func countHealthyPods(pods []*corev1.Pod, disrupted map[string]metav1.Time, now time.Time) int32 {
	var n int32
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if at, ok := disrupted[pod.Name]; ok && at.Add(DeletionTimeout).After(now) {
			continue
		}
		if controllerutil.IsPodReady(pod) {
			n++
		}
	}
	return n
}

// updateStatus writes the computed status when it differs from the
// budget's, with the DisruptionAllowed condition to match.
func (c *Controller) updateStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget, healthy, desired, expected int32, disrupted map[string]metav1.Time) error {
	// No disruption while nothing is expected: a budget whose first pods
	// appear before this controller saw them stays safe.
	allowed := healthy - desired
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	st := pdb.Status
	if st.CurrentHealthy == healthy && st.DesiredHealthy == desired && st.ExpectedPods == expected &&
		st.DisruptionsAllowed == allowed && apiequality.Semantic.DeepEqual(st.DisruptedPods, disrupted) &&
		st.ObservedGeneration == pdb.Generation && conditionUpToDate(pdb) {
		return nil
	}
	updated := pdb.DeepCopy()
	updated.Status = policyv1.PodDisruptionBudgetStatus{
		CurrentHealthy:     healthy,
		DesiredHealthy:     desired,
		ExpectedPods:       expected,
		DisruptionsAllowed: allowed,
		DisruptedPods:      disrupted,
		ObservedGeneration: pdb.Generation,
		Conditions:         updated.Status.Conditions,
	}
	setDisruptionAllowedCondition(updated)
	_, err := c.client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return err
}

// setDisruptionAllowedCondition is upstream's
// UpdateDisruptionAllowedCondition.
func setDisruptionAllowedCondition(pdb *policyv1.PodDisruptionBudget) {
	if pdb.Status.Conditions == nil {
		pdb.Status.Conditions = []metav1.Condition{}
	}
	cond := metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             policyv1.InsufficientPodsReason,
		ObservedGeneration: pdb.Status.ObservedGeneration,
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	}
	apimeta.SetStatusCondition(&pdb.Status.Conditions, cond)
}

// conditionUpToDate is upstream's ConditionsAreUpToDate.
func conditionUpToDate(pdb *policyv1.PodDisruptionBudget) bool {
	cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if cond == nil || pdb.Status.ObservedGeneration != pdb.Generation {
		return false
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		return cond.Status == metav1.ConditionTrue && cond.Reason == policyv1.SufficientPodsReason
	}
	return cond.Status == metav1.ConditionFalse && cond.Reason == policyv1.InsufficientPodsReason
}

// failSafe allows no disruption and says why, as upstream's failSafe; it
// writes nothing when the budget already says so.
func (c *Controller) failSafe(ctx context.Context, pdb *policyv1.PodDisruptionBudget, syncErr error) error {
	updated := pdb.DeepCopy()
	updated.Status.DisruptionsAllowed = 0
	if updated.Status.Conditions == nil {
		updated.Status.Conditions = []metav1.Condition{}
	}
	apimeta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             policyv1.SyncFailedReason,
		Message:            syncErr.Error(),
		ObservedGeneration: updated.Status.ObservedGeneration,
	})
	if apiequality.Semantic.DeepEqual(updated.Status, pdb.Status) {
		return nil
	}
	_, err := c.client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("writing the fail-safe status: %w", err)
	}
	return nil
}
