package daemonset

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

// sync brings the DaemonSet keyed key to its desired state, as upstream's
// syncDaemonSet.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	ds, err := c.dsLister.DaemonSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("DaemonSet has been deleted", "daemonSet", key)
		c.expectations.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("couldn't list nodes: %w", err)
	}
	if ds.Spec.Selector == nil || reflect.DeepEqual(*ds.Spec.Selector, metav1.LabelSelector{}) {
		c.recorder.Event(ds, corev1.EventTypeWarning, SelectingAllReason, "This daemon set is selecting all pods. A non-empty selector is required.")
		return nil
	}
	// Being deleted: its revisions may be gone or orphaned already, so
	// neither pods nor status can be trusted; the garbage collector
	// finishes.
	if ds.DeletionTimestamp != nil {
		return nil
	}
	cur, old, err := c.constructHistory(ctx, ds)
	if err != nil {
		return fmt.Errorf("failed to construct revisions of DaemonSet: %w", err)
	}
	hash := cur.Labels[RevisionHashLabel]
	if !c.expectations.Satisfied(key) {
		// Status only; observedGeneration stays, this generation was not
		// acted on.
		return c.updateStatus(ctx, ds, nodes, hash, false)
	}
	err = c.update(ctx, ds, nodes, hash, key, old)
	statusErr := c.updateStatus(ctx, ds, nodes, hash, true)
	if err != nil {
		if statusErr != nil {
			logger.Error(statusErr, "Failed to update status", "daemonSet", klog.KObj(ds))
		}
		return err
	}
	return statusErr
}

// update creates and deletes pods, rolls out the current revision and
// prunes old revisions.
func (c *Controller) update(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash, key string, old []*appsv1.ControllerRevision) error {
	if err := c.manage(ctx, ds, nodes, hash); err != nil {
		return err
	}
	if c.expectations.Satisfied(key) && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if err := c.rollingUpdate(ctx, ds, nodes, hash); err != nil {
			return err
		}
	}
	if err := c.cleanupHistory(ctx, ds, old); err != nil {
		return fmt.Errorf("failed to clean up revisions of DaemonSet: %w", err)
	}
	return nil
}

// daemonPods returns the pods ds owns after adopting matching orphans and
// releasing owned pods that stopped matching.
func (c *Controller) daemonPods(ctx context.Context, ds *appsv1.DaemonSet) ([]*corev1.Pod, error) {
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, err
	}
	owned, err := controllerutil.ByController[*corev1.Pod](c.podIndexer, ds.UID)
	if err != nil {
		return nil, err
	}
	orphans, err := controllerutil.Orphans[*corev1.Pod](c.podIndexer, ds.Namespace)
	if err != nil {
		return nil, err
	}
	canAdopt := controllerutil.RecheckDeletionTimestamp(ds.UID, func(ctx context.Context) (metav1.Object, error) {
		return c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
	})
	m := controllerutil.NewPodRefManager(c.client, ds, controllerKind.GroupVersion().String(), controllerKind.Kind, selector, canAdopt)
	return m.Claim(ctx, append(owned, orphans...))
}

// nodesToDaemonPods groups ds's pods by the node they run on or are meant
// for. Terminal pods being deleted are left out unless
// includeDeletedTerminal.
func (c *Controller) nodesToDaemonPods(ctx context.Context, ds *appsv1.DaemonSet, includeDeletedTerminal bool) (map[string][]*corev1.Pod, error) {
	pods, err := c.daemonPods(ctx, ds)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]*corev1.Pod)
	for _, pod := range pods {
		terminal := pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
		if !includeDeletedTerminal && terminal && pod.DeletionTimestamp != nil {
			continue
		}
		node, err := TargetNodeName(pod)
		if err != nil {
			klog.FromContext(ctx).V(4).Info("Failed to get target node name of daemon pod", "pod", klog.KObj(pod), "err", err)
			continue
		}
		out[node] = append(out[node], pod)
	}
	return out, nil
}

