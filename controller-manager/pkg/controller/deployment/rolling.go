package deployment

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/klog/v2"
)

// rolloutRolling moves d towards its new ReplicaSet one step: scale the new
// ReplicaSet up within maxSurge, or else the old ones down within
// maxUnavailable; once complete, clean up old revisions.
func (c *Controller) rolloutRolling(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true)
	if err != nil {
		return err
	}
	allRSs := append(oldRSs, newRS)
	scaledUp, err := c.reconcileNewReplicaSet(ctx, allRSs, newRS, d)
	if err != nil {
		return err
	}
	if scaledUp {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	scaledDown, err := c.reconcileOldReplicaSets(ctx, allRSs, filterActive(oldRSs), newRS, d)
	if err != nil {
		return err
	}
	if scaledDown {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	if DeploymentComplete(d, &d.Status) {
		if err := c.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, allRSs, newRS, d)
}

// reconcileNewReplicaSet scales the new ReplicaSet towards d's replicas
// as far as maxSurge allows.
func (c *Controller) reconcileNewReplicaSet(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	cur := replicas(newRS.Spec.Replicas)
	if cur == *d.Spec.Replicas {
		return false, nil
	}
	if cur > *d.Spec.Replicas {
		scaled, _, err := c.scaleReplicaSetAndRecordEvent(ctx, newRS, *d.Spec.Replicas, d)
		return scaled, err
	}
	want, err := NewRSNewReplicas(d, allRSs, newRS)
	if err != nil {
		return false, err
	}
	scaled, _, err := c.scaleReplicaSetAndRecordEvent(ctx, newRS, want, d)
	return scaled, err
}

// reconcileOldReplicaSets scales old ReplicaSets down as far as
// maxUnavailable allows: first their unhealthy replicas, then healthy
// ones.
func (c *Controller) reconcileOldReplicaSets(ctx context.Context, allRSs, oldRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	if replicaCount(oldRSs) == 0 {
		return false, nil
	}
	allPods := replicaCount(allRSs)
	minAvailable := *d.Spec.Replicas - MaxUnavailable(d)
	newRSUnavailable := replicas(newRS.Spec.Replicas) - newRS.Status.AvailableReplicas
	maxScaledDown := allPods - minAvailable - newRSUnavailable
	klog.FromContext(ctx).V(4).Info("Reconciling old replica sets", "deployment", klog.KObj(d),
		"allPods", allPods, "minAvailable", minAvailable, "newRSUnavailable", newRSUnavailable, "maxScaledDown", maxScaledDown)
	if maxScaledDown <= 0 {
		return false, nil
	}
	oldRSs, cleaned, err := c.cleanupUnhealthyReplicas(ctx, oldRSs, d, maxScaledDown)
	if err != nil {
		return false, err
	}
	allRSs = append(oldRSs, newRS)
	scaledDown, err := c.scaleDownOldReplicaSetsForRollingUpdate(ctx, allRSs, oldRSs, d)
	if err != nil {
		return false, err
	}
	return cleaned+scaledDown > 0, nil
}

// cleanupUnhealthyReplicas scales old ReplicaSets down by their unavailable
// replicas, oldest first, at most maxCleanup in all.
func (c *Controller) cleanupUnhealthyReplicas(ctx context.Context, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment, maxCleanup int32) ([]*appsv1.ReplicaSet, int32, error) {
	sort.Sort(byCreationTimestamp(oldRSs))
	var total int32
	for i, rs := range oldRSs {
		if total >= maxCleanup {
			break
		}
		cur := replicas(rs.Spec.Replicas)
		if cur == 0 || cur == rs.Status.AvailableReplicas {
			continue
		}
		down := min(maxCleanup-total, cur-rs.Status.AvailableReplicas)
		if down < 0 {
			// More available than wanted: nothing unhealthy to remove.
			continue
		}
		_, updated, err := c.scaleReplicaSetAndRecordEvent(ctx, rs, cur-down, d)
		if err != nil {
			return nil, total, err
		}
		total += down
		oldRSs[i] = updated
	}
	return oldRSs, total, nil
}

// scaleDownOldReplicaSetsForRollingUpdate scales old ReplicaSets down,
// oldest first, by as many replicas as are available beyond d's minimum.
func (c *Controller) scaleDownOldReplicaSetsForRollingUpdate(ctx context.Context, allRSs, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) (int32, error) {
	minAvailable := *d.Spec.Replicas - MaxUnavailable(d)
	available := boundedAvailableCount(allRSs)
	if available <= minAvailable {
		return 0, nil
	}
	sort.Sort(byCreationTimestamp(oldRSs))
	toScaleDown := available - minAvailable
	var total int32
	for _, rs := range oldRSs {
		if total >= toScaleDown {
			break
		}
		cur := replicas(rs.Spec.Replicas)
		if cur == 0 {
			continue
		}
		down := min(cur, toScaleDown-total)
		if cur-down > cur {
			return total, fmt.Errorf("when scaling down old replica set, got invalid request to scale down %s/%s %d -> %d", rs.Namespace, rs.Name, cur, cur-down)
		}
		if _, _, err := c.scaleReplicaSetAndRecordEvent(ctx, rs, cur-down, d); err != nil {
			return total, err
		}
		total += down
	}
	return total, nil
}

// boundedAvailableCount sums the available replicas of rsList, counting
// for each ReplicaSet at most its spec.replicas. Upstream sums
// status.availableReplicas alone; but a ReplicaSet just scaled down still
// reports the pods it is about to delete as available, and counting them
// could take availability below the minimum. A ReplicaSet deletes
// unavailable pods first, so min(available, replicas) is what will stay.
func boundedAvailableCount(rsList []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rsList {
		if rs != nil {
			n += min(rs.Status.AvailableReplicas, replicas(rs.Spec.Replicas))
		}
	}
	return n
}
