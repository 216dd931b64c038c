package deployment

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// rolloutRecreate scales every old ReplicaSet to zero, waits until none
// of their pods runs, then creates or scales up the new ReplicaSet.
func (c *Controller) rolloutRecreate(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	allRSs := append(oldRSs, newRS)
	scaledDown, err := c.scaleDownOldReplicaSetsForRecreate(ctx, filterActive(oldRSs), d)
	if err != nil {
		return err
	}
	if scaledDown {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	podMap, err := c.podsByReplicaSet(rsList)
	if err != nil {
		return err
	}
	if oldPodsRunning(newRS, oldRSs, podMap) {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	if newRS == nil {
		newRS, oldRSs, err = c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true)
		if err != nil {
			return err
		}
		allRSs = append(oldRSs, newRS)
	}
	if _, _, err := c.scaleReplicaSetAndRecordEvent(ctx, newRS, *d.Spec.Replicas, d); err != nil {
		return err
	}
	if DeploymentComplete(d, &d.Status) {
		if err := c.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, allRSs, newRS, d)
}

func (c *Controller) scaleDownOldReplicaSetsForRecreate(ctx context.Context, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	scaled := false
	for _, rs := range oldRSs {
		if replicas(rs.Spec.Replicas) == 0 {
			continue
		}
		ok, _, err := c.scaleReplicaSetAndRecordEvent(ctx, rs, 0, d)
		if err != nil {
			return false, err
		}
		scaled = scaled || ok
	}
	return scaled, nil
}

// oldPodsRunning reports whether any pod of an old ReplicaSet may still be
// running.
func oldPodsRunning(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet, podMap map[types.UID][]*corev1.Pod) bool {
	if actualReplicaCount(oldRSs) > 0 {
		return true
	}
	for uid, pods := range podMap {
		if newRS != nil && newRS.UID == uid {
			continue
		}
		for _, p := range pods {
			if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
				return true
			}
		}
	}
	return false
}
