package deployment

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
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller and the source of its events.
const ControllerName = "deployment-controller"

// Options tune the controller; the zero value is upstream's behaviour.
type Options struct {
	// Clock times conditions and progress deadlines (nil: the real
	// clock).
	Clock clock.Clock
}

// Controller is the Deployment controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	metrics  *metrics.Metrics
	clock    clock.Clock

	dLister    appslisters.DeploymentLister
	rsLister   appslisters.ReplicaSetLister
	rsIndexer  cache.Indexer
	podIndexer cache.Indexer
	synced     []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

var controllerKind = appsv1.SchemeGroupVersion.WithKind("Deployment")

// NewController builds the controller and registers its informer handlers
// and indexes. recorder's events should have ControllerName as source.
func NewController(client kubernetes.Interface, dInformer appsinformers.DeploymentInformer, rsInformer appsinformers.ReplicaSetInformer,
	podInformer coreinformers.PodInformer, recorder record.EventRecorder, m *metrics.Metrics, opts Options) *Controller {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	c := &Controller{
		client:     client,
		recorder:   recorder,
		metrics:    m,
		clock:      opts.Clock,
		dLister:    dInformer.Lister(),
		rsLister:   rsInformer.Lister(),
		rsIndexer:  rsInformer.Informer().GetIndexer(),
		podIndexer: podInformer.Informer().GetIndexer(),
		synced: []cache.InformerSynced{dInformer.Informer().HasSynced, rsInformer.Informer().HasSynced,
			podInformer.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "deployment")),
	}
	for _, inf := range []cache.SharedIndexInformer{rsInformer.Informer(), podInformer.Informer()} {
		if err := controllerutil.AddControllerUIDIndex(inf); err != nil {
			utilruntime.HandleError(fmt.Errorf("adding the controller index: %w", err))
		}
	}
	_, _ = dInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: c.deleteDeployment,
	})
	_, _ = rsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addReplicaSet,
		UpdateFunc: c.updateReplicaSet,
		DeleteFunc: c.deleteReplicaSet,
	})
	_, _ = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: c.deletePod,
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

func (c *Controller) enqueueRateLimited(d *appsv1.Deployment) {
	if key, err := cache.MetaNamespaceKeyFunc(d); err == nil {
		c.queue.AddRateLimited(key)
	}
}

func (c *Controller) enqueueAfter(d *appsv1.Deployment, after time.Duration) {
	if key, err := cache.MetaNamespaceKeyFunc(d); err == nil {
		c.queue.AddAfter(key, after)
	}
}

func (c *Controller) deleteDeployment(obj any) {
	if _, ok := obj.(*appsv1.Deployment); !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("couldn't get object from tombstone %#v", obj))
			return
		}
		if _, ok := tomb.Obj.(*appsv1.Deployment); !ok {
			utilruntime.HandleError(fmt.Errorf("tombstone contained object that is not a Deployment %#v", obj))
			return
		}
	}
	c.enqueue(obj)
}

// resolveControllerRef returns the Deployment ref points to, or nil.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.Deployment {
	if ref.Kind != controllerKind.Kind {
		return nil
	}
	d, err := c.dLister.Deployments(namespace).Get(ref.Name)
	if err != nil || d.UID != ref.UID {
		return nil
	}
	return d
}

// deploymentsForOrphan returns the Deployments whose selector matches the
// orphan ReplicaSet.
func (c *Controller) deploymentsForOrphan(rs *appsv1.ReplicaSet) []*appsv1.Deployment {
	if len(rs.Labels) == 0 {
		return nil
	}
	all, err := c.dLister.Deployments(rs.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*appsv1.Deployment
	for _, d := range all {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(rs.Labels)) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func (c *Controller) addReplicaSet(obj any) {
	rs := obj.(*appsv1.ReplicaSet)
	if rs.DeletionTimestamp != nil {
		c.deleteReplicaSet(rs)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		if d := c.resolveControllerRef(rs.Namespace, ref); d != nil {
			c.enqueue(d)
		}
		return
	}
	for _, d := range c.deploymentsForOrphan(rs) {
		c.enqueue(d)
	}
}

func (c *Controller) updateReplicaSet(old, cur any) {
	oldRS, curRS := old.(*appsv1.ReplicaSet), cur.(*appsv1.ReplicaSet)
	if curRS.ResourceVersion == oldRS.ResourceVersion {
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(curRS), metav1.GetControllerOfNoCopy(oldRS)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if d := c.resolveControllerRef(oldRS.Namespace, oldRef); d != nil {
			c.enqueue(d)
		}
	}
	if curRef != nil {
		if d := c.resolveControllerRef(curRS.Namespace, curRef); d != nil {
			c.enqueue(d)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(curRS.Labels, oldRS.Labels) {
		for _, d := range c.deploymentsForOrphan(curRS) {
			c.enqueue(d)
		}
	}
}

func (c *Controller) deleteReplicaSet(obj any) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("couldn't get object from tombstone %#v", obj))
			return
		}
		if rs, ok = tomb.Obj.(*appsv1.ReplicaSet); !ok {
			utilruntime.HandleError(fmt.Errorf("tombstone contained object that is not a ReplicaSet %#v", obj))
			return
		}
	}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		if d := c.resolveControllerRef(rs.Namespace, ref); d != nil {
			c.enqueue(d)
		}
	}
}

// deletePod wakes a Recreate Deployment waiting for its old pods to go
// once the last of them is gone.
func (c *Controller) deletePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			return
		}
		if pod, ok = tomb.Obj.(*corev1.Pod); !ok {
			return
		}
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return
	}
	rs, err := c.rsLister.ReplicaSets(pod.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return
	}
	rsRef := metav1.GetControllerOfNoCopy(rs)
	if rsRef == nil {
		return
	}
	d := c.resolveControllerRef(rs.Namespace, rsRef)
	if d == nil || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		return
	}
	if remaining, err := controllerutil.ByController[*corev1.Pod](c.podIndexer, rs.UID); err == nil && len(remaining) == 0 {
		c.enqueue(d)
	}
}
