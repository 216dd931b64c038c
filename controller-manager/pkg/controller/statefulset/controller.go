package statefulset

import (
	"context"
	"fmt"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/history"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller and the source of its events.
const ControllerName = "statefulset-controller"

var controllerKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

// Options tune the controller; the zero value is upstream's behaviour.
type Options struct {
	// Clock times availability (nil: the real clock).
	Clock clock.Clock
}

// Controller is the StatefulSet controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	metrics  *metrics.Metrics
	clock    clock.Clock
	history  history.Interface

	setLister  appslisters.StatefulSetLister
	podLister  corelisters.PodLister
	pvcLister  corelisters.PersistentVolumeClaimLister
	podIndexer cache.Indexer
	synced     []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

// NewController builds the controller and registers its informer handlers
// and indexes. recorder's events should have ControllerName as source.
func NewController(client kubernetes.Interface, setInformer appsinformers.StatefulSetInformer, podInformer coreinformers.PodInformer,
	pvcInformer coreinformers.PersistentVolumeClaimInformer, revInformer appsinformers.ControllerRevisionInformer,
	recorder record.EventRecorder, m *metrics.Metrics, opts Options) *Controller {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	c := &Controller{
		client:     client,
		recorder:   recorder,
		metrics:    m,
		clock:      opts.Clock,
		history:    history.NewHistory(client, revInformer.Lister()),
		setLister:  setInformer.Lister(),
		podLister:  podInformer.Lister(),
		pvcLister:  pvcInformer.Lister(),
		podIndexer: podInformer.Informer().GetIndexer(),
		synced: []cache.InformerSynced{setInformer.Informer().HasSynced, podInformer.Informer().HasSynced,
			pvcInformer.Informer().HasSynced, revInformer.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "statefulset")),
	}
	if err := controllerutil.AddControllerUIDIndex(podInformer.Informer()); err != nil {
		utilruntime.HandleError(fmt.Errorf("adding the controller index: %w", err))
	}
	_, _ = setInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: c.enqueue,
	})
	_, _ = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	})
	_, _ = pvcInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, cur any) { c.claimChanged(cur) },
		DeleteFunc: c.claimChanged,
	})
	return c
}

// Run waits for the informer caches, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
	}.Run(ctx, workers)
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) enqueueAfter(set *appsv1.StatefulSet, after time.Duration) {
	key, err := cache.MetaNamespaceKeyFunc(set)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.AddAfter(key, after)
}

// resolveControllerRef returns the StatefulSet ref points to, or nil.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.StatefulSet {
	if ref.Kind != controllerKind.Kind {
		return nil
	}
	set, err := c.setLister.StatefulSets(namespace).Get(ref.Name)
	if err != nil || set.UID != ref.UID {
		return nil
	}
	return set
}

// setsForOrphan returns the StatefulSets whose selector matches the
// orphan pod.
func (c *Controller) setsForOrphan(pod *corev1.Pod) []*appsv1.StatefulSet {
	all, err := c.setLister.StatefulSets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	return controllerutil.SelectingPod(all, func(set *appsv1.StatefulSet) *metav1.LabelSelector { return set.Spec.Selector }, pod)
}

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if set := c.resolveControllerRef(pod.Namespace, ref); set != nil {
			c.enqueue(set)
		}
		return
	}
	if pod.DeletionTimestamp != nil {
		return
	}
	for _, set := range c.setsForOrphan(pod) {
		c.enqueue(set)
	}
}

func (c *Controller) updatePod(old, cur any) {
	oldPod, curPod := old.(*corev1.Pod), cur.(*corev1.Pod)
	if curPod.ResourceVersion == oldPod.ResourceVersion {
		return
	}
	labelsChanged := !reflect.DeepEqual(curPod.Labels, oldPod.Labels)
	curRef, oldRef := metav1.GetControllerOfNoCopy(curPod), metav1.GetControllerOfNoCopy(oldPod)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if set := c.resolveControllerRef(oldPod.Namespace, oldRef); set != nil {
			c.enqueue(set)
		}
	}
	if curRef != nil {
		set := c.resolveControllerRef(curPod.Namespace, curRef)
		if set == nil {
			return
		}
		c.enqueue(set)
		if !controllerutil.IsPodReady(oldPod) && controllerutil.IsPodReady(curPod) && set.Spec.MinReadySeconds > 0 {
			// Available minReadySeconds from now: look again then.
			c.enqueueAfter(set, time.Duration(set.Spec.MinReadySeconds)*time.Second)
		}
		return
	}
	if labelsChanged || refChanged {
		for _, set := range c.setsForOrphan(curPod) {
			c.enqueue(set)
		}
	}
}

func (c *Controller) deletePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("couldn't get object from tombstone %#v", obj))
			return
		}
		if pod, ok = tomb.Obj.(*corev1.Pod); !ok {
			utilruntime.HandleError(fmt.Errorf("tombstone contained object that is not a pod %#v", obj))
			return
		}
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return
	}
	if set := c.resolveControllerRef(pod.Namespace, ref); set != nil {
		c.enqueue(set)
	}
}

// claimChanged requeues the set of a claim that a pod of the set owned
// (whenScaled Delete): the set waits for such a claim to go before it
// recreates the pod.
func (c *Controller) claimChanged(obj any) {
	claim, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			return
		}
		if claim, ok = tomb.Obj.(*corev1.PersistentVolumeClaim); !ok {
			return
		}
	}
	for _, ref := range claim.OwnerReferences {
		if ref.Kind != podKind.Kind || ref.APIVersion != "v1" {
			continue
		}
		if parent, ordinal := parentAndOrdinal(ref.Name); ordinal >= 0 {
			if set, err := c.setLister.StatefulSets(claim.Namespace).Get(parent); err == nil {
				c.enqueue(set)
			}
		}
	}
}
