package statefulset

import (
	"context"
	"fmt"
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

// InvalidSelectorReason is the event of a set whose selector does not
// parse; the set is not synced until it changes.
const InvalidSelectorReason = "InvalidSelector"

// sync brings the StatefulSet keyed key one step closer to its spec.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	set, err := c.setLister.StatefulSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("StatefulSet has been deleted", "statefulSet", key)
		return nil
	}
	if err != nil {
		return err
	}
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		// Not transient: retrying does not help.
		c.recorder.Eventf(set, corev1.EventTypeWarning, InvalidSelectorReason, "Invalid selector: %v", err)
		return nil
	}
	set = set.DeepCopy()
	if err := c.adoptOrphanRevisions(ctx, set, selector); err != nil {
		return err
	}
	pods, err := c.claimPods(ctx, set, selector)
	if err != nil {
		return err
	}
	revisions, err := c.history.ListControllerRevisions(set, selector)
	if err != nil {
		return err
	}
	status, err := c.updateStatefulSet(ctx, set, pods, sortedRevisions(revisions))
	if err != nil {
		return err
	}
	if set.Spec.MinReadySeconds > 0 && status != nil && status.AvailableReplicas != replicasOf(set) {
		c.enqueueAfter(set, time.Duration(set.Spec.MinReadySeconds)*time.Second)
	}
	return nil
}

// adoptOrphanRevisions adopts the orphan revisions matching set's
// selector.
func (c *Controller) adoptOrphanRevisions(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector) error {
	revisions, err := c.history.ListControllerRevisions(set, selector)
	if err != nil {
		return err
	}
	var orphans []*appsv1.ControllerRevision
	for _, r := range revisions {
		if metav1.GetControllerOfNoCopy(r) == nil {
			orphans = append(orphans, r)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	if err := c.canAdopt(set)(ctx); err != nil {
		return fmt.Errorf("can't adopt ControllerRevisions: %w", err)
	}
	for _, r := range orphans {
		if _, err := c.history.AdoptControllerRevision(ctx, set, controllerKind, r); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) canAdopt(set *appsv1.StatefulSet) func(context.Context) error {
	return controllerutil.RecheckDeletionTimestamp(set.UID, func(ctx context.Context) (metav1.Object, error) {
		return c.client.AppsV1().StatefulSets(set.Namespace).Get(ctx, set.Name, metav1.GetOptions{})
	})
}

// claimPods returns the pods set owns (terminating ones included: a set
// waits for them) after adopting its matching orphans named
// "<set>-<ordinal>" and releasing owned pods that stopped matching.
func (c *Controller) claimPods(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector) ([]*corev1.Pod, error) {
	owned, err := controllerutil.ByController[*corev1.Pod](c.podIndexer, set.UID)
	if err != nil {
		return nil, err
	}
	orphans, err := controllerutil.Orphans[*corev1.Pod](c.podIndexer, set.Namespace)
	if err != nil {
		return nil, err
	}
	candidates := owned
	for _, p := range orphans {
		if isMemberOf(set, p) {
			candidates = append(candidates, p)
		}
	}
	m := controllerutil.NewPodRefManager(c.client, set, controllerKind.GroupVersion().String(), controllerKind.Kind, selector, c.canAdopt(set))
	claimed, err := m.Claim(ctx, candidates)
	if err != nil {
		return nil, err
	}
	pods := claimed[:0]
	for _, p := range claimed {
		if isMemberOf(set, p) {
			pods = append(pods, p)
		}
	}
	return pods, nil
}
