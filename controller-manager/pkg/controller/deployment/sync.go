package deployment

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

// sync brings the Deployment keyed key to its desired state.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	cached, err := c.dLister.Deployments(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(2).Info("Deployment has been deleted", "deployment", key)
		return nil
	}
	if err != nil {
		return err
	}
	d := cached.DeepCopy()
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = new(int32)
		*d.Spec.Replicas = 1
	}
	if d.Spec.Selector == nil || (len(d.Spec.Selector.MatchLabels) == 0 && len(d.Spec.Selector.MatchExpressions) == 0) {
		c.recorder.Eventf(d, corev1.EventTypeWarning, SelectingAllReason, "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			return c.updateStatus(ctx, d)
		}
		return nil
	}
	rsList, err := c.claimReplicaSets(ctx, d)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return c.syncStatusOnly(ctx, d, rsList)
	}
	if err := c.checkPausedConditions(ctx, d); err != nil {
		return err
	}
	if d.Spec.Paused {
		return c.syncScale(ctx, d, rsList)
	}
	if rollbackTo(d) != nil {
		return c.rollback(ctx, d, rsList)
	}
	scaling, err := c.isScalingEvent(ctx, d, rsList)
	if err != nil {
		return err
	}
	if scaling {
		return c.syncScale(ctx, d, rsList)
	}
	switch d.Spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		return c.rolloutRecreate(ctx, d, rsList)
	case appsv1.RollingUpdateDeploymentStrategyType:
		return c.rolloutRolling(ctx, d, rsList)
	}
	return fmt.Errorf("unexpected deployment strategy type: %s", d.Spec.Strategy.Type)
}

// claimReplicaSets returns the ReplicaSets d owns after adopting matching
// orphans and releasing the ones that stopped matching.
func (c *Controller) claimReplicaSets(ctx context.Context, d *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s has invalid label selector: %w", d.Namespace, d.Name, err)
	}
	owned, err := controllerutil.ByController[*appsv1.ReplicaSet](c.rsIndexer, d.UID)
	if err != nil {
		return nil, err
	}
	orphans, err := controllerutil.Orphans[*appsv1.ReplicaSet](c.rsIndexer, d.Namespace)
	if err != nil {
		return nil, err
	}
	canAdopt := controllerutil.RecheckDeletionTimestamp(d.UID, func(ctx context.Context) (metav1.Object, error) {
		return c.client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	})
	m := controllerutil.NewReplicaSetRefManager(c.client, d, controllerKind.GroupVersion().String(), controllerKind.Kind, selector, canAdopt)
	return m.Claim(ctx, append(owned, orphans...))
}

// podsByReplicaSet returns the pods of each ReplicaSet of rsList.
func (c *Controller) podsByReplicaSet(rsList []*appsv1.ReplicaSet) (map[types.UID][]*corev1.Pod, error) {
	out := make(map[types.UID][]*corev1.Pod, len(rsList))
	for _, rs := range rsList {
		pods, err := controllerutil.ByController[*corev1.Pod](c.podIndexer, rs.UID)
		if err != nil {
			return nil, err
		}
		out[rs.UID] = pods
	}
	return out, nil
}

// updateStatus writes d's status (and, as upstream's status endpoint
// allows, its revision annotation), then takes the server's copy into d so
// later writes of this sync do not conflict with this one.
func (c *Controller) updateStatus(ctx context.Context, d *appsv1.Deployment) error {
	revision, hasRevision := d.Annotations[RevisionAnnotation]
	updated, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	if hasRevision && updated.Annotations[RevisionAnnotation] != revision {
		// An API server whose status endpoint keeps the old annotations:
		// write the revision with a patch of its own.
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, RevisionAnnotation, revision)
		updated, err = c.client.AppsV1().Deployments(d.Namespace).Patch(ctx, d.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		if err != nil {
			return err
		}
	}
	spec := d.Spec
	*d = *updated
	// The spec is the one this sync works with (defaulted replicas).
	d.Spec = spec
	return nil
}

// checkPausedConditions records a pause or resume in the Progressing
// condition.
func (c *Controller) checkPausedConditions(ctx context.Context, d *appsv1.Deployment) error {
	if !HasProgressDeadline(d) {
		return nil
	}
	cond := GetDeploymentCondition(d.Status, appsv1.DeploymentProgressing)
	if cond != nil && cond.Reason == TimedOutReason {
		// A timed-out deployment stays so until a new rollout.
		return nil
	}
	pausedCond := cond != nil && cond.Reason == PausedDeployReason
	switch {
	case d.Spec.Paused && !pausedCond:
		SetDeploymentCondition(&d.Status, *NewDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown,
			PausedDeployReason, "Deployment is paused", c.clock.Now()))
	case !d.Spec.Paused && pausedCond:
		SetDeploymentCondition(&d.Status, *NewDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown,
			ResumedDeployReason, "Deployment is resumed", c.clock.Now()))
	default:
		return nil
	}
	return c.updateStatus(ctx, d)
}

