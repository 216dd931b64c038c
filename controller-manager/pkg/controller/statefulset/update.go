package statefulset

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/history"
)

// maxBatchSize caps a Parallel set's slow-start batches (upstream's value).
const maxBatchSize = 500

// updateStatefulSet brings set's pods one step closer to what set says and
// returns the status that results; revisions must be sorted. It is
// upstream's defaultStatefulSetControl.UpdateStatefulSet: revisions,
// pods, status, then the history limit.
func (c *Controller) updateStatefulSet(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod, revisions []*appsv1.ControllerRevision) (*appsv1.StatefulSetStatus, error) {
	current, update, collisionCount, err := c.getStatefulSetRevisions(ctx, set, revisions)
	var status *appsv1.StatefulSetStatus
	if err == nil {
		status, err = c.managePods(ctx, set, current, update, collisionCount, pods)
		if status != nil {
			if statusErr := c.updateStatefulSetStatus(ctx, set, status); statusErr != nil {
				err = errors.Join(err, statusErr)
			}
		}
	}
	if truncErr := c.truncateHistory(ctx, set, pods, revisions, current, update); truncErr != nil {
		err = errors.Join(err, truncErr)
	}
	return status, err
}

// managePods creates, repairs and deletes pods: the pods of the ordinals
// in range first (in order, each waiting for its predecessors to be
// running, ready and available, under OrderedReady; all at once under
// Parallel), then the condemned pods out of range (the highest first, one
// at a time under OrderedReady), then, for RollingUpdate, the pods not at
// the update revision from the highest ordinal down to the partition.
// It returns the status computed along the way.
func (c *Controller) managePods(ctx context.Context, set *appsv1.StatefulSet, currentRevision, updateRevision *appsv1.ControllerRevision,
	collisionCount int32, pods []*corev1.Pod) (*appsv1.StatefulSetStatus, error) {
	logger := klog.FromContext(ctx)
	currentSet, err := applyRevision(set, currentRevision)
	if err != nil {
		return nil, err
	}
	updateSet, err := applyRevision(set, updateRevision)
	if err != nil {
		return nil, err
	}
	status := appsv1.StatefulSetStatus{
		ObservedGeneration: set.Generation,
		CurrentRevision:    currentRevision.Name,
		UpdateRevision:     updateRevision.Name,
		CollisionCount:     &collisionCount,
	}
	now := c.clock.Now()
	c.computeStatus(&status, set.Spec.MinReadySeconds, currentRevision, updateRevision, now, pods)

	start := getStartOrdinal(set)
	replicas := make([]*corev1.Pod, replicasOf(set))
	var condemned []*corev1.Pod
	for _, pod := range pods {
		switch ord := getOrdinal(pod); {
		case podInOrdinalRange(pod, set):
			replicas[ord-start] = pod
		case ord >= 0:
			condemned = append(condemned, pod)
		}
	}
	for ord := start; ord <= getEndOrdinal(set); ord++ {
		if replicas[ord-start] == nil {
			replicas[ord-start] = newVersionedStatefulSetPod(currentSet, updateSet, currentRevision.Name, updateRevision.Name, ord)
		}
	}
	// Highest ordinal first.
	sort.Slice(condemned, func(i, j int) bool { return getOrdinal(condemned[i]) > getOrdinal(condemned[j]) })

	var firstUnhealthy *corev1.Pod
	unhealthy := 0
	for _, p := range replicas {
		if !isHealthy(p) {
			unhealthy++
			if firstUnhealthy == nil {
				firstUnhealthy = p
			}
		}
	}
	for i := len(condemned) - 1; i >= 0; i-- {
		if !isHealthy(condemned[i]) {
			unhealthy++
			if firstUnhealthy == nil {
				firstUnhealthy = condemned[i]
			}
		}
	}
	if unhealthy > 0 {
		logger.V(4).Info("StatefulSet has unhealthy pods", "statefulSet", klog.KObj(set), "unhealthyReplicas", unhealthy, "pod", klog.KObj(firstUnhealthy))
	}
	if set.DeletionTimestamp != nil {
		return &status, nil
	}
	monotonic := !allowsBurst(set)
	finish := func(err error) (*appsv1.StatefulSetStatus, error) {
		c.computeStatus(&status, set.Spec.MinReadySeconds, currentRevision, updateRevision, now, replicas, condemned)
		return &status, err
	}

	if exit, err := runForAll(replicas, func(i int) (bool, error) {
		return c.processReplica(ctx, set, updateSet, monotonic, replicas, i, now)
	}, monotonic); exit || err != nil {
		return finish(err)
	}
	// The claims of condemned pods get the pod's reference under
	// whenScaled Delete, so they go with the pod.
	if exit, err := runForAll(condemned, func(i int) (bool, error) {
		match, err := c.claimsMatchRetentionPolicy(ctx, updateSet, condemned[i])
		if err != nil {
			return true, err
		}
		if !match {
			if err := c.updatePodClaimForRetentionPolicy(ctx, updateSet, condemned[i]); err != nil {
				return true, err
			}
		}
		return false, nil
	}, monotonic); exit || err != nil {
		return finish(err)
	}
	if exit, err := runForAll(condemned, func(i int) (bool, error) {
		return c.processCondemned(ctx, set, firstUnhealthy, monotonic, condemned, i, now)
	}, monotonic); exit || err != nil {
		return finish(err)
	}
	c.computeStatus(&status, set.Spec.MinReadySeconds, currentRevision, updateRevision, now, replicas, condemned)

	if set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		// Pods are updated when the user deletes them.
		return &status, nil
	}
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		return c.rollWithMaxUnavailable(ctx, set, replicas, updateRevision, status)
	}
	updateMin := int(partitionOf(set))
	for target := len(replicas) - 1; target >= updateMin; target-- {
		if getPodRevision(replicas[target]) != updateRevision.Name && !isTerminating(replicas[target]) {
			logger.V(2).Info("Pod of StatefulSet is terminating for update", "statefulSet", klog.KObj(set), "pod", klog.KObj(replicas[target]))
			if err := c.deleteStatefulPod(ctx, set, replicas[target]); err != nil && !apierrors.IsNotFound(err) {
				return &status, err
			}
			status.CurrentReplicas--
			return &status, nil
		}
		if !isHealthy(replicas[target]) {
			logger.V(4).Info("StatefulSet is waiting for pod to update", "statefulSet", klog.KObj(set), "pod", klog.KObj(replicas[target]))
			return &status, nil
		}
	}
	return &status, nil
}

