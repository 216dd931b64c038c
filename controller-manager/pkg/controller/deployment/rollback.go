package deployment

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// rollbackTo returns the revision d's RollbackToAnnotation asks for, or nil
// when there is none or it is not a number.
func rollbackTo(d *appsv1.Deployment) *int64 {
	v, ok := d.Annotations[RollbackToAnnotation]
	if !ok || v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// rollback copies the template of the requested revision (0: the previous
// one) into d and clears the request. The next sync then finds that old
// ReplicaSet as the new one and gives it the next revision.
//
// kubectl rollout undo (apps/v1) does not use this annotation: it copies
// the old ReplicaSet's template into the Deployment itself, which leads to
// the same next sync.
func (c *Controller) rollback(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true)
	if err != nil {
		return err
	}
	allRSs := append(oldRSs, newRS)
	revision := *rollbackTo(d)
	if revision == 0 {
		if revision = LastRevision(allRSs); revision == 0 {
			c.recorder.Eventf(d, corev1.EventTypeWarning, RollbackRevisionNotFound, "Unable to find last revision.")
			return c.updateAndClearRollbackTo(ctx, d)
		}
	}
	for _, rs := range allRSs {
		if rs == nil {
			continue
		}
		if v, err := Revision(rs); err != nil || v != revision {
			continue
		}
		done, err := c.rollbackToTemplate(ctx, d, rs)
		if done && err == nil {
			c.recorder.Eventf(d, corev1.EventTypeNormal, RollbackDone, "Rolled back deployment %q to revision %d", d.Name, revision)
		}
		return err
	}
	c.recorder.Eventf(d, corev1.EventTypeWarning, RollbackRevisionNotFound, "Unable to find the revision to rollback to.")
	return c.updateAndClearRollbackTo(ctx, d)
}

func (c *Controller) rollbackToTemplate(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet) (bool, error) {
	done := false
	if !EqualIgnoreHash(&d.Spec.Template, &rs.Spec.Template) {
		klog.FromContext(ctx).V(4).Info("Rolling back deployment to old template spec", "deployment", klog.KObj(d), "replicaSet", klog.KObj(rs))
		d.Spec.Template.ObjectMeta = *rs.Spec.Template.ObjectMeta.DeepCopy()
		d.Spec.Template.Spec = *rs.Spec.Template.Spec.DeepCopy()
		delete(d.Spec.Template.Labels, DefaultDeploymentUniqueLabelKey)
		// The old ReplicaSet's annotations go back to the Deployment, or
		// the current ones would be copied onto it after the rollback.
		setDeploymentAnnotationsTo(d, rs)
		done = true
	} else {
		c.recorder.Eventf(d, corev1.EventTypeWarning, RollbackTemplateUnchanged,
			"The rollback revision contains the same template as current deployment %q", d.Name)
	}
	return done, c.updateAndClearRollbackTo(ctx, d)
}

func (c *Controller) updateAndClearRollbackTo(ctx context.Context, d *appsv1.Deployment) error {
	delete(d.Annotations, RollbackToAnnotation)
	_, err := c.client.AppsV1().Deployments(d.Namespace).Update(ctx, d, metav1.UpdateOptions{})
	return err
}