// syncStatusOnly writes the status of a Deployment being deleted.
func (c *Controller) syncStatusOnly(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	return c.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// syncScale handles a paused Deployment or a change of replicas: it
// scales the ReplicaSets without rolling out.
func (c *Controller) syncScale(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	if err := c.scale(ctx, d, newRS, oldRSs); err != nil {
		return err
	}
	if d.Spec.Paused && rollbackTo(d) == nil {
		if err := c.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return c.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// isScalingEvent reports whether d's replicas differ from what its active
// ReplicaSets were last scaled for.
func (c *Controller) isScalingEvent(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) (bool, error) {
	newRS, oldRSs, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return false, err
	}
	for _, rs := range filterActive(append(oldRSs, newRS)) {
		desired, ok := intAnnotation(rs, DesiredReplicasAnnotation)
		if ok && desired != *d.Spec.Replicas {
			return true, nil
		}
	}
	return false, nil
}

// getAllReplicaSetsAndSyncRevision returns the new ReplicaSet (creating it
// when createIfNotExisted) and the old ones, and syncs the revisions.
func (c *Controller) getAllReplicaSetsAndSyncRevision(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, createIfNotExisted bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	_, allOld := FindOldReplicaSets(d, rsList)
	newRS, err := c.getNewReplicaSet(ctx, d, rsList, allOld, createIfNotExisted)
	if err != nil {
		return nil, nil, err
	}
	return newRS, allOld, nil
}

// getNewReplicaSet returns the ReplicaSet of d's template, giving it the
// next revision when it is an old one made new again (a rollback); with
// createIfNotExisted it creates it when there is none.
func (c *Controller) getNewReplicaSet(ctx context.Context, d *appsv1.Deployment, rsList, oldRSs []*appsv1.ReplicaSet, createIfNotExisted bool) (*appsv1.ReplicaSet, error) {
	existing := FindNewReplicaSet(d, rsList)
	newRevision := strconv.FormatInt(MaxRevision(oldRSs)+1, 10)
	if existing != nil {
		return c.syncExistingNewReplicaSet(ctx, d, existing, newRevision)
	}
	if !createIfNotExisted {
		return nil, nil
	}
	return c.createNewReplicaSet(ctx, d, oldRSs, newRevision)
}

func (c *Controller) syncExistingNewReplicaSet(ctx context.Context, d *appsv1.Deployment, existing *appsv1.ReplicaSet, newRevision string) (*appsv1.ReplicaSet, error) {
	rs := existing.DeepCopy()
	annotationsChanged := SetNewReplicaSetAnnotations(d, rs, newRevision, true)
	if annotationsChanged || rs.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
		rs.Spec.MinReadySeconds = d.Spec.MinReadySeconds
		return c.client.AppsV1().ReplicaSets(rs.Namespace).Update(ctx, rs, metav1.UpdateOptions{})
	}
	needsUpdate := SetDeploymentRevision(d, rs.Annotations[RevisionAnnotation])
	if HasProgressDeadline(d) && GetDeploymentCondition(d.Status, appsv1.DeploymentProgressing) == nil {
		msg := fmt.Sprintf("Found new replica set %q", rs.Name)
		SetDeploymentCondition(&d.Status, *NewDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, FoundNewRSReason, msg, c.clock.Now()))
		needsUpdate = true
	}
	if needsUpdate {
		if err := c.updateStatus(ctx, d); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

func (c *Controller) createNewReplicaSet(ctx context.Context, d *appsv1.Deployment, oldRSs []*appsv1.ReplicaSet, newRevision string) (*appsv1.ReplicaSet, error) {
	logger := klog.FromContext(ctx)
	template := *d.Spec.Template.DeepCopy()
	hash := ComputeHash(&template, d.Status.CollisionCount)
	template.Labels = cloneAndAddLabel(d.Spec.Template.Labels, DefaultDeploymentUniqueLabelKey, hash)
	newRS := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:            d.Name + "-" + hash,
			Namespace:       d.Namespace,
			OwnerReferences: []metav1.OwnerReference{*controllerutil.NewControllerRef(d, controllerKind.GroupVersion().String(), controllerKind.Kind)},
			Labels:          template.Labels,
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        new(int32),
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        cloneSelectorAndAddLabel(d.Spec.Selector, DefaultDeploymentUniqueLabelKey, hash),
			Template:        template,
		},
	}
	count, err := NewRSNewReplicas(d, append(oldRSs, newRS), newRS)
	if err != nil {
		return nil, err
	}
	*newRS.Spec.Replicas = count
	SetNewReplicaSetAnnotations(d, newRS, newRevision, false)
	created, err := c.client.AppsV1().ReplicaSets(d.Namespace).Create(ctx, newRS, metav1.CreateOptions{})
	alreadyExists := false
	switch {
	case apierrors.IsAlreadyExists(err):
		alreadyExists = true
		rs, getErr := c.rsLister.ReplicaSets(d.Namespace).Get(newRS.Name)
		if getErr != nil {
			return nil, getErr
		}
		if ref := metav1.GetControllerOfNoCopy(rs); ref != nil && ref.UID == d.UID && EqualIgnoreHash(&d.Spec.Template, &rs.Spec.Template) {
			// Ours, created by an earlier sync whose create this cache had
			// not seen.
			created, err = rs, nil
			break
		}
		// A hash collision: bump the collision count so the next sync
		// computes another name.
		if d.Status.CollisionCount == nil {
			d.Status.CollisionCount = new(int32)
		}
		before := *d.Status.CollisionCount
		*d.Status.CollisionCount++
		if uerr := c.updateStatus(ctx, d); uerr == nil {
			logger.V(2).Info("Found a hash collision for deployment - bumping collisionCount to resolve it",
				"deployment", klog.KObj(d), "oldCollisionCount", before, "newCollisionCount", *d.Status.CollisionCount)
		}
		return nil, err
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", newRS.Name, err)
		if HasProgressDeadline(d) {
			SetDeploymentCondition(&d.Status, *NewDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, FailedRSCreateReason, msg, c.clock.Now()))
			_ = c.updateStatus(ctx, d)
		}
		c.recorder.Event(d, corev1.EventTypeWarning, FailedRSCreateReason, msg)
		return nil, err
	}
	if !alreadyExists && count > 0 {
		c.recorder.Eventf(d, corev1.EventTypeNormal, ScalingReplicaSetReason, "Scaled up replica set %s from 0 to %d", created.Name, count)
	}
	needsUpdate := SetDeploymentRevision(d, newRevision)
	if !alreadyExists && HasProgressDeadline(d) {
		msg := fmt.Sprintf("Created new replica set %q", created.Name)
		SetDeploymentCondition(&d.Status, *NewDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewReplicaSetReason, msg, c.clock.Now()))
		needsUpdate = true
	}
	if needsUpdate {
		if err := c.updateStatus(ctx, d); err != nil {
			return created, err
		}
	}
	return created, nil
}

