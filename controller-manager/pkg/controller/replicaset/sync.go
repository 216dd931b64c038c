package replicaset

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"skiff.dev/component-base/tracing"
	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

// sync brings the ReplicaSet keyed key to its desired state.
func (c *Controller) sync(ctx context.Context, key string) (err error) {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	ctx, span := c.tracer.Start(ctx, c.syncSpan)
	defer func() { tracing.End(span, err) }()
	if span.IsRecording() {
		span.SetAttributes(tracing.NamespaceKey.String(namespace), attribute.String(c.attrPrefix+".name", name))
	}
	cached, err := c.kind.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("ReplicaSet has been deleted", "replicaSet", key)
		c.expectations.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	needsSync := c.expectations.Satisfied(key)
	selector, err := metav1.LabelSelectorAsSelector(cached.Spec.Selector)
	if err != nil {
		// Validation rejects such selectors; retrying would not help.
		logger.Error(err, "Invalid selector", "replicaSet", key)
		return nil
	}
	if selector.Empty() {
		// It would claim every pod of the namespace; validation refuses it.
		c.recorder.Event(c.kind.Object(cached), corev1.EventTypeWarning, "InvalidSelector", "The selector is empty: no pods are managed")
		return nil
	}
	pods, err := c.claimPods(ctx, cached, selector)
	if err != nil {
		return err
	}
	var manageErr error
	if span.IsRecording() {
		span.SetAttributes(attribute.String(c.attrPrefix+".uid", string(cached.UID)),
			attribute.Int("replicas", int(replicasOf(cached))), attribute.Int("pods", len(pods)), attribute.Bool("expectations.satisfied", needsSync))
	}
	if needsSync && cached.DeletionTimestamp == nil {
		manageErr = c.manageReplicas(ctx, pods, cached)
	}
	rs := cached.DeepCopy()
	status := calculateStatus(rs, pods, manageErr, c.clock.Now())
	updated, err := c.updateStatus(ctx, rs, status)
	if err != nil {
		return errors.Join(manageErr, err)
	}
	if manageErr == nil && updated.Spec.MinReadySeconds > 0 &&
		updated.Status.ReadyReplicas == replicasOf(updated) &&
		updated.Status.AvailableReplicas != replicasOf(updated) {
		c.enqueueAfter(updated, time.Duration(updated.Spec.MinReadySeconds)*time.Second)
	}
	return manageErr
}

func replicasOf(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

// claimPods returns the active pods rs owns after adopting matching
// orphans and releasing owned pods that stopped matching.
func (c *Controller) claimPods(ctx context.Context, rs *appsv1.ReplicaSet, selector labels.Selector) ([]*corev1.Pod, error) {
	owned, err := controllerutil.ByController[*corev1.Pod](c.podIndexer, rs.UID)
	if err != nil {
		return nil, err
	}
	orphans, err := controllerutil.Orphans[*corev1.Pod](c.podIndexer, rs.Namespace)
	if err != nil {
		return nil, err
	}
	candidates := controllerutil.FilterActivePods(append(owned, orphans...))
	canAdopt := controllerutil.RecheckDeletionTimestamp(rs.UID, func(ctx context.Context) (metav1.Object, error) {
		return c.kind.GetLive(ctx, rs.Namespace, rs.Name)
	})
	m := controllerutil.NewPodRefManager(c.client, rs, c.gvk.GroupVersion().String(), c.gvk.Kind, selector, canAdopt)
	return m.Claim(ctx, candidates)
}

// manageReplicas creates or deletes pods so rs has spec.replicas active
// pods, at most burstReplicas of them in this sync.
func (c *Controller) manageReplicas(ctx context.Context, pods []*corev1.Pod, rs *appsv1.ReplicaSet) error {
	diff := len(pods) - int(replicasOf(rs))
	key, err := cache.MetaNamespaceKeyFunc(rs)
	if err != nil {
		return err
	}
	switch {
	case diff < 0:
		return c.createPods(ctx, rs, key, min(-diff, c.burstReplicas))
	case diff > 0:
		return c.deletePods(ctx, rs, key, pods, min(diff, c.burstReplicas))
	}
	return nil
}

func (c *Controller) createPods(ctx context.Context, rs *appsv1.ReplicaSet, key string, n int) error {
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Too few replicas", "replicaSet", klog.KObj(rs), "need", replicasOf(rs), "creating", n)
	// Expect them all before the first create: a pod's add event may come
	// back before the create call returns.
	c.expectations.ExpectCreations(key, n)
	ref := controllerutil.NewControllerRef(rs, c.gvk.GroupVersion().String(), c.gvk.Kind)
	owner := c.kind.Object(rs)
	created, err := controllerutil.SlowStartBatch(n, controllerutil.SlowStartInitialBatchSize, func() error {
		err := c.podControl.CreatePod(ctx, rs.Namespace, &rs.Spec.Template, owner, ref)
		if err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			// Every create fails while the namespace goes away; nothing to
			// retry.
			return nil
		}
		return err
	})
	if skipped := n - created; skipped > 0 {
		// The creates not issued or failed will never be observed.
		logger.V(2).Info("Slow-start failure: skipping pod creations", "replicaSet", klog.KObj(rs), "skipped", skipped)
		c.expectations.CreationsSkipped(key, skipped)
	}
	return err
}

