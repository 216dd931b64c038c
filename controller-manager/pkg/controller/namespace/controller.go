package namespace

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName is the controller's name, as upstream names it.
const ControllerName = "namespace-controller"

// DefaultSyncPeriod is upstream's --namespace-sync-period.
const DefaultSyncPeriod = 5 * time.Minute

// Options configure the controller.
type Options struct {
	// SyncPeriod is --namespace-sync-period: how often every namespace is
	// looked at again.
	SyncPeriod time.Duration
}

// Controller finalizes namespaces being deleted.
type Controller struct {
	deleter  *Deleter
	nsLister corelisters.NamespaceLister
	synced   cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	metrics  *metrics.Metrics
}

// NewController builds the controller. recorder is unused and may be nil.
func NewController(client kubernetes.Interface, metadataClient metadata.Interface, disco discovery.DiscoveryInterface,
	nsInformer coreinformers.NamespaceInformer, recorder record.EventRecorder, m *metrics.Metrics, opts Options) (*Controller, error) {
	if opts.SyncPeriod <= 0 {
		opts.SyncPeriod = DefaultSyncPeriod
	}
	c := &Controller{
		deleter:  NewDeleter(client.CoreV1().Namespaces(), metadataClient, disco).withPods(client.CoreV1().Pods),
		nsLister: nsInformer.Lister(),
		synced:   nsInformer.Informer().HasSynced,
		// Upstream's queue: per-item exponential back-off only.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 60*time.Second),
			metrics.QueueConfig[string](m, "namespace")),
		metrics: m,
	}
	_, err := nsInformer.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	}, opts.SyncPeriod)
	return c, err
}

func (c *Controller) enqueue(obj any) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok || ns.DeletionTimestamp == nil {
		return
	}
	c.queue.Add(ns.Name)
}

// Run runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "controller", ControllerName)
	defer logger.Info("Shutting down controller", "controller", ControllerName)
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return nil
	}
	for range workers {
		go wait.UntilWithContext(ctx, c.worker, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (c *Controller) worker(ctx context.Context) {
	for c.processNext(ctx) {
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	start := time.Now()
	err := c.sync(ctx, key)
	c.metrics.ObserveSync(ControllerName, start, err)
	var remaining *ResourcesRemainingError
	switch {
	case err == nil:
		c.queue.Forget(key)
	case errors.As(err, &remaining):
		// Content is still going away (pods in their grace period):
		// come back about when it should be gone.
		c.queue.Forget(key)
		c.queue.AddAfter(key, time.Duration(remaining.Estimate/2+1)*time.Second)
	default:
		utilruntime.HandleErrorWithContext(ctx, err, "Deleting namespace content", "namespace", key)
		c.queue.AddRateLimited(key)
	}
	return true
}

func (c *Controller) sync(ctx context.Context, name string) error {
	ns, err := c.nsLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil {
		return nil
	}
	return c.deleter.Delete(ctx, name)
}

// ResourcesRemainingError says content is still being deleted and when to
// look again.
type ResourcesRemainingError struct {
	// Estimate is the number of seconds the remaining content should take.
	Estimate int64
}

func (e *ResourcesRemainingError) Error() string {
	return fmt.Sprintf("some content remains in the namespace, estimate %d seconds before it is removed", e.Estimate)
}