// manage creates a pod on every node that should run one and has none,
// and deletes the pods on nodes that should not run them, the failed ones
// (with back-off per node) and the surplus.
func (c *Controller) manage(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for DaemonSet %q: %w", ds.Name, err)
	}
	var create, del []string
	for _, node := range nodes {
		cr, dl := c.podsShouldBeOnNode(ctx, node, byNode, ds, hash)
		create = append(create, cr...)
		del = append(del, dl...)
	}
	// Pods meant for nodes that no longer exist are never scheduled, and
	// the pod garbage collector does not see them.
	del = append(del, unscheduledPodsWithoutNode(nodes, byNode)...)
	return c.syncNodes(ctx, ds, del, create, hash)
}

// podsShouldBeOnNode returns the node, when it needs a daemon pod, and the
// pods on it to delete.
func (c *Controller) podsShouldBeOnNode(ctx context.Context, node *corev1.Node, byNode map[string][]*corev1.Pod, ds *appsv1.DaemonSet, hash string) (create, del []string) {
	logger := klog.FromContext(ctx)
	shouldRun, shouldContinueRunning := NodeShouldRunDaemonPod(node, ds)
	pods, exists := byNode[node.Name]
	switch {
	case shouldRun && !exists:
		create = append(create, node.Name)
	case shouldContinueRunning:
		var running []*corev1.Pod
		for _, pod := range pods {
			if pod.DeletionTimestamp != nil {
				continue
			}
			if pod.Status.Phase == corev1.PodFailed {
				// The kubelet may keep rejecting the pod: replace it with
				// back-off so the two do not fight in a hot loop.
				backoffKey := fmt.Sprintf("%s/%d/%s", ds.UID, ds.Status.ObservedGeneration, node.Name)
				now := c.clock.Now()
				if c.failedPodsBackoff.IsInBackOffSinceUpdate(backoffKey, now) {
					delay := c.failedPodsBackoff.Get(backoffKey)
					logger.V(4).Info("Deleting failed pod on node has been limited by backoff", "pod", klog.KObj(pod), "node", klog.KObj(node), "delay", delay)
					c.enqueueAfter(ds, delay)
					continue
				}
				c.failedPodsBackoff.Next(backoffKey, now)
				logger.V(2).Info("Found failed daemon pod on node, will try to kill it", "pod", klog.KObj(pod), "node", klog.KObj(node))
				c.recorder.Eventf(ds, corev1.EventTypeWarning, FailedDaemonPodReason,
					"Found failed daemon pod %s/%s on node %s, will try to kill it", pod.Namespace, pod.Name, node.Name)
				del = append(del, pod.Name)
				continue
			}
			if pod.Status.Phase == corev1.PodSucceeded {
				// Finished: a new one is made once it is gone.
				logger.V(2).Info("Found succeeded daemon pod on node, will try to delete it", "pod", klog.KObj(pod), "node", klog.KObj(node))
				c.recorder.Eventf(ds, corev1.EventTypeNormal, SucceededDaemonPodReason,
					"Found succeeded daemon pod %s/%s on node %s, will try to delete it", pod.Namespace, pod.Name, node.Name)
				del = append(del, pod.Name)
				continue
			}
			running = append(running, pod)
		}
		if !allowsSurge(ds) {
			// At most one pod per node: keep the oldest.
			if len(running) > 1 {
				sort.Sort(podsByCreation(running))
				for _, p := range running[1:] {
					del = append(del, p.Name)
				}
			}
			break
		}
		if len(running) <= 1 {
			if len(running) == 0 && shouldRun {
				create = append(create, node.Name)
			}
			break
		}
		// Surging: two pods (one old, one new) while the new one is not yet
		// available and the old one is ready; everything else goes.
		var oldestNew, oldestOld *corev1.Pod
		sort.Sort(podsByCreation(running))
		for _, pod := range running {
			if pod.Labels[RevisionHashLabel] == hash {
				if oldestNew == nil {
					oldestNew = pod
					continue
				}
			} else if oldestOld == nil {
				oldestOld = pod
				continue
			}
			del = append(del, pod.Name)
		}
		if oldestNew != nil && oldestOld != nil {
			switch {
			case !controllerutil.IsPodReady(oldestOld):
				del = append(del, oldestOld.Name)
			case controllerutil.IsPodAvailable(oldestNew, ds.Spec.MinReadySeconds, c.clock.Now()):
				del = append(del, oldestOld.Name)
			}
		}
	case !shouldContinueRunning && exists:
		for _, pod := range pods {
			if pod.DeletionTimestamp == nil {
				del = append(del, pod.Name)
			}
		}
	}
	return create, del
}

