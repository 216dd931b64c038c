package daemonset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/deployment"
	"skiff.dev/controller-manager/pkg/controller/history"
)

// rollingUpdate replaces the pods of old revisions, as upstream's: without
// surge it deletes old pods while at most maxUnavailable pods are
// unavailable and lets manage create the new ones; with surge it creates a
// new pod next to an old one on up to maxSurge nodes and deletes the old
// one once the new one is available.
func (c *Controller) rollingUpdate(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string) error {
	logger := klog.FromContext(ctx)
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for DaemonSet %q: %w", ds.Name, err)
	}
	maxSurge, maxUnavailable, desired, err := c.updatedDesiredNodeCounts(ctx, ds, nodes, byNode)
	if err != nil {
		return fmt.Errorf("couldn't get unavailable numbers: %w", err)
	}
	now := c.clock.Now()
	available := func(p *corev1.Pod) bool { return controllerutil.IsPodAvailable(p, ds.Spec.MinReadySeconds, now) }
	nodeNames := sortedKeys(byNode)

	if maxSurge == 0 {
		var numUnavailable int
		var replacements, candidates []string
		for _, nodeName := range nodeNames {
			newPod, oldPod, ok := findUpdatedPodsOnNode(ds, byNode[nodeName], hash)
			if !ok {
				// manage prunes the excess first; count it unavailable.
				numUnavailable++
				continue
			}
			switch {
			case oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
				// manage creates or deletes here.
				numUnavailable++
			case newPod != nil:
				if !available(newPod) {
					numUnavailable++
				}
			default:
				switch {
				case !available(oldPod):
					// Not serving anyway: replace it now.
					replacements = append(replacements, oldPod.Name)
					numUnavailable++
				case numUnavailable >= maxUnavailable:
				default:
					candidates = append(candidates, oldPod.Name)
				}
			}
		}
		remaining := min(max(maxUnavailable-numUnavailable, 0), len(candidates))
		logger.V(5).Info("DaemonSet allowing replacements", "daemonSet", klog.KObj(ds), "replacements", len(replacements),
			"maxUnavailable", maxUnavailable, "numUnavailable", numUnavailable, "candidates", len(candidates))
		return c.syncNodes(ctx, ds, append(replacements, candidates[:remaining]...), nil, hash)
	}

	var oldPodsToDelete, shouldNotRunPodsToDelete, candidateNewNodes, allowedNewNodes []string
	var numSurge, numAvailable int
	for _, nodeName := range nodeNames {
		newPod, oldPod, ok := findUpdatedPodsOnNode(ds, byNode[nodeName], hash)
		if !ok {
			numSurge++
			continue
		}
		if oldPod != nil {
			if available(oldPod) {
				numAvailable++
			}
		} else if newPod != nil && available(newPod) {
			numAvailable++
		}
		switch {
		case oldPod == nil:
			// manage handles this node.
		case newPod == nil:
			node, err := c.nodeLister.Get(nodeName)
			if err != nil {
				return fmt.Errorf("couldn't get node for nodeName %q: %w", nodeName, err)
			}
			shouldRun, _ := NodeShouldRunDaemonPod(node, ds)
			switch {
			case !available(oldPod):
				if !shouldRun {
					oldPodsToDelete = append(oldPodsToDelete, oldPod.Name)
					continue
				}
				allowedNewNodes = append(allowedNewNodes, nodeName)
			case !shouldRun:
				shouldNotRunPodsToDelete = append(shouldNotRunPodsToDelete, oldPod.Name)
			case numSurge < maxSurge:
				candidateNewNodes = append(candidateNewNodes, nodeName)
			}
		default:
			// Already surged here: the old pod goes once the new one is
			// available.
			if !available(newPod) {
				numSurge++
				continue
			}
			oldPodsToDelete = append(oldPodsToDelete, oldPod.Name)
		}
	}
	// With surge the owner expects full availability: a pod on a node it
	// should no longer run on goes only once others are available.
	if deletable := min(numAvailable-desired, len(shouldNotRunPodsToDelete)); deletable > 0 {
		oldPodsToDelete = append(oldPodsToDelete, shouldNotRunPodsToDelete[:deletable]...)
	}
	remaining := min(max(maxSurge-numSurge, 0), len(candidateNewNodes))
	logger.V(5).Info("DaemonSet allowing surge", "daemonSet", klog.KObj(ds), "replacements", len(allowedNewNodes),
		"maxSurge", maxSurge, "numSurge", numSurge, "candidates", len(candidateNewNodes))
	return c.syncNodes(ctx, ds, oldPodsToDelete, append(allowedNewNodes, candidateNewNodes[:remaining]...), hash)
}

func sortedKeys(m map[string][]*corev1.Pod) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// findUpdatedPodsOnNode returns the node's pod of the current revision and
// its pod of an old one (pods being deleted left out); ok is false when
// there are two of either, which manage prunes first.
func findUpdatedPodsOnNode(ds *appsv1.DaemonSet, pods []*corev1.Pod, hash string) (newPod, oldPod *corev1.Pod, ok bool) {
	generation, err := templateGeneration(ds)
	if err != nil {
		generation = nil
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if isPodUpdated(pod, hash, generation) {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = pod
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = pod
		}
	}
	return newPod, oldPod, true
}