func (c *Controller) deletePods(ctx context.Context, rs *appsv1.ReplicaSet, key string, pods []*corev1.Pod, n int) error {
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Too many replicas", "replicaSet", klog.KObj(rs), "need", replicasOf(rs), "deleting", n)
	victims := c.podsToDelete(rs, pods, n)
	podKeys := make([]string, len(victims))
	for i, p := range victims {
		podKeys[i] = controllerutil.PodKey(p)
	}
	// Expect the deletions before issuing them, as for creations.
	c.expectations.ExpectDeletions(key, podKeys)
	owner := c.kind.Object(rs)
	errCh := make(chan error, len(victims))
	var wg sync.WaitGroup
	wg.Add(len(victims))
	for _, p := range victims {
		go func(p *corev1.Pod) {
			defer wg.Done()
			if err := c.podControl.DeletePod(ctx, rs.Namespace, p.Name, owner); err != nil {
				// This deletion will never be observed.
				c.expectations.DeletionObserved(key, controllerutil.PodKey(p))
				if !apierrors.IsNotFound(err) {
					errCh <- err
				}
			}
		}(p)
	}
	wg.Wait()
	select {
	case err := <-errCh:
		return err
	default:
		return nil
	}
}

// podsToDelete picks the n pods of rs to delete first, ranking each by the
// pods of rs and of its sibling ReplicaSets (same controller) on its node.
func (c *Controller) podsToDelete(rs *appsv1.ReplicaSet, pods []*corev1.Pod, n int) []*corev1.Pod {
	if n >= len(pods) {
		return pods
	}
	sorted := append([]*corev1.Pod(nil), pods...)
	ranks := controllerutil.RanksByRelatedPodsOnSameNode(sorted, c.relatedPods(rs))
	sort.Sort(controllerutil.ActivePodsWithRanks{Pods: sorted, Rank: ranks, Now: metav1.NewTime(c.clock.Now())})
	return sorted[:n]
}

// relatedPods returns the pods of rs and of the ReplicaSets that share its
// controller.
func (c *Controller) relatedPods(rs *appsv1.ReplicaSet) []*corev1.Pod {
	siblings := []metav1.Object{rs}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		if all, err := controllerutil.ByController[metav1.Object](c.rsIndexer, ref.UID); err == nil && len(all) > 0 {
			siblings = all
		}
	}
	var out []*corev1.Pod
	for _, s := range siblings {
		pods, err := controllerutil.ByController[*corev1.Pod](c.podIndexer, s.GetUID())
		if err == nil {
			out = append(out, pods...)
		}
	}
	return out
}

