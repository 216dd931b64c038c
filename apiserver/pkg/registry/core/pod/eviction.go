package pod

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
)

// maxDisruptedPods is upstream's bound on evictions the disruption
// controller has not confirmed yet.
const maxDisruptedPods = 2000

var pdbGR = schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}

// Evict is upstream's EvictionREST: the pod is deleted unless that would
// violate its PodDisruptionBudget, whose status.disruptionsAllowed is
// decremented (and status.disruptedPods recorded) with compare-and-swap
// before the pod goes.
func Evict(ctx context.Context, deps rest.EvictionDeps, ns, name string, opts *metav1.DeleteOptions, dry bool) error {
	s := deps.Pods
	obj, err := s.Get(ctx, ns, name)
	if err != nil {
		return err
	}
	pod := obj.(*corev1.Pod)
	// Pods that are finished, not yet running, or already going need no
	// budget.
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded ||
		pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodPending {
		return deleteEvicted(ctx, s, pod, opts, dry)
	}
	pdbs := deps.Budgets
	if pdbs == nil {
		return deleteEvicted(ctx, s, pod, opts, dry)
	}
	matching, err := matchingBudgets(ctx, pdbs, pod)
	if err != nil {
		return err
	}
	switch len(matching) {
	case 0:
		return deleteEvicted(ctx, s, pod, opts, dry)
	case 1:
	default:
		return apierrors.NewInternalError(errors.New("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."))
	}
	pdb := matching[0]
	if !podReady(pod) && unhealthyMayGo(pdb) {
		return deleteEvicted(ctx, s, pod, opts, dry)
	}
	if err := chargeBudget(ctx, pdbs, pdb, pod.Name, dry); err != nil {
		return err
	}
	return deleteEvicted(ctx, s, pod, opts, dry)
}

// deleteEvicted deletes an evicted pod after marking it, as upstream's
// addConditionAndDeletePod: the DisruptionTarget condition (reason
// EvictionByEvictionAPI) goes into its status first, so that what watches
// the pod (a Job's pod failure policy) knows why it ends.
func deleteEvicted(ctx context.Context, s rest.ObjectStore, pod *corev1.Pod, opts *metav1.DeleteOptions, dry bool) error {
	o := opts.DeepCopy()
	if o.Preconditions == nil {
		uid := pod.UID
		o.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if !dry {
		updated, _, err := s.Update(ctx, pod.Namespace, pod.Name, func(_ context.Context, cur runtime.Object, exists bool) (runtime.Object, error) {
			if !exists {
				return nil, apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
			}
			p := cur.(*corev1.Pod).DeepCopy()
			if uid := o.Preconditions.UID; uid != nil && *uid != "" && *uid != p.UID {
				return nil, apierrors.NewConflict(corev1.Resource("pods"), p.Name,
					fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s); the object might have been deleted and then recreated", *uid, p.UID))
			}
			if rv := o.Preconditions.ResourceVersion; rv != nil && *rv != "" && *rv != p.ResourceVersion {
				return nil, apierrors.NewConflict(corev1.Resource("pods"), p.Name,
					fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s); the object might have been modified", *rv, p.ResourceVersion))
			}
			updatePodCondition(&p.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"})
			return p, nil
		}, StatusStrategy, false)
		if err != nil {
			return err
		}
		if o.Preconditions.ResourceVersion != nil && *o.Preconditions.ResourceVersion != "" {
			// This update moved the version the caller named.
			rv := updated.(*corev1.Pod).ResourceVersion
			o.Preconditions.ResourceVersion = &rv
		}
	}
	_, _, err := s.Delete(ctx, pod.Namespace, pod.Name, o, dry)
	return err
}

// updatePodCondition sets c in st as upstream's podutil.UpdatePodCondition:
// the transition time moves only when the status does.
func updatePodCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	now := metav1.Now()
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status {
			c.LastTransitionTime = now
		}
		c.LastProbeTime = old.LastProbeTime
		*old = c
		return
	}
	c.LastTransitionTime = now
	st.Conditions = append(st.Conditions, c)
}

