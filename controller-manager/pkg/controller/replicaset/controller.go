package replicaset

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"skiff.dev/component-base/tracing"
	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller and the source of its events.
const ControllerName = "replicaset-controller"

// BurstReplicas is upstream's default limit of pods created or deleted in
// one sync.
const BurstReplicas = 500

// Options tune the controller; the zero value is upstream's behaviour.
type Options struct {
	// BurstReplicas limits the pods created or deleted in one sync
	// (0: BurstReplicas).
	BurstReplicas int
	// Clock times availability and expectations (nil: the real clock).
	Clock clock.Clock
	// TracerProvider traces each sync (nil: off).
	TracerProvider trace.TracerProvider
}

// Controller is the ReplicaSet controller, or, over another Kind, the
// controller of that kind of replicated pods.
type Controller struct {
	name          string
	client        kubernetes.Interface
	podControl    controllerutil.PodControl
	recorder      record.EventRecorder
	metrics       *metrics.Metrics
	clock         clock.Clock
	burstReplicas int

	kind       Kind
	gvk        schema.GroupVersionKind
	rsIndexer  cache.Indexer
	podIndexer cache.Indexer
	synced     []cache.InformerSynced

	expectations *controllerutil.Expectations
	queue        workqueue.TypedRateLimitingInterface[string]
	tracer       trace.Tracer
	// syncSpan names a sync's span ("Sync ReplicaSet"); attrPrefix its
	// attributes ("k8s.replicaset", OpenTelemetry's names).
	syncSpan, attrPrefix string
}

// NewController builds the ReplicaSet controller and registers its informer
// handlers and indexes. recorder's events should have ControllerName as
// source.
func NewController(client kubernetes.Interface, rsInformer appsinformers.ReplicaSetInformer, podInformer coreinformers.PodInformer,
	recorder record.EventRecorder, m *metrics.Metrics, opts Options) *Controller {
	return NewBaseController(ControllerName, "replicaset", client, replicaSets{client: client, informer: rsInformer},
		podInformer, recorder, m, opts)
}

// NewBaseController builds the controller of kind's objects; name names its
// workers (in logs and metrics) and queueName its work queue.
func NewBaseController(name, queueName string, client kubernetes.Interface, kind Kind, podInformer coreinformers.PodInformer,
	recorder record.EventRecorder, m *metrics.Metrics, opts Options) *Controller {
	if opts.BurstReplicas <= 0 {
		opts.BurstReplicas = BurstReplicas
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	c := &Controller{
		name:          name,
		client:        client,
		podControl:    controllerutil.RealPodControl{Client: client, Recorder: recorder},
		recorder:      recorder,
		metrics:       m,
		clock:         opts.Clock,
		burstReplicas: opts.BurstReplicas,
		tracer:        tracing.Tracer(opts.TracerProvider, "skiff.dev/controller-manager/replicaset"),
		kind:          kind,
		gvk:           kind.GroupVersionKind(),
		rsIndexer:     kind.Informer().GetIndexer(),
		podIndexer:    podInformer.Informer().GetIndexer(),
		synced:        []cache.InformerSynced{kind.Informer().HasSynced, podInformer.Informer().HasSynced},
		expectations:  controllerutil.NewExpectations(opts.Clock),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, queueName)),
	}
	c.syncSpan, c.attrPrefix = "Sync "+c.gvk.Kind, "k8s."+strings.ToLower(c.gvk.Kind)
	for _, inf := range []cache.SharedIndexInformer{kind.Informer(), podInformer.Informer()} {
		if err := controllerutil.AddControllerUIDIndex(inf); err != nil {
			utilruntime.HandleError(fmt.Errorf("adding the controller index: %w", err))
		}
	}
	_, _ = kind.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: c.deleteRS,
	})
	_, _ = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	})
	return c
}

// Run waits for the informer caches, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: c.name, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
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

func (c *Controller) enqueueAfter(rs *appsv1.ReplicaSet, after time.Duration) {
	key, err := cache.MetaNamespaceKeyFunc(rs)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.AddAfter(key, after)
}

// deleteRS handles the removal of one of the kind's objects (or its
// tombstone).
func (c *Controller) deleteRS(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.expectations.Delete(key)
	c.queue.Add(key)
}

// resolveControllerRef returns the ReplicaSet ref points to, or nil when
// it is not a ReplicaSet of this cache with that UID.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.ReplicaSet {
	if ref.Kind != c.gvk.Kind {
		return nil
	}
	rs, err := c.kind.Get(namespace, ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil
	}
	return rs
}

// replicaSetsForOrphan returns the ReplicaSets whose selector matches the
// orphan pod.
func (c *Controller) replicaSetsForOrphan(pod *corev1.Pod) []*appsv1.ReplicaSet {
	all, err := c.kind.List(pod.Namespace)
	if err != nil {
		return nil
	}
	return controllerutil.SelectingPod(all, func(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.Spec.Selector }, pod)
}

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		// A pod seen for the first time already being deleted (after a
		// restart of the controller): count it as a deletion.
		c.deletePod(pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		rs := c.resolveControllerRef(pod.Namespace, ref)
		if rs == nil {
			return
		}
		key, _ := cache.MetaNamespaceKeyFunc(rs)
		c.expectations.CreationObserved(key)
		c.queue.Add(key)
		return
	}
	for _, rs := range c.replicaSetsForOrphan(pod) {
		c.enqueue(rs)
	}
}

func (c *Controller) updatePod(old, cur any) {
	oldPod, curPod := old.(*corev1.Pod), cur.(*corev1.Pod)
	if curPod.ResourceVersion == oldPod.ResourceVersion {
		return
	}
	labelsChanged := !reflect.DeepEqual(curPod.Labels, oldPod.Labels)
	if curPod.DeletionTimestamp != nil {
		// A graceful deletion started: the ReplicaSet replaces the pod
		// now rather than when the kubelet finishes.
		c.deletePod(curPod)
		if labelsChanged {
			c.deletePod(oldPod)
		}
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(curPod), metav1.GetControllerOfNoCopy(oldPod)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if rs := c.resolveControllerRef(oldPod.Namespace, oldRef); rs != nil {
			c.enqueue(rs)
		}
	}
	if curRef != nil {
		rs := c.resolveControllerRef(curPod.Namespace, curRef)
		if rs == nil {
			return
		}
		c.enqueue(rs)
		if !controllerutil.IsPodReady(oldPod) && controllerutil.IsPodReady(curPod) && rs.Spec.MinReadySeconds > 0 {
			// The pod becomes available minReadySeconds from now; a
			// second more avoids landing just before.
			c.enqueueAfter(rs, time.Duration(rs.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if labelsChanged || refChanged {
		for _, rs := range c.replicaSetsForOrphan(curPod) {
			c.enqueue(rs)
		}
	}
}

func (c *Controller) deletePod(obj any) {
	pod, ok := controllerutil.FromDeleted[*corev1.Pod](obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return
	}
	rs := c.resolveControllerRef(pod.Namespace, ref)
	if rs == nil {
		return
	}
	key, _ := cache.MetaNamespaceKeyFunc(rs)
	c.expectations.DeletionObserved(key, controllerutil.PodKey(pod))
	c.queue.Add(key)
}
