package statefulset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// completeRollingUpdate makes the update revision current once a rolling
// update has updated every replica and all are ready.
func completeRollingUpdate(set *appsv1.StatefulSet, status *appsv1.StatefulSetStatus) {
	if isRollingUpdate(set) && status.UpdatedReplicas == status.Replicas && status.ReadyReplicas == status.Replicas {
		status.CurrentReplicas = status.UpdatedReplicas
		status.CurrentRevision = status.UpdateRevision
	}
}

// inconsistentStatus reports whether status differs from set's.
func inconsistentStatus(set *appsv1.StatefulSet, status *appsv1.StatefulSetStatus) bool {
	collision := func(p *int32) int32 {
		if p == nil {
			return 0
		}
		return *p
	}
	return status.ObservedGeneration > set.Status.ObservedGeneration ||
		status.Replicas != set.Status.Replicas ||
		status.CurrentReplicas != set.Status.CurrentReplicas ||
		status.ReadyReplicas != set.Status.ReadyReplicas ||
		status.UpdatedReplicas != set.Status.UpdatedReplicas ||
		status.CurrentRevision != set.Status.CurrentRevision ||
		status.AvailableReplicas != set.Status.AvailableReplicas ||
		status.UpdateRevision != set.Status.UpdateRevision ||
		collision(status.CollisionCount) != collision(set.Status.CollisionCount)
}

// updateStatefulSetStatus completes a finished rolling update in status and
// writes it when it differs from set's, retrying conflicts on a fresh
// copy.
func (c *Controller) updateStatefulSetStatus(ctx context.Context, set *appsv1.StatefulSet, status *appsv1.StatefulSetStatus) error {
	completeRollingUpdate(set, status)
	if !inconsistentStatus(set, status) {
		return nil
	}
	klog.FromContext(ctx).V(4).Info("Updating status", "statefulSet", klog.KObj(set),
		"replicas", status.Replicas, "readyReplicas", status.ReadyReplicas, "currentReplicas", status.CurrentReplicas,
		"updatedReplicas", status.UpdatedReplicas, "availableReplicas", status.AvailableReplicas,
		"currentRevision", status.CurrentRevision, "updateRevision", status.UpdateRevision)
	set = set.DeepCopy()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		// The controller sets no conditions; others' are kept.
		conditions := set.Status.Conditions
		set.Status = *status
		set.Status.Conditions = conditions
		_, err := c.client.AppsV1().StatefulSets(set.Namespace).UpdateStatus(ctx, set, metav1.UpdateOptions{})
		if err == nil || !apierrors.IsConflict(err) {
			return err
		}
		fresh, getErr := c.client.AppsV1().StatefulSets(set.Namespace).Get(ctx, set.Name, metav1.GetOptions{})
		if getErr != nil {
			return getErr
		}
		if fresh.UID != set.UID {
			return fmt.Errorf("StatefulSet %s/%s was replaced", set.Namespace, set.Name)
		}
		set = fresh
		return err
	})
	if err != nil {
		return fmt.Errorf("updating status of StatefulSet %s/%s: %w", set.Namespace, set.Name, err)
	}
	return nil
}