// scale scales the ReplicaSets of d to its replicas: all to the one active
// ReplicaSet, old ones to zero once the new one is saturated, or, during a
// rolling update, proportionally to their sizes.
func (c *Controller) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	if target := findActiveOrLatest(newRS, oldRSs); target != nil {
		if replicas(target.Spec.Replicas) == *d.Spec.Replicas {
			return nil
		}
		_, _, err := c.scaleReplicaSetAndRecordEvent(ctx, target, *d.Spec.Replicas, d)
		return err
	}
	if IsSaturated(d, newRS) {
		for _, old := range filterActive(oldRSs) {
			if _, _, err := c.scaleReplicaSetAndRecordEvent(ctx, old, 0, d); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRollingUpdate(d) {
		return nil
	}
	return c.scaleProportionally(ctx, d, filterActive(append(oldRSs, newRS)))
}

// scaleProportionally spreads the difference between d's allowed size and
// the replicas of allRSs across them in proportion to their sizes; the
// rounding leftover goes to the first (largest) one.
func (c *Controller) scaleProportionally(ctx context.Context, d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet) error {
	var allowed int32
	if *d.Spec.Replicas > 0 {
		allowed = *d.Spec.Replicas + MaxSurge(d)
	}
	toAdd := allowed - replicaCount(allRSs)
	switch {
	case toAdd > 0:
		sort.Sort(bySizeNewer(allRSs))
	case toAdd < 0:
		sort.Sort(bySizeOlder(allRSs))
	}
	sizes := proportionalSizes(d, allRSs, toAdd)
	for i, rs := range allRSs {
		if _, _, err := c.scaleReplicaSet(ctx, rs, sizes[i], d); err != nil {
			return err
		}
	}
	return nil
}

// proportionalSizes returns the new size of each of allRSs (sorted) when
// toAdd replicas are spread across them.
func proportionalSizes(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, toAdd int32) []int32 {
	sizes := make([]int32, len(allRSs))
	var added int32
	for i, rs := range allRSs {
		sizes[i] = replicas(rs.Spec.Replicas)
		if toAdd != 0 {
			p := getProportion(rs, d, toAdd, added)
			sizes[i] += p
			added += p
		}
	}
	if len(sizes) > 0 && toAdd != 0 {
		sizes[0] = max(0, sizes[0]+toAdd-added)
	}
	return sizes
}

func (c *Controller) scaleReplicaSetAndRecordEvent(ctx context.Context, rs *appsv1.ReplicaSet, newScale int32, d *appsv1.Deployment) (bool, *appsv1.ReplicaSet, error) {
	if replicas(rs.Spec.Replicas) == newScale {
		return false, rs, nil
	}
	return c.scaleReplicaSet(ctx, rs, newScale, d)
}

// scaleReplicaSet sets rs's replicas to newScale and its replicas
// annotations to d's, recording a ScalingReplicaSet event when the size
// changed.
func (c *Controller) scaleReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, newScale int32, d *appsv1.Deployment) (bool, *appsv1.ReplicaSet, error) {
	oldScale := replicas(rs.Spec.Replicas)
	sizeChanged := oldScale != newScale
	maxReplicas := *d.Spec.Replicas + MaxSurge(d)
	if !sizeChanged && !ReplicasAnnotationsNeedUpdate(rs, *d.Spec.Replicas, maxReplicas) {
		return false, rs, nil
	}
	cp := rs.DeepCopy()
	cp.Spec.Replicas = &newScale
	SetReplicasAnnotations(cp, *d.Spec.Replicas, maxReplicas)
	updated, err := c.client.AppsV1().ReplicaSets(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
	if err != nil {
		return false, rs, err
	}
	if !sizeChanged {
		return false, updated, nil
	}
	op := "up"
	if newScale < oldScale {
		op = "down"
	}
	c.recorder.Eventf(d, corev1.EventTypeNormal, ScalingReplicaSetReason, "Scaled %s replica set %s from %d to %d", op, updated.Name, oldScale, newScale)
	return true, updated, nil
}

// cleanupDeployment deletes the oldest ReplicaSets beyond d's
// revisionHistoryLimit that have no replicas left.
func (c *Controller) cleanupDeployment(ctx context.Context, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) error {
	if !hasRevisionHistoryLimit(d) {
		return nil
	}
	var cleanable []*appsv1.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.DeletionTimestamp == nil {
			cleanable = append(cleanable, rs)
		}
	}
	diff := len(cleanable) - int(*d.Spec.RevisionHistoryLimit)
	if diff <= 0 {
		return nil
	}
	sort.Sort(byRevision(cleanable))
	logger := klog.FromContext(ctx)
	var errs []error
	for _, rs := range cleanable[:diff] {
		if rs.Status.Replicas != 0 || replicas(rs.Spec.Replicas) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		logger.V(4).Info("Trying to cleanup replica set for deployment", "replicaSet", klog.KObj(rs), "deployment", klog.KObj(d))
		err := c.client.AppsV1().ReplicaSets(rs.Namespace).Delete(ctx, rs.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// syncDeploymentStatus writes d's status if it changed.
func (c *Controller) syncDeploymentStatus(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	status := c.calculateStatus(allRSs, newRS, d)
	if reflect.DeepEqual(d.Status, status) {
		return nil
	}
	d.Status = status
	return c.updateStatus(ctx, d)
}

// calculateStatus computes d's status from its ReplicaSets.
func (c *Controller) calculateStatus(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) appsv1.DeploymentStatus {
	available := availableReplicaCount(allRSs)
	total := replicaCount(allRSs)
	status := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            actualReplicaCount(allRSs),
		UpdatedReplicas:     actualReplicaCount([]*appsv1.ReplicaSet{newRS}),
		ReadyReplicas:       readyReplicaCount(allRSs),
		AvailableReplicas:   available,
		UnavailableReplicas: max(0, total-available),
		CollisionCount:      d.Status.CollisionCount,
	}
	status.Conditions = append(status.Conditions, d.Status.Conditions...)
	if available >= *d.Spec.Replicas-MaxUnavailable(d) {
		SetDeploymentCondition(&status, *NewDeploymentCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue,
			MinimumReplicasAvailable, "Deployment has minimum availability.", c.clock.Now()))
	} else {
		SetDeploymentCondition(&status, *NewDeploymentCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse,
			MinimumReplicasUnavailable, "Deployment does not have minimum availability.", c.clock.Now()))
	}
	return status
}
