package daemonset

import (
	"context"
	"fmt"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/history"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller and the source of its events.
const ControllerName = "daemonset-controller"

// Event reasons, as upstream's (SuccessfulCreate, SuccessfulDelete,
// FailedCreate and FailedDelete come from controllerutil's PodControl).
const (
	// SelectingAllReason: the DaemonSet's selector is empty.
	SelectingAllReason = "SelectingAll"
	// FailedPlacementReason: a daemon pod cannot be placed on its node.
	FailedPlacementReason = "FailedPlacement"
	// FailedDaemonPodReason: a daemon pod failed and is deleted.
	FailedDaemonPodReason = "FailedDaemonPod"
	// SucceededDaemonPodReason: a daemon pod finished and is deleted.
	SucceededDaemonPodReason = "SucceededDaemonPod"
)

// BurstReplicas is upstream's limit of pods created or deleted in one
// sync.
const BurstReplicas = 250

// Back-off of the replacement of failed daemon pods, per node, as
// upstream's.
const (
	failedPodsBackoffInitial = time.Second
	failedPodsBackoffMax     = 15 * time.Minute
	backoffGCInterval        = time.Minute
)

// Options tune the controller; the zero value is upstream's behaviour.
type Options struct {
	// BurstReplicas limits the pods created or deleted in one sync (0:
	// BurstReplicas).
	BurstReplicas int
	// Clock times availability, expectations and back-off (nil: the real
	// clock).
	Clock clock.WithTicker
}

// Controller is the DaemonSet controller.
type Controller struct {
	client        kubernetes.Interface
	podControl    controllerutil.PodControl
	history       history.Interface
	recorder      record.EventRecorder
	metrics       *metrics.Metrics
	clock         clock.WithTicker
	burstReplicas int

	dsLister      appslisters.DaemonSetLister
	podLister     corelisters.PodLister
	podIndexer    cache.Indexer
	nodeLister    corelisters.NodeLister
	historyLister appslisters.ControllerRevisionLister
	historyIndex  cache.Indexer
	synced        []cache.InformerSynced

	expectations      *controllerutil.Expectations
	failedPodsBackoff *flowcontrol.Backoff
	queue             workqueue.TypedRateLimitingInterface[string]
}

var controllerKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

// NewController builds the controller and registers its informer handlers
// and indexes. recorder's events should have ControllerName as source.
func NewController(client kubernetes.Interface, dsInformer appsinformers.DaemonSetInformer, historyInformer appsinformers.ControllerRevisionInformer,
	podInformer coreinformers.PodInformer, nodeInformer coreinformers.NodeInformer,
	recorder record.EventRecorder, m *metrics.Metrics, opts Options) *Controller {
	if opts.BurstReplicas <= 0 {
		opts.BurstReplicas = BurstReplicas
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	c := &Controller{
		client:            client,
		podControl:        controllerutil.RealPodControl{Client: client, Recorder: recorder},
		history:           history.NewHistory(client, historyInformer.Lister()),
		recorder:          recorder,
		metrics:           m,
		clock:             opts.Clock,
		burstReplicas:     opts.BurstReplicas,
		dsLister:          dsInformer.Lister(),
		podLister:         podInformer.Lister(),
		podIndexer:        podInformer.Informer().GetIndexer(),
		nodeLister:        nodeInformer.Lister(),
		historyLister:     historyInformer.Lister(),
		historyIndex:      historyInformer.Informer().GetIndexer(),
		expectations:      controllerutil.NewExpectations(opts.Clock),
		failedPodsBackoff: flowcontrol.NewBackOffWithJitter(failedPodsBackoffInitial, failedPodsBackoffMax, 0),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "daemonset")),
		synced: []cache.InformerSynced{dsInformer.Informer().HasSynced, historyInformer.Informer().HasSynced,
			podInformer.Informer().HasSynced, nodeInformer.Informer().HasSynced},
	}
	c.failedPodsBackoff.Clock = opts.Clock
	for _, inf := range []cache.SharedIndexInformer{podInformer.Informer(), historyInformer.Informer()} {
		if err := controllerutil.AddControllerUIDIndex(inf); err != nil {
			utilruntime.HandleError(fmt.Errorf("adding the controller index: %w", err))
		}
	}
	_, _ = dsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: c.updateDaemonSet,
		DeleteFunc: c.deleteDaemonSet,
	})
	_, _ = historyInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addHistory,
		UpdateFunc: c.updateHistory,
		DeleteFunc: c.deleteHistory,
	})
	_, _ = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	})
	_, _ = nodeInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addNode,
		UpdateFunc: c.updateNode,
		DeleteFunc: c.deleteNode,
	})
	return c
}