func matchingBudgets(ctx context.Context, pdbs rest.ObjectStore, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	list, err := pdbs.List(ctx, pod.Namespace, storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*policyv1.PodDisruptionBudget
	for i := range list.(*policyv1.PodDisruptionBudgetList).Items {
		pdb := &list.(*policyv1.PodDisruptionBudgetList).Items[i]
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out, nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// unhealthyMayGo: an unready pod may be evicted without using the budget
// when the policy is AlwaysAllow, or the budget is met (IfHealthyBudget).
func unhealthyMayGo(pdb *policyv1.PodDisruptionBudget) bool {
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
		return true
	}
	return pdb.Status.ObservedGeneration >= pdb.Generation && pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0
}

func tooManyRequests(cause string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	if err.ErrStatus.Details == nil {
		err.ErrStatus.Details = &metav1.StatusDetails{}
	}
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: cause})
	return err
}

// chargeBudget takes one disruption from the budget in a compare-and-swap
// on the PodDisruptionBudget, so two evictions cannot both take the last.
func chargeBudget(ctx context.Context, pdbs rest.ObjectStore, pdb *policyv1.PodDisruptionBudget, podName string, dry bool) error {
	check := func(cur *policyv1.PodDisruptionBudget) error {
		if cur.Status.ObservedGeneration < cur.Generation {
			err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
			err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
				Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", cur.Name)})
			return err
		}
		if cur.Status.DisruptionsAllowed < 0 {
			return apierrors.NewForbidden(pdbGR, cur.Name, errors.New("pdb disruptions allowed is negative"))
		}
		if len(cur.Status.DisruptedPods) > maxDisruptedPods {
			return apierrors.NewForbidden(pdbGR, cur.Name, errors.New("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
		}
		if cur.Status.DisruptionsAllowed == 0 {
			return tooManyRequests(fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", cur.Name, cur.Status.DesiredHealthy, cur.Status.CurrentHealthy))
		}
		return nil
	}
	if dry {
		return check(pdb)
	}
	_, err := pdbs.GuaranteedUpdate(ctx, pdb.Namespace, pdb.Name, nil, func(existing runtime.Object) (runtime.Object, error) {
		cur := existing.(*policyv1.PodDisruptionBudget).DeepCopy()
		if err := check(cur); err != nil {
			return nil, err
		}
		cur.Status.DisruptionsAllowed--
		if cur.Status.DisruptionsAllowed == 0 {
			setDisruptionAllowed(cur, false)
		}
		if cur.Status.DisruptedPods == nil {
			cur.Status.DisruptedPods = map[string]metav1.Time{}
		}
		cur.Status.DisruptedPods[podName] = metav1.NewTime(time.Now())
		return cur, nil
	})
	return err
}

// setDisruptionAllowed is upstream's pdbhelper.SetDisruptionAllowedCondition.
func setDisruptionAllowed(pdb *policyv1.PodDisruptionBudget, allowed bool) {
	cond := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, ObservedGeneration: pdb.Status.ObservedGeneration}
	if allowed {
		cond.Status, cond.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	} else {
		cond.Status, cond.Reason = metav1.ConditionFalse, policyv1.InsufficientPodsReason
	}
	for i, c := range pdb.Status.Conditions {
		if c.Type == cond.Type {
			if c.Status != cond.Status {
				cond.LastTransitionTime = metav1.NewTime(time.Now())
			} else {
				cond.LastTransitionTime = c.LastTransitionTime
			}
			pdb.Status.Conditions[i] = cond
			return
		}
	}
	cond.LastTransitionTime = metav1.NewTime(time.Now())
	pdb.Status.Conditions = append(pdb.Status.Conditions, cond)
}