// updatedDesiredNodeCounts counts the nodes that should run a pod, adds an
// empty entry to byNode for each that has none, and scales maxSurge and
// maxUnavailable to that count. Both zero (impossible after validation)
// means maxUnavailable 1.
func (c *Controller) updatedDesiredNodeCounts(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod) (maxSurge, maxUnavailable, desired int, err error) {
	for _, node := range nodes {
		if shouldRun, _ := NodeShouldRunDaemonPod(node, ds); !shouldRun {
			continue
		}
		desired++
		if _, ok := byNode[node.Name]; !ok {
			byNode[node.Name] = nil
		}
	}
	maxUnavailable, err = unavailableCount(ds, desired)
	if err != nil {
		return -1, -1, -1, fmt.Errorf("invalid value for MaxUnavailable: %w", err)
	}
	maxSurge, err = surgeCount(ds, desired)
	if err != nil {
		return -1, -1, -1, fmt.Errorf("invalid value for MaxSurge: %w", err)
	}
	if desired > 0 && maxUnavailable == 0 && maxSurge == 0 {
		klog.FromContext(ctx).Info("DaemonSet is not configured for surge or unavailability, defaulting to accepting unavailability", "daemonSet", klog.KObj(ds))
		maxUnavailable = 1
	}
	return maxSurge, maxUnavailable, desired, nil
}

// constructHistory returns ds's current revision, creating it when no
// revision holds its template (or renumbering it to be the newest, after a
// rollback), and its old revisions.
func (c *Controller) constructHistory(ctx context.Context, ds *appsv1.DaemonSet) (cur *appsv1.ControllerRevision, old []*appsv1.ControllerRevision, err error) {
	histories, err := c.controlledHistories(ctx, ds)
	if err != nil {
		return nil, nil, err
	}
	patch, err := getPatch(ds)
	if err != nil {
		return nil, nil, err
	}
	var current []*appsv1.ControllerRevision
	for _, h := range histories {
		// Older revisions may lack the hash label: their name serves.
		if _, ok := h.Labels[RevisionHashLabel]; !ok {
			toUpdate := h.DeepCopy()
			if toUpdate.Labels == nil {
				toUpdate.Labels = map[string]string{}
			}
			toUpdate.Labels[RevisionHashLabel] = toUpdate.Name
			if h, err = c.client.AppsV1().ControllerRevisions(ds.Namespace).Update(ctx, toUpdate, metav1.UpdateOptions{}); err != nil {
				return nil, nil, err
			}
		}
		if bytes.Equal(patch, h.Data.Raw) {
			current = append(current, h)
		} else {
			old = append(old, h)
		}
	}
	next := maxRevision(old) + 1
	if len(current) == 0 {
		cur, err = c.snapshot(ctx, ds, patch, next)
		return cur, old, err
	}
	cur, err = c.dedupCurHistories(ctx, ds, current)
	if err != nil {
		return nil, nil, err
	}
	if cur.Revision < next {
		// A rollback to this revision: it becomes the newest.
		if cur, err = c.history.UpdateControllerRevision(ctx, cur, next); err != nil {
			return nil, nil, err
		}
	}
	return cur, old, nil
}

func maxRevision(hs []*appsv1.ControllerRevision) int64 {
	var m int64
	for _, h := range hs {
		m = max(m, h.Revision)
	}
	return m
}

// controlledHistories returns the revisions ds owns after adopting
// matching orphans and releasing owned ones that stopped matching.
func (c *Controller) controlledHistories(ctx context.Context, ds *appsv1.DaemonSet) ([]*appsv1.ControllerRevision, error) {
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, err
	}
	owned, err := controllerutil.ByController[*appsv1.ControllerRevision](c.historyIndex, ds.UID)
	if err != nil {
		return nil, err
	}
	orphans, err := controllerutil.Orphans[*appsv1.ControllerRevision](c.historyIndex, ds.Namespace)
	if err != nil {
		return nil, err
	}
	out := make([]*appsv1.ControllerRevision, 0, len(owned))
	for _, h := range owned {
		if selector.Matches(labels.Set(h.Labels)) {
			out = append(out, h)
			continue
		}
		if _, err := c.history.ReleaseControllerRevision(ctx, ds, h); err != nil {
			return nil, err
		}
	}
	var canAdopt error
	checked := false
	for _, h := range orphans {
		if h.DeletionTimestamp != nil || !selector.Matches(labels.Set(h.Labels)) {
			continue
		}
		if !checked {
			checked = true
			canAdopt = controllerutil.RecheckDeletionTimestamp(ds.UID, func(ctx context.Context) (metav1.Object, error) {
				return c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
			})(ctx)
		}
		if canAdopt != nil {
			return nil, fmt.Errorf("can't adopt ControllerRevision %s/%s: %w", h.Namespace, h.Name, canAdopt)
		}
		adopted, err := c.history.AdoptControllerRevision(ctx, ds, controllerKind, h)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, adopted)
	}
	return out, nil
}