// unscheduledPodsWithoutNode returns the pods, not yet on a node, whose
// target node is not among nodes.
func unscheduledPodsWithoutNode(nodes []*corev1.Node, byNode map[string][]*corev1.Pod) []string {
	exists := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		exists[n.Name] = true
	}
	var out []string
	for name, pods := range byNode {
		if exists[name] {
			continue
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
				out = append(out, p.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// syncNodes deletes the pods named del and creates a pod for each node of
// create, at most burstReplicas of each, creations in slow-start batches.
// Each new pod carries required node affinity to its node (metadata.name),
// so the scheduler binds it there.
func (c *Controller) syncNodes(ctx context.Context, ds *appsv1.DaemonSet, del, create []string, hash string) error {
	logger := klog.FromContext(ctx)
	key, err := cache.MetaNamespaceKeyFunc(ds)
	if err != nil {
		return err
	}
	if len(create) > c.burstReplicas {
		create = create[:c.burstReplicas]
	}
	if len(del) > c.burstReplicas {
		del = del[:c.burstReplicas]
	}
	if len(create) == 0 && len(del) == 0 {
		return nil
	}
	podKeys := make([]string, len(del))
	for i, name := range del {
		podKeys[i] = ds.Namespace + "/" + name
	}
	logger.V(4).Info("Nodes needing daemon pods", "daemonSet", klog.KObj(ds), "creating", len(create), "deleting", len(del))
	// Expect everything before the first request: a pod's event may come
	// back before its request returns.
	c.expectations.SetExpectations(key, len(create), podKeys)

	generation, err := templateGeneration(ds)
	if err != nil {
		generation = nil
	}
	template := podTemplate(ds, generation, hash)
	ref := controllerutil.NewControllerRef(ds, controllerKind.GroupVersion().String(), controllerKind.Kind)

	var errs []error
	var mu sync.Mutex
	next := 0
	var nextMu sync.Mutex
	created, createErr := controllerutil.SlowStartBatch(len(create), controllerutil.SlowStartInitialBatchSize, func() error {
		nextMu.Lock()
		node := create[next]
		next++
		nextMu.Unlock()
		t := template.DeepCopy()
		t.Spec.Affinity = ReplaceNodeNameAffinity(t.Spec.Affinity, node)
		err := c.podControl.CreatePod(ctx, ds.Namespace, t, ds, ref)
		if err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			// Every create fails while the namespace goes away.
			return nil
		}
		return err
	})
	if skipped := len(create) - created; skipped > 0 {
		// Creations that failed or were never issued will not be seen.
		logger.V(2).Info("Slow-start failure: skipping pod creations", "daemonSet", klog.KObj(ds), "skipped", skipped)
		c.expectations.CreationsSkipped(key, skipped)
	}
	if createErr != nil {
		errs = append(errs, createErr)
	}

	var wg sync.WaitGroup
	wg.Add(len(del))
	for _, name := range del {
		go func(name string) {
			defer wg.Done()
			if err := c.podControl.DeletePod(ctx, ds.Namespace, name, ds); err != nil {
				c.expectations.DeletionObserved(key, ds.Namespace+"/"+name)
				if !apierrors.IsNotFound(err) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}(name)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// updateStatus computes and writes ds's status; observedGeneration only
// when updateObservedGen.
func (c *Controller) updateStatus(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string, updateObservedGen bool) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for DaemonSet %q: %w", ds.Name, err)
	}
	generation, err := templateGeneration(ds)
	if err != nil {
		generation = nil
	}
	now := c.clock.Now()
	var st appsv1.DaemonSetStatus
	for _, node := range nodes {
		shouldRun, _ := NodeShouldRunDaemonPod(node, ds)
		pods := byNode[node.Name]
		scheduled := len(pods) > 0
		if !shouldRun {
			if scheduled {
				st.NumberMisscheduled++
			}
			continue
		}
		st.DesiredNumberScheduled++
		if !scheduled {
			continue
		}
		st.CurrentNumberScheduled++
		sorted := append([]*corev1.Pod(nil), pods...)
		sort.Sort(podsByCreation(sorted))
		pod := sorted[0]
		if controllerutil.IsPodReady(pod) {
			st.NumberReady++
			if controllerutil.IsPodAvailable(pod, ds.Spec.MinReadySeconds, now) {
				st.NumberAvailable++
			}
		}
		if isPodUpdated(pod, hash, generation) {
			st.UpdatedNumberScheduled++
		}
	}
	st.NumberUnavailable = st.DesiredNumberScheduled - st.NumberAvailable
	if err := c.storeStatus(ctx, ds, st, updateObservedGen); err != nil {
		return fmt.Errorf("error storing status for DaemonSet %v: %w", ds.Name, err)
	}
	// Look again once the ready pods should have become available.
	if ds.Spec.MinReadySeconds > 0 && st.NumberReady != st.NumberAvailable {
		c.enqueueAfter(ds, time.Duration(ds.Spec.MinReadySeconds)*time.Second)
	}
	return nil
}

// storeStatus writes the counts of st unless ds has them already; on an
// error it retries once on a fresh copy.
func (c *Controller) storeStatus(ctx context.Context, ds *appsv1.DaemonSet, st appsv1.DaemonSetStatus, updateObservedGen bool) error {
	cur := ds.Status
	if cur.DesiredNumberScheduled == st.DesiredNumberScheduled && cur.CurrentNumberScheduled == st.CurrentNumberScheduled &&
		cur.NumberMisscheduled == st.NumberMisscheduled && cur.NumberReady == st.NumberReady &&
		cur.UpdatedNumberScheduled == st.UpdatedNumberScheduled && cur.NumberAvailable == st.NumberAvailable &&
		cur.NumberUnavailable == st.NumberUnavailable && cur.ObservedGeneration >= ds.Generation {
		return nil
	}
	toUpdate := ds.DeepCopy()
	for attempt := 0; ; attempt++ {
		if updateObservedGen {
			toUpdate.Status.ObservedGeneration = ds.Generation
		}
		toUpdate.Status.DesiredNumberScheduled = st.DesiredNumberScheduled
		toUpdate.Status.CurrentNumberScheduled = st.CurrentNumberScheduled
		toUpdate.Status.NumberMisscheduled = st.NumberMisscheduled
		toUpdate.Status.NumberReady = st.NumberReady
		toUpdate.Status.UpdatedNumberScheduled = st.UpdatedNumberScheduled
		toUpdate.Status.NumberAvailable = st.NumberAvailable
		toUpdate.Status.NumberUnavailable = st.NumberUnavailable
		_, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, toUpdate, metav1.UpdateOptions{})
		if err == nil {
			return nil
		}
		if attempt >= 1 {
			return err
		}
		fresh, getErr := c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
		if getErr != nil {
			return getErr
		}
		toUpdate = fresh
	}
}

// podsByCreation orders pods scheduled first, then oldest first, then by
// name (upstream's podByCreationTimestampAndPhase).
type podsByCreation []*corev1.Pod

func (o podsByCreation) Len() int      { return len(o) }
func (o podsByCreation) Swap(i, j int) { o[i], o[j] = o[j], o[i] }

func (o podsByCreation) Less(i, j int) bool {
	if (o[i].Spec.NodeName != "") != (o[j].Spec.NodeName != "") {
		return o[i].Spec.NodeName != ""
	}
	if o[i].CreationTimestamp.Equal(&o[j].CreationTimestamp) {
		return o[i].Name < o[j].Name
	}
	return o[i].CreationTimestamp.Before(&o[j].CreationTimestamp)
}