// Run waits for the informer caches, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	go wait.UntilWithContext(ctx, func(context.Context) { c.failedPodsBackoff.GC() }, backoffGCInterval)
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
	}.Run(ctx, workers)
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) enqueueAfter(ds *appsv1.DaemonSet, after time.Duration) {
	key, err := cache.MetaNamespaceKeyFunc(ds)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.AddAfter(key, after)
}

// fromTombstone unwraps a deleted object of type T.
func fromTombstone[T any](obj any) (T, bool) {
	if t, ok := obj.(T); ok {
		return t, true
	}
	var zero T
	tomb, ok := obj.(cache.DeletedFinalStateUnknown)
	if !ok {
		utilruntime.HandleError(fmt.Errorf("couldn't get object from tombstone %#v", obj))
		return zero, false
	}
	t, ok := tomb.Obj.(T)
	if !ok {
		utilruntime.HandleError(fmt.Errorf("tombstone contained an unexpected object %#v", tomb.Obj))
	}
	return t, ok
}

func (c *Controller) updateDaemonSet(old, cur any) {
	oldDS, curDS := old.(*appsv1.DaemonSet), cur.(*appsv1.DaemonSet)
	if oldDS.UID != curDS.UID {
		// Deleted and created again between two events: the old one's
		// expectations must go.
		key, err := cache.MetaNamespaceKeyFunc(oldDS)
		if err == nil {
			c.deleteDaemonSet(cache.DeletedFinalStateUnknown{Key: key, Obj: oldDS})
		}
	}
	c.enqueue(curDS)
}

func (c *Controller) deleteDaemonSet(obj any) {
	ds, ok := fromTombstone[*appsv1.DaemonSet](obj)
	if !ok {
		return
	}
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(ds)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.expectations.Delete(key)
	c.queue.Add(key)
}

// resolveControllerRef returns the DaemonSet ref points to, or nil.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.DaemonSet {
	if ref.Kind != controllerKind.Kind {
		return nil
	}
	ds, err := c.dsLister.DaemonSets(namespace).Get(ref.Name)
	if err != nil || ds.UID != ref.UID {
		return nil
	}
	return ds
}

// daemonSetsSelecting returns the DaemonSets of namespace whose selector
// matches lbls (for an orphan pod or revision).
func (c *Controller) daemonSetsSelecting(namespace string, lbls map[string]string) []*appsv1.DaemonSet {
	if len(lbls) == 0 {
		return nil
	}
	all, err := c.dsLister.DaemonSets(namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*appsv1.DaemonSet
	for _, ds := range all {
		sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(lbls)) {
			continue
		}
		out = append(out, ds)
	}
	return out
}

