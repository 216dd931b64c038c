package namespace

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
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

// Run waits for the informer caches, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: []cache.InformerSynced{c.synced},
		After: func(err error) (time.Duration, bool) {
			// Content is still going away (pods in their grace period):
			// come back about when it should be gone.
			var remaining *ResourcesRemainingError
			if errors.As(err, &remaining) {
				return time.Duration(remaining.Estimate/2+1) * time.Second, true
			}
			return 0, false
		},
	}.Run(ctx, workers)
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
