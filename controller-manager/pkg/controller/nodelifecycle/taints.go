package nodelifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// Taints put by the controller.
var (
	UnreachableNoExecute = corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	NotReadyNoExecute    = corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}
)

// conditionTaints maps a node condition and status to the NoSchedule taint
// key it brings (upstream's nodeConditionToTaintKeyStatusMap).
var conditionTaints = map[corev1.NodeConditionType]map[corev1.ConditionStatus]string{
	corev1.NodeReady: {
		corev1.ConditionFalse:   corev1.TaintNodeNotReady,
		corev1.ConditionUnknown: corev1.TaintNodeUnreachable,
	},
	corev1.NodeMemoryPressure:     {corev1.ConditionTrue: corev1.TaintNodeMemoryPressure},
	corev1.NodeDiskPressure:       {corev1.ConditionTrue: corev1.TaintNodeDiskPressure},
	corev1.NodeNetworkUnavailable: {corev1.ConditionTrue: corev1.TaintNodeNetworkUnavailable},
	corev1.NodePIDPressure:        {corev1.ConditionTrue: corev1.TaintNodePIDPressure},
}

// noScheduleKeys are the NoSchedule taint keys the controller owns.
var noScheduleKeys = map[string]bool{
	corev1.TaintNodeNotReady: true, corev1.TaintNodeUnreachable: true, corev1.TaintNodeMemoryPressure: true,
	corev1.TaintNodeDiskPressure: true, corev1.TaintNodeNetworkUnavailable: true, corev1.TaintNodePIDPressure: true,
	corev1.TaintNodeUnschedulable: true,
}

// desiredNoScheduleTaints are the NoSchedule taints node's conditions and
// spec call for.
func desiredNoScheduleTaints(node *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, cond := range node.Status.Conditions {
		if key, ok := conditionTaints[cond.Type][cond.Status]; ok {
			out = append(out, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	if node.Spec.Unschedulable {
		out = append(out, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	}
	return out
}

// reconcileNoScheduleTaints makes the controller's NoSchedule taints match
// the node's conditions, and returns the node as it now is.
func (c *Controller) reconcileNoScheduleTaints(ctx context.Context, node *corev1.Node) (*corev1.Node, error) {
	desired := desiredNoScheduleTaints(node)
	var add []corev1.Taint
	for _, t := range desired {
		if !hasTaint(node, t) {
			add = append(add, t)
		}
	}
	var remove []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule && noScheduleKeys[t.Key] && !containsTaint(desired, t) {
			remove = append(remove, t)
		}
	}
	if len(add) == 0 && len(remove) == 0 {
		return node, nil
	}
	updated, err := c.updateTaints(ctx, node, add, remove)
	if err != nil || updated == nil {
		return node, err
	}
	return updated, nil
}

func hasTaint(node *corev1.Node, t corev1.Taint) bool { return containsTaint(node.Spec.Taints, t) }

func containsTaint(taints []corev1.Taint, t corev1.Taint) bool {
	for i := range taints {
		if taints[i].MatchTaint(&t) {
			return true
		}
	}
	return false
}

// swapTaints adds and removes taints on the node.
func (c *Controller) swapTaints(ctx context.Context, cached *corev1.Node, add, remove []corev1.Taint) error {
	_, err := c.updateTaints(ctx, cached, add, remove)
	return err
}

// updateTaints adds and removes taints on the node, on the cached copy
// first and on a fresh one after a conflict, and returns the updated node
// (nil when nothing was written). NoExecute taints get TimeAdded.
func (c *Controller) updateTaints(ctx context.Context, cached *corev1.Node, add, remove []corev1.Taint) (*corev1.Node, error) {
	first := true
	var updated *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		node := cached
		if !first {
			fresh, err := c.client.CoreV1().Nodes().Get(ctx, cached.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			node = fresh
		}
		first = false
		out, changed := withTaints(node, add, remove, metav1.NewTime(c.clock.Now()))
		if !changed {
			return nil
		}
		u, err := c.client.CoreV1().Nodes().Update(ctx, out, metav1.UpdateOptions{})
		updated = u
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("updating the taints of node %s: %w", cached.Name, err)
	}
	return updated, nil
}

// withTaints returns a copy of node with add added and remove removed.
func withTaints(node *corev1.Node, add, remove []corev1.Taint, now metav1.Time) (*corev1.Node, bool) {
	var taints []corev1.Taint
	changed := false
	for _, t := range node.Spec.Taints {
		if containsTaint(remove, t) {
			changed = true
			continue
		}
		taints = append(taints, t)
	}
	for _, t := range add {
		if containsTaint(taints, t) {
			continue
		}
		if t.Effect == corev1.TaintEffectNoExecute && t.TimeAdded == nil {
			t.TimeAdded = &now
		}
		taints = append(taints, t)
		changed = true
	}
	if !changed {
		return node, false
	}
	out := node.DeepCopy()
	out.Spec.Taints = taints
	return out, true
}

// processTaintBasedEviction queues a not-ready node for its NoExecute taint
// (rate limited), swaps not-ready and unreachable when the state changed
// between them, and removes both from a Ready node at once.
func (c *Controller) processTaintBasedEviction(ctx context.Context, node *corev1.Node, zone string) error {
	ready := readyCondition(&node.Status)
	if ready == nil {
		return nil
	}
	switch ready.Status {
	case corev1.ConditionFalse:
		if hasTaint(node, UnreachableNoExecute) {
			return c.swapTaints(ctx, node, []corev1.Taint{NotReadyNoExecute}, []corev1.Taint{UnreachableNoExecute})
		}
		if !hasTaint(node, NotReadyNoExecute) {
			c.tainterFor(zone).add(node.Name)
		}
	case corev1.ConditionUnknown:
		if hasTaint(node, NotReadyNoExecute) {
			return c.swapTaints(ctx, node, []corev1.Taint{UnreachableNoExecute}, []corev1.Taint{NotReadyNoExecute})
		}
		if !hasTaint(node, UnreachableNoExecute) {
			c.tainterFor(zone).add(node.Name)
		}
	case corev1.ConditionTrue:
		return c.markNodeAsReachable(ctx, node)
	}
	return nil
}

// markNodeAsReachable removes the NoExecute taints and the node from the
// tainting queues.
func (c *Controller) markNodeAsReachable(ctx context.Context, node *corev1.Node) error {
	for _, t := range c.tainters {
		t.remove(node.Name)
	}
	if !hasTaint(node, UnreachableNoExecute) && !hasTaint(node, NotReadyNoExecute) {
		return nil
	}
	return c.swapTaints(ctx, node, nil, []corev1.Taint{UnreachableNoExecute, NotReadyNoExecute})
}