// rollWithMaxUnavailable is the rolling update under
// rollingUpdate.maxUnavailable: as many outdated pods at or above the
// partition, highest ordinal first, are deleted as keep the unhealthy pods
// within maxUnavailable.
func (c *Controller) rollWithMaxUnavailable(ctx context.Context, set *appsv1.StatefulSet, replicas []*corev1.Pod,
	updateRevision *appsv1.ControllerRevision, status appsv1.StatefulSetStatus) (*appsv1.StatefulSetStatus, error) {
	logger := klog.FromContext(ctx)
	maxUnavailable, err := maxUnavailableOf(set)
	if err != nil {
		return &status, err
	}
	unavailable := 0
	for _, p := range replicas {
		if !isHealthy(p) {
			unavailable++
		}
	}
	if unavailable >= maxUnavailable {
		logger.V(2).Info("StatefulSet found unavailable pods, at least maxUnavailable", "statefulSet", klog.KObj(set),
			"unavailablePods", unavailable, "maxUnavailable", maxUnavailable)
		return &status, nil
	}
	toDelete := maxUnavailable - unavailable
	deleted := 0
	for target := len(replicas) - 1; target >= int(partitionOf(set)) && deleted < toDelete; target-- {
		if getPodRevision(replicas[target]) == updateRevision.Name || isTerminating(replicas[target]) {
			continue
		}
		logger.V(2).Info("StatefulSet terminating pod for update", "statefulSet", klog.KObj(set), "pod", klog.KObj(replicas[target]))
		if err := c.deleteStatefulPod(ctx, set, replicas[target]); err != nil && !apierrors.IsNotFound(err) {
			return &status, err
		}
		deleted++
		status.CurrentReplicas--
	}
	return &status, nil
}