func (c *Controller) addHistory(obj any) {
	h := obj.(*appsv1.ControllerRevision)
	if h.DeletionTimestamp != nil {
		c.deleteHistory(h)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(h); ref != nil {
		// A revision of a DaemonSet: that DaemonSet made it in a sync,
		// nothing to do.
		return
	}
	for _, ds := range c.daemonSetsSelecting(h.Namespace, h.Labels) {
		c.enqueue(ds)
	}
}

func (c *Controller) updateHistory(old, cur any) {
	oldH, curH := old.(*appsv1.ControllerRevision), cur.(*appsv1.ControllerRevision)
	if oldH.ResourceVersion == curH.ResourceVersion {
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(curH), metav1.GetControllerOfNoCopy(oldH)
	if !reflect.DeepEqual(curRef, oldRef) && oldRef != nil {
		if ds := c.resolveControllerRef(oldH.Namespace, oldRef); ds != nil {
			c.enqueue(ds)
		}
	}
	if curRef != nil {
		if ds := c.resolveControllerRef(curH.Namespace, curRef); ds != nil {
			c.enqueue(ds)
		}
		return
	}
	if !reflect.DeepEqual(curH.Labels, oldH.Labels) || !reflect.DeepEqual(curRef, oldRef) {
		for _, ds := range c.daemonSetsSelecting(curH.Namespace, curH.Labels) {
			c.enqueue(ds)
		}
	}
}

func (c *Controller) deleteHistory(obj any) {
	h, ok := fromTombstone[*appsv1.ControllerRevision](obj)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOfNoCopy(h); ref != nil {
		if ds := c.resolveControllerRef(h.Namespace, ref); ds != nil {
			c.enqueue(ds)
		}
	}
}

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		// Seen for the first time already being deleted (after a restart).
		c.deletePod(pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		ds := c.resolveControllerRef(pod.Namespace, ref)
		if ds == nil {
			return
		}
		key, _ := cache.MetaNamespaceKeyFunc(ds)
		c.expectations.CreationObserved(key)
		c.queue.Add(key)
		return
	}
	for _, ds := range c.daemonSetsSelecting(pod.Namespace, pod.Labels) {
		c.enqueue(ds)
	}
}

func (c *Controller) updatePod(old, cur any) {
	oldPod, curPod := old.(*corev1.Pod), cur.(*corev1.Pod)
	if curPod.ResourceVersion == oldPod.ResourceVersion {
		return
	}
	if curPod.DeletionTimestamp != nil {
		// A graceful deletion started: count it as the deletion now.
		c.deletePod(curPod)
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(curPod), metav1.GetControllerOfNoCopy(oldPod)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if ds := c.resolveControllerRef(oldPod.Namespace, oldRef); ds != nil {
			c.enqueue(ds)
		}
	}
	if curRef != nil {
		ds := c.resolveControllerRef(curPod.Namespace, curRef)
		if ds == nil {
			return
		}
		c.enqueue(ds)
		if !controllerutil.IsPodReady(oldPod) && controllerutil.IsPodReady(curPod) && ds.Spec.MinReadySeconds > 0 {
			// Available minReadySeconds from now; a second more avoids
			// landing just before.
			c.enqueueAfter(ds, time.Duration(ds.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		if msg, ok := unschedulable(curPod); ok {
			if _, was := unschedulable(oldPod); !was {
				node, _ := TargetNodeName(curPod)
				c.recorder.Eventf(ds, corev1.EventTypeWarning, FailedPlacementReason,
					"failed to place pod %s on %q: %s", curPod.Name, node, msg)
			}
		}
		return
	}
	if refChanged || !reflect.DeepEqual(curPod.Labels, oldPod.Labels) {
		for _, ds := range c.daemonSetsSelecting(curPod.Namespace, curPod.Labels) {
			c.enqueue(ds)
		}
	}
}

// unschedulable returns the scheduler's message when it found pod
// unschedulable (its PodScheduled condition False, reason Unschedulable).
func unschedulable(pod *corev1.Pod) (string, bool) {
	if pod.Spec.NodeName != "" {
		return "", false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message, true
		}
	}
	return "", false
}

func (c *Controller) deletePod(obj any) {
	pod, ok := fromTombstone[*corev1.Pod](obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return
	}
	ds := c.resolveControllerRef(pod.Namespace, ref)
	if ds == nil {
		return
	}
	key, _ := cache.MetaNamespaceKeyFunc(ds)
	c.expectations.DeletionObserved(key, controllerutil.PodKey(pod))
	c.queue.Add(key)
}

func (c *Controller) addNode(obj any) {
	node := obj.(*corev1.Node)
	all, err := c.dsLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ds := range all {
		if shouldRun, _ := NodeShouldRunDaemonPod(node, ds); shouldRun {
			c.enqueue(ds)
		}
	}
}

func (c *Controller) updateNode(old, cur any) {
	oldNode, curNode := old.(*corev1.Node), cur.(*corev1.Node)
	// Only labels and taints decide placement.
	if apiequality.Semantic.DeepEqual(oldNode.Labels, curNode.Labels) &&
		apiequality.Semantic.DeepEqual(oldNode.Spec.Taints, curNode.Spec.Taints) {
		return
	}
	all, err := c.dsLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ds := range all {
		oldRun, oldContinue := NodeShouldRunDaemonPod(oldNode, ds)
		curRun, curContinue := NodeShouldRunDaemonPod(curNode, ds)
		if oldRun != curRun || oldContinue != curContinue {
			c.enqueue(ds)
		}
	}
}

// deleteNode resyncs every DaemonSet that wanted the node: its desired
// count drops, and its pods there without a node are deleted.
func (c *Controller) deleteNode(obj any) {
	node, ok := fromTombstone[*corev1.Node](obj)
	if !ok {
		return
	}
	c.addNode(node)
}