// dedupCurHistories keeps the newest of the revisions holding ds's
// template, relabels ds's pods with its hash and deletes the others.
func (c *Controller) dedupCurHistories(ctx context.Context, ds *appsv1.DaemonSet, current []*appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if len(current) == 1 {
		return current[0], nil
	}
	keep := current[0]
	for _, h := range current {
		if h.Revision >= keep.Revision {
			keep = h
		}
	}
	pods, err := c.daemonPods(ctx, ds)
	if err != nil {
		return nil, err
	}
	keepHash := keep.Labels[RevisionHashLabel]
	for _, pod := range pods {
		if pod.Labels[RevisionHashLabel] == keepHash {
			continue
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{RevisionHashLabel: keepHash}}})
		if err != nil {
			return nil, err
		}
		if _, err := c.client.CoreV1().Pods(ds.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return nil, err
		}
	}
	for _, h := range current {
		if h.Name == keep.Name {
			continue
		}
		if err := c.history.DeleteControllerRevision(ctx, h); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return keep, nil
}

// getPatch is what a revision of ds stores: a strategic merge patch that
// replaces spec.template, which is also what `kubectl rollout undo`
// applies to roll back.
func getPatch(ds *appsv1.DaemonSet) ([]byte, error) {
	dsBytes, err := json.Marshal(ds)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(dsBytes, &raw); err != nil {
		return nil, err
	}
	spec := raw["spec"].(map[string]any)
	template := spec["template"].(map[string]any)
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// snapshot creates the revision numbered revision that holds ds's
// template, named "<ds>-<hash of the template and collisionCount>". A
// name taken by a revision with other data is a hash collision: it bumps
// status.collisionCount and fails, so the next sync uses another name.
func (c *Controller) snapshot(ctx context.Context, ds *appsv1.DaemonSet, patch []byte, revision int64) (*appsv1.ControllerRevision, error) {
	hash := deployment.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
	name := history.ControllerRevisionName(ds.Name, hash)
	lbls := make(map[string]string, len(ds.Spec.Template.Labels)+1)
	for k, v := range ds.Spec.Template.Labels {
		lbls[k] = v
	}
	lbls[RevisionHashLabel] = hash
	h := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ds.Namespace, Labels: lbls, Annotations: ds.Annotations,
			OwnerReferences: []metav1.OwnerReference{*controllerutil.NewControllerRef(ds, controllerKind.GroupVersion().String(), controllerKind.Kind)},
		},
		Data:     runtime.RawExtension{Raw: patch},
		Revision: revision,
	}
	created, err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Create(ctx, h, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return created, err
	}
	outerErr := err
	logger := klog.FromContext(ctx)
	logger.V(2).Info("DaemonSet already has history", "daemonSet", klog.KObj(ds), "revision", name)
	existing, err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if bytes.Equal(patch, existing.Data.Raw) {
		if ref := metav1.GetControllerOfNoCopy(existing); ref == nil || ref.UID == ds.UID {
			return existing, nil
		}
	}
	fresh, err := c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(fresh.Status.CollisionCount, ds.Status.CollisionCount) {
		return nil, fmt.Errorf("found a stale collision count (%v, expected %v) of DaemonSet %q while processing; will retry until it is updated",
			ds.Status.CollisionCount, fresh.Status.CollisionCount, ds.Name)
	}
	if fresh.Status.CollisionCount == nil {
		fresh.Status.CollisionCount = new(int32)
	}
	*fresh.Status.CollisionCount++
	if _, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, fresh, metav1.UpdateOptions{}); err != nil {
		return nil, err
	}
	logger.V(2).Info("Found a hash collision for DaemonSet - bumping collisionCount to resolve it", "daemonSet", klog.KObj(ds), "collisionCount", *fresh.Status.CollisionCount)
	return nil, outerErr
}

// cleanupHistory deletes the oldest old revisions beyond
// spec.revisionHistoryLimit that no live pod still runs.
func (c *Controller) cleanupHistory(ctx context.Context, ds *appsv1.DaemonSet, old []*appsv1.ControllerRevision) error {
	limit := 10
	if ds.Spec.RevisionHistoryLimit != nil {
		limit = int(*ds.Spec.RevisionHistoryLimit)
	}
	toKill := len(old) - limit
	if toKill <= 0 {
		return nil
	}
	byNode, err := c.nodesToDaemonPods(ctx, ds, true)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for DaemonSet %q: %w", ds.Name, err)
	}
	live := map[string]bool{}
	for _, pods := range byNode {
		for _, p := range pods {
			if h := p.Labels[RevisionHashLabel]; h != "" {
				live[h] = true
			}
		}
	}
	sorted := append([]*appsv1.ControllerRevision(nil), old...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Revision < sorted[j].Revision })
	for _, h := range sorted {
		if toKill <= 0 {
			break
		}
		if live[h.Labels[RevisionHashLabel]] {
			continue
		}
		if err := c.history.DeleteControllerRevision(ctx, h); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		toKill--
	}
	return nil
}