// processReplica acts on the pod of replicas[i]; it returns true when a
// monotonic (OrderedReady) set must not go on to the next ordinal.
func (c *Controller) processReplica(ctx context.Context, set, updateSet *appsv1.StatefulSet, monotonic bool, replicas []*corev1.Pod, i int, now time.Time) (bool, error) {
	logger := klog.FromContext(ctx)
	pod := replicas[i]
	// A pod that finished (failed, or succeeded after an eviction or a node
	// reboot) is deleted, and recreated once it is gone.
	if isFailed(pod) || isSucceeded(pod) {
		if pod.DeletionTimestamp == nil {
			if err := c.deleteStatefulPod(ctx, set, pod); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if !isCreated(pod) {
		stale, err := c.podClaimIsStale(set, pod)
		if err != nil {
			return true, err
		}
		if stale {
			// The claim's deletion with the old pod is pending; its
			// removal requeues the set.
			logger.V(4).Info("StatefulSet waits for a stale claim to go", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			return true, nil
		}
		if err := c.createStatefulPod(ctx, set, pod); err != nil {
			return true, err
		}
		return monotonic, nil
	}
	if isPending(pod) {
		if err := c.createMissingPersistentVolumeClaims(ctx, set, pod); err != nil {
			return true, err
		}
	}
	if monotonic {
		if isTerminating(pod) {
			logger.V(4).Info("StatefulSet is waiting for pod to terminate", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			return true, nil
		}
		if !isRunningAndReady(pod) {
			logger.V(4).Info("StatefulSet is waiting for pod to be running and ready", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			return true, nil
		}
		if !controllerutil.IsPodAvailable(pod, set.Spec.MinReadySeconds, now) {
			logger.V(4).Info("StatefulSet is waiting for pod to be available", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			return true, nil
		}
	}
	retentionMatch, err := c.claimsMatchRetentionPolicy(ctx, updateSet, pod)
	if err != nil {
		// Expected while the pod is being updated: treated as matching.
		retentionMatch = true
	}
	if identityMatches(set, pod) && storageMatches(set, pod) && retentionMatch {
		return false, nil
	}
	if err := c.updateStatefulPod(ctx, updateSet, pod.DeepCopy()); err != nil {
		return true, err
	}
	return false, nil
}

// processCondemned deletes the condemned pod condemned[i]; under
// OrderedReady it first waits for it to be healthy (unless it is the first
// unhealthy pod, which goes first) and for terminating pods to go.
func (c *Controller) processCondemned(ctx context.Context, set *appsv1.StatefulSet, firstUnhealthy *corev1.Pod, monotonic bool, condemned []*corev1.Pod, i int, now time.Time) (bool, error) {
	logger := klog.FromContext(ctx)
	pod := condemned[i]
	if isTerminating(pod) {
		if monotonic {
			logger.V(4).Info("StatefulSet is waiting for pod to terminate prior to scale down", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
		}
		return monotonic, nil
	}
	if monotonic && pod != firstUnhealthy {
		if !isRunningAndReady(pod) {
			logger.V(4).Info("StatefulSet is waiting for pod to be running and ready prior to scale down", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			return true, nil
		}
		if !controllerutil.IsPodAvailable(pod, set.Spec.MinReadySeconds, now) {
			logger.V(4).Info("StatefulSet is waiting for pod to be available prior to scale down", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
			return true, nil
		}
	}
	logger.V(2).Info("Pod of StatefulSet is terminating for scale down", "statefulSet", klog.KObj(set), "pod", klog.KObj(pod))
	return true, c.deleteStatefulPod(ctx, set, pod)
}

// runForAll calls fn for each pod: in order, stopping at the first that
// says so or fails, when monotonic; in slow-start batches otherwise.
func runForAll(pods []*corev1.Pod, fn func(i int) (bool, error), monotonic bool) (bool, error) {
	if monotonic {
		for i := range pods {
			if exit, err := fn(i); exit || err != nil {
				return true, err
			}
		}
		return false, nil
	}
	if err := slowStartBatch(len(pods), fn); err != nil {
		return true, err
	}
	return false, nil
}

// slowStartBatch calls fn for 0..count-1 in parallel batches of 1, 2, 4,
// ... (at most maxBatchSize), stopping after a batch with errors.
func slowStartBatch(count int, fn func(int) (bool, error)) error {
	next := 0
	for batch := min(count, 1); batch > 0; batch = min(2*batch, count-next, maxBatchSize) {
		errs := make([]error, batch)
		var wg sync.WaitGroup
		for k := range batch {
			wg.Add(1)
			go func(k, i int) {
				defer wg.Done()
				_, errs[k] = fn(i)
			}(k, next+k)
		}
		wg.Wait()
		next += batch
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// computeStatus counts the replicas of podLists into status as upstream:
// created pods (a phase), running-and-ready ones, available ones, and the
// created, not terminating ones at the current and update revisions.
func (c *Controller) computeStatus(status *appsv1.StatefulSetStatus, minReadySeconds int32, current, update *appsv1.ControllerRevision, now time.Time, podLists ...[]*corev1.Pod) {
	status.Replicas, status.ReadyReplicas, status.AvailableReplicas = 0, 0, 0
	status.CurrentReplicas, status.UpdatedReplicas = 0, 0
	for _, pods := range podLists {
		for _, pod := range pods {
			if isCreated(pod) {
				status.Replicas++
			}
			if isRunningAndReady(pod) {
				status.ReadyReplicas++
				if controllerutil.IsPodAvailable(pod, minReadySeconds, now) {
					status.AvailableReplicas++
				}
			}
			if isCreated(pod) && !isTerminating(pod) {
				rev := getPodRevision(pod)
				if rev == current.Name {
					status.CurrentReplicas++
				}
				if rev == update.Name {
					status.UpdatedReplicas++
				}
			}
		}
	}
}

// sortedRevisions returns revisions sorted oldest first.
func sortedRevisions(revisions []*appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	out := append([]*appsv1.ControllerRevision(nil), revisions...)
	history.SortControllerRevisions(out)
	return out
}