// calculateStatus computes rs's status from its active pods and the error
// of this sync's creates or deletes.
func calculateStatus(rs *appsv1.ReplicaSet, pods []*corev1.Pod, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	status := *rs.Status.DeepCopy()
	templateLabels := labels.Set(rs.Spec.Template.Labels).AsSelectorPreValidated()
	var fullyLabeled, ready, available int32
	for _, p := range pods {
		if templateLabels.Matches(labels.Set(p.Labels)) {
			fullyLabeled++
		}
		if controllerutil.IsPodReady(p) {
			ready++
			if controllerutil.IsPodAvailable(p, rs.Spec.MinReadySeconds, now) {
				available++
			}
		}
	}
	failure := getCondition(status, appsv1.ReplicaSetReplicaFailure)
	switch {
	case manageErr != nil && failure == nil:
		reason := "FailedCreate"
		if len(pods)-int(replicasOf(rs)) > 0 {
			reason = "FailedDelete"
		}
		setCondition(&status, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: manageErr.Error(),
		})
	case manageErr == nil && failure != nil:
		removeCondition(&status, appsv1.ReplicaSetReplicaFailure)
	}
	status.Replicas = int32(len(pods))
	status.FullyLabeledReplicas = fullyLabeled
	status.ReadyReplicas = ready
	status.AvailableReplicas = available
	return status
}

// updateStatus writes status (and the observed generation) unless rs
// already has it; on a conflict it retries once on a fresh copy.
func (c *Controller) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, status appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, error) {
	status.ObservedGeneration = rs.Generation
	for attempt := 0; ; attempt++ {
		if statusEqual(rs.Status, status) {
			return rs, nil
		}
		klog.FromContext(ctx).V(4).Info("Updating status", "replicaSet", klog.KObj(rs),
			"replicas", status.Replicas, "ready", status.ReadyReplicas, "available", status.AvailableReplicas)
		rs.Status = status
		updated, err := c.kind.UpdateStatus(ctx, rs)
		if err == nil {
			return updated, nil
		}
		if attempt >= 1 || !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("updating status of %s %s/%s: %w", c.gvk.Kind, rs.Namespace, rs.Name, err)
		}
		fresh, getErr := c.kind.GetLive(ctx, rs.Namespace, rs.Name)
		if getErr != nil {
			return nil, getErr
		}
		rs = fresh
		status.ObservedGeneration = rs.Generation
	}
}

func statusEqual(a, b appsv1.ReplicaSetStatus) bool {
	if a.Replicas != b.Replicas || a.FullyLabeledReplicas != b.FullyLabeledReplicas || a.ReadyReplicas != b.ReadyReplicas ||
		a.AvailableReplicas != b.AvailableReplicas || a.ObservedGeneration != b.ObservedGeneration ||
		len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			!x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	return true
}

func getCondition(status appsv1.ReplicaSetStatus, t appsv1.ReplicaSetConditionType) *appsv1.ReplicaSetCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

// setCondition adds c, replacing a condition of its type; an identical
// condition keeps its transition time.
func setCondition(status *appsv1.ReplicaSetStatus, c appsv1.ReplicaSetCondition) {
	if cur := getCondition(*status, c.Type); cur != nil {
		if cur.Status == c.Status && cur.Reason == c.Reason {
			return
		}
		if cur.Status == c.Status {
			c.LastTransitionTime = cur.LastTransitionTime
		}
	}
	removeCondition(status, c.Type)
	status.Conditions = append(status.Conditions, c)
}

func removeCondition(status *appsv1.ReplicaSetStatus, t appsv1.ReplicaSetConditionType) {
	var out []appsv1.ReplicaSetCondition
	for _, c := range status.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	status.Conditions = out
}
