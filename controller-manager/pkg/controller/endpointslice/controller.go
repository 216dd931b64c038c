package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

const (
	// ControllerName names the controller and the source of its events
	// (upstream's event source).
	ControllerName = "endpoint-slice-controller"
	// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
	// slices this controller owns; slices with another value are never
	// touched.
	ManagedBy = "endpointslice-controller.k8s.io"
	// DefaultMaxEndpointsPerSlice is upstream's --max-endpoints-per-slice.
	DefaultMaxEndpointsPerSlice = 100
	// MaxEndpointsPerSliceLimit is the largest value the flag accepts (the
	// API's limit of endpoints in one slice).
	MaxEndpointsPerSliceLimit = 1000

	// sliceChangeMinSyncDelay is the least delay before a Service is
	// synced after a change to one of its slices, so that a burst of slice
	// events makes one sync.
	sliceChangeMinSyncDelay = time.Second
	// staleRetryDelay is how long a sync waits when the slice cache does
	// not show the controller's own writes yet.
	staleRetryDelay = time.Second
)

// Options tune the controller; the zero value is upstream's defaults.
type Options struct {
	// MaxEndpointsPerSlice is the most endpoints one slice holds (0:
	// DefaultMaxEndpointsPerSlice).
	MaxEndpointsPerSlice int32
	// BatchPeriod delays the sync after a pod change, so that changes to
	// many pods of a Service make one update (0: none).
	BatchPeriod time.Duration
}

// Controller is the EndpointSlice controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	metrics  *metrics.Metrics
	// now is the clock of the change-to-write metric (time.Now when nil).
	now func() time.Time

	serviceLister corelisters.ServiceLister
	podIndexer    cache.Indexer
	nodeLister    corelisters.NodeLister
	sliceLister   discoverylisters.EndpointSliceLister
	synced        []cache.InformerSynced

	tracker      *sliceTracker
	triggerTimes *TriggerTimeTracker
	queue        workqueue.TypedRateLimitingInterface[string]

	maxEndpointsPerSlice int
	batchPeriod          time.Duration
}

// errStaleCache means the slice cache does not show the controller's own
// last writes for a Service yet.
var errStaleCache = errors.New("EndpointSlice informer cache is out of date")

// NewController builds the controller and registers its informer handlers.
// recorder's events should have ControllerName as source.
func NewController(client kubernetes.Interface, podInformer coreinformers.PodInformer, serviceInformer coreinformers.ServiceInformer,
	nodeInformer coreinformers.NodeInformer, sliceInformer discoveryinformers.EndpointSliceInformer,
	recorder record.EventRecorder, m *metrics.Metrics, opts Options) (*Controller, error) {
	if opts.MaxEndpointsPerSlice == 0 {
		opts.MaxEndpointsPerSlice = DefaultMaxEndpointsPerSlice
	}
	if opts.MaxEndpointsPerSlice < 1 || opts.MaxEndpointsPerSlice > MaxEndpointsPerSliceLimit {
		return nil, fmt.Errorf("max endpoints per slice must be between 1 and %d, not %d", MaxEndpointsPerSliceLimit, opts.MaxEndpointsPerSlice)
	}
	if opts.BatchPeriod < 0 {
		return nil, fmt.Errorf("the updates batch period must not be negative, not %s", opts.BatchPeriod)
	}
	if err := AddPodLabelIndex(podInformer.Informer()); err != nil {
		return nil, fmt.Errorf("adding the pod label index: %w", err)
	}
	c := &Controller{
		client:        client,
		recorder:      recorder,
		metrics:       m,
		serviceLister: serviceInformer.Lister(),
		podIndexer:    podInformer.Informer().GetIndexer(),
		nodeLister:    nodeInformer.Lister(),
		sliceLister:   sliceInformer.Lister(),
		synced: []cache.InformerSynced{podInformer.Informer().HasSynced, serviceInformer.Informer().HasSynced,
			sliceInformer.Informer().HasSynced, nodeInformer.Informer().HasSynced},
		tracker:      newSliceTracker(),
		triggerTimes: NewTriggerTimeTracker(),
		// Upstream's limiter: a 1 s to 1000 s back-off per Service, and
		// at most 10 retries a second overall, so that failing syncs do
		// not overwhelm the API server.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedMaxOfRateLimiter(
				workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 1000*time.Second),
				&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
			),
			metrics.QueueConfig[string](m, "endpoint_slice")),
		maxEndpointsPerSlice: int(opts.MaxEndpointsPerSlice),
		batchPeriod:          opts.BatchPeriod,
	}
	_, _ = serviceInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueService,
		UpdateFunc: func(_, cur any) { c.enqueueService(cur) },
		DeleteFunc: c.enqueueService,
	})
	_, _ = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	})
	_, _ = sliceInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addSlice,
		UpdateFunc: c.updateSlice,
		DeleteFunc: c.deleteSlice,
	})
	return c, nil
}

// Run waits for the informer caches, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
		After: func(err error) (time.Duration, bool) {
			if errors.Is(err, errStaleCache) {
				return staleRetryDelay, true
			}
			return 0, false
		},
	}.Run(ctx, workers)
}

