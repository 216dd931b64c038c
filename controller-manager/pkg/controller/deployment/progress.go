package deployment

import (
	"context"
	"fmt"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// syncRolloutStatus writes d's status during a rollout, with the
// Progressing condition when d has a progress deadline, and requeues d for
// the moment its deadline would pass.
func (c *Controller) syncRolloutStatus(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	status := c.calculateStatus(allRSs, newRS, d)
	if !HasProgressDeadline(d) {
		RemoveDeploymentCondition(&status, appsv1.DeploymentProgressing)
	}
	current := GetDeploymentCondition(d.Status, appsv1.DeploymentProgressing)
	complete := status.Replicas == status.UpdatedReplicas && current != nil && current.Reason == NewRSAvailableReason
	if HasProgressDeadline(d) && !complete {
		c.setProgressing(d, newRS, current, &status)
	}
	if failures := replicaFailures(allRSs, newRS); len(failures) > 0 {
		SetDeploymentCondition(&status, failures[0])
	} else {
		RemoveDeploymentCondition(&status, appsv1.DeploymentReplicaFailure)
	}
	if reflect.DeepEqual(d.Status, status) {
		c.requeueStuckDeployment(d, status)
		return nil
	}
	d.Status = status
	return c.updateStatus(ctx, d)
}

// setProgressing sets the Progressing condition of status: the rollout
// completed, made progress, or timed out.
func (c *Controller) setProgressing(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, current *appsv1.DeploymentCondition, status *appsv1.DeploymentStatus) {
	now := c.clock.Now()
	subject := func(verb string) string {
		if newRS != nil {
			return fmt.Sprintf("ReplicaSet %q %s", newRS.Name, verb)
		}
		return fmt.Sprintf("Deployment %q %s", d.Name, verb)
	}
	switch {
	case DeploymentComplete(d, status):
		SetDeploymentCondition(status, *NewDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue,
			NewRSAvailableReason, subject("has successfully progressed."), now))
	case DeploymentProgressing(d, status):
		cond := NewDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue,
			ReplicaSetUpdatedReason, subject("is progressing."), now)
		// Progress refreshes lastUpdateTime even when the reason stays
		// the same; the transition time is kept while the status is True.
		if current != nil {
			if current.Status == corev1.ConditionTrue {
				cond.LastTransitionTime = current.LastTransitionTime
			}
			RemoveDeploymentCondition(status, appsv1.DeploymentProgressing)
		}
		SetDeploymentCondition(status, *cond)
	case DeploymentTimedOut(d, status, now):
		SetDeploymentCondition(status, *NewDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse,
			TimedOutReason, subject("has timed out progressing."), now))
	}
}

// replicaFailures returns the ReplicaFailure conditions of the new
// ReplicaSet, or else of the others, as Deployment conditions.
func replicaFailures(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) []appsv1.DeploymentCondition {
	collect := func(rsList []*appsv1.ReplicaSet) []appsv1.DeploymentCondition {
		var out []appsv1.DeploymentCondition
		for _, rs := range rsList {
			if rs == nil {
				continue
			}
			for _, cond := range rs.Status.Conditions {
				if cond.Type == appsv1.ReplicaSetReplicaFailure {
					out = append(out, replicaSetToDeploymentCondition(cond))
				}
			}
		}
		return out
	}
	if out := collect([]*appsv1.ReplicaSet{newRS}); len(out) > 0 {
		return out
	}
	return collect(allRSs)
}

// requeueStuckDeployment requeues d for when its progress deadline passes,
// if it is still rolling out; it returns the delay (-1: not requeued).
func (c *Controller) requeueStuckDeployment(d *appsv1.Deployment, status appsv1.DeploymentStatus) time.Duration {
	current := GetDeploymentCondition(d.Status, appsv1.DeploymentProgressing)
	if !HasProgressDeadline(d) || current == nil {
		return -1
	}
	if DeploymentComplete(d, &status) || current.Reason == TimedOutReason {
		return -1
	}
	after := current.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(c.clock.Now())
	if after < time.Second {
		c.enqueueRateLimited(d)
		return 0
	}
	// A second more avoids landing just before the deadline.
	c.enqueueAfter(d, after+time.Second)
	return after
}