func (c *Controller) enqueueService(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	svcs, err := ServicesForPod(c.serviceLister, pod)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("unable to get pod %s/%s's services: %w", pod.Namespace, pod.Name, err))
		return
	}
	for key := range svcs {
		c.queue.AddAfter(key, c.batchPeriod)
	}
}

func (c *Controller) updatePod(old, cur any) {
	for key := range ServicesToUpdateOnPodChange(c.serviceLister, old.(*corev1.Pod), cur.(*corev1.Pod)) {
		c.queue.AddAfter(key, c.batchPeriod)
	}
}

func (c *Controller) deletePod(obj any) {
	if pod := PodFromDeleteAction(obj); pod != nil {
		c.addPod(pod)
	}
}

func managedByController(slice *discoveryv1.EndpointSlice) bool {
	return slice.Labels[discoveryv1.LabelManagedBy] == ManagedBy
}

// addSlice syncs the Service of a slice the controller did not write.
func (c *Controller) addSlice(obj any) {
	slice := obj.(*discoveryv1.EndpointSlice)
	if managedByController(slice) && c.tracker.ShouldSync(slice) {
		c.enqueueForSlice(slice)
	}
}

// updateSlice syncs the Service of a slice someone else changed, or whose
// service-name or managed-by label changed.
func (c *Controller) updateSlice(old, cur any) {
	prev, slice := old.(*discoveryv1.EndpointSlice), cur.(*discoveryv1.EndpointSlice)
	if prev.Labels[discoveryv1.LabelServiceName] != slice.Labels[discoveryv1.LabelServiceName] {
		c.enqueueForSlice(slice)
		c.enqueueForSlice(prev)
		return
	}
	if managedByController(prev) != managedByController(slice) || (managedByController(slice) && c.tracker.ShouldSync(slice)) {
		c.enqueueForSlice(slice)
	}
}

// deleteSlice syncs the Service of a slice deleted by someone else.
func (c *Controller) deleteSlice(obj any) {
	slice, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("couldn't get object from tombstone %#v", obj))
			return
		}
		if slice, ok = tomb.Obj.(*discoveryv1.EndpointSlice); !ok {
			utilruntime.HandleError(fmt.Errorf("tombstone contained object that is not an EndpointSlice: %#v", obj))
			return
		}
	}
	if managedByController(slice) && c.tracker.Has(slice) && !c.tracker.HandleDeletion(slice) {
		c.enqueueForSlice(slice)
	}
}

// enqueueForSlice queues the slice's Service after the larger of
// sliceChangeMinSyncDelay and the batch period.
func (c *Controller) enqueueForSlice(slice *discoveryv1.EndpointSlice) {
	key, err := ServiceKeyForSlice(slice)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.AddAfter(key, max(sliceChangeMinSyncDelay, c.batchPeriod))
}

// sync makes the slices of the Service keyed key match its pods.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	start := time.Now()
	defer func() {
		logger.V(4).Info("Finished syncing service endpoint slices", "key", key, "elapsed", time.Since(start))
	}()
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	svc, err := c.serviceLister.Services(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		// The garbage collector deletes the slices through their
		// ownerReferences.
		c.triggerTimes.DeleteService(namespace, name)
		c.tracker.DeleteService(namespace, name)
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if len(svc.Spec.Selector) == 0 {
		// Slices of a Service without a selector are written by whoever
		// owns it (the API server for "kubernetes").
		return nil
	}

	pods, err := SelectedPods(c.podIndexer, namespace, svc.Spec.Selector)
	if err != nil {
		c.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToListPods", "Error listing Pods for Service %s/%s: %v", namespace, name, err)
		return err
	}
	slices, err := c.sliceLister.EndpointSlices(namespace).List(labels.Set{
		discoveryv1.LabelServiceName: svc.Name,
		discoveryv1.LabelManagedBy:   ManagedBy,
	}.AsSelectorPreValidated())
	if err != nil {
		c.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToListEndpointSlices", "Error listing Endpoint Slices for Service %s/%s: %v", namespace, name, err)
		return err
	}
	slices = dropPendingDeletion(slices)
	if c.tracker.StaleSlices(svc, slices) {
		c.metrics.ObserveEndpointSliceSync(metrics.EndpointSliceSync{Result: "stale"})
		return errStaleCache
	}
	// Computed before reconciling, so the tracker sees every sync even
	// when nothing is written.
	triggerTime := c.triggerTimes.Compute(svc, pods)
	st := metrics.EndpointSliceSync{Result: "success"}
	err = c.reconcile(ctx, svc, pods, slices, triggerTime, &st)
	if err != nil {
		st.Result = "error"
	}
	c.metrics.ObserveEndpointSliceSync(st)
	if err != nil {
		c.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToUpdateEndpointSlices",
			"Error updating Endpoint Slices for Service %s/%s: %v", namespace, name, err)
		return err
	}
	return nil
}

func dropPendingDeletion(in []*discoveryv1.EndpointSlice) []*discoveryv1.EndpointSlice {
	out := make([]*discoveryv1.EndpointSlice, 0, len(in))
	for _, s := range in {
		if s.DeletionTimestamp == nil {
			out = append(out, s)
		}
	}
	return out
}
