package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"skiff.dev/component-base/quota"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "resourcequota-controller"

// DefaultSyncPeriod is upstream's --resource-quota-sync-period: how often
// every quota is recomputed even without events.
const DefaultSyncPeriod = 5 * time.Minute

// notSyncedDelay is how soon a quota whose objects were not in the cache
// yet is tried again.
const notSyncedDelay = 500 * time.Millisecond

// Options tune the controller; the zero value counts only the typed kinds
// and resyncs every DefaultSyncPeriod.
type Options struct {
	// SyncPeriod is how often every quota is recomputed (0: DefaultSyncPeriod).
	SyncPeriod time.Duration
	// Metadata and Discovery, when both set, let the controller count any
	// namespaced kind the server serves (count/<resource>.<group>,
	// secrets, replicationcontrollers) through metadata informers.
	Metadata  metadata.Interface
	Discovery discovery.DiscoveryInterface
	// InformerResync is the metadata informers' resync period (0: none).
	InformerResync time.Duration
	// Clock decides when terminating pods stop counting (nil: the real clock).
	Clock clock.Clock
}

// Controller is the resource quota controller.
type Controller struct {
	client     kubernetes.Interface
	metrics    *metrics.Metrics
	clock      clock.Clock
	syncPeriod time.Duration

	quotaLister corelisters.ResourceQuotaLister
	synced      []cache.InformerSynced
	// typed are the kinds read from the shared typed informers.
	typed map[schema.GroupResource]*source
	// others are started on demand; nil without Options.Metadata.
	others *metadataSources

	queue workqueue.TypedRateLimitingInterface[string]
}

// NewController builds the controller and registers its handlers on the
// factory's pod, Service, PersistentVolumeClaim, ConfigMap and
// ResourceQuota informers.
func NewController(client kubernetes.Interface, factory informers.SharedInformerFactory, m *metrics.Metrics, opts Options) (*Controller, error) {
	if opts.SyncPeriod < 0 {
		return nil, fmt.Errorf("resource quota: negative sync period %v", opts.SyncPeriod)
	}
	if opts.SyncPeriod == 0 {
		opts.SyncPeriod = DefaultSyncPeriod
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if (opts.Metadata == nil) != (opts.Discovery == nil) {
		return nil, errors.New("resource quota: Metadata and Discovery go together")
	}
	core := factory.Core().V1()
	quotas := core.ResourceQuotas().Informer()
	c := &Controller{
		client:      client,
		metrics:     m,
		clock:       opts.Clock,
		syncPeriod:  opts.SyncPeriod,
		quotaLister: core.ResourceQuotas().Lister(),
		typed:       map[schema.GroupResource]*source{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "resourcequota")),
	}
	typed := map[schema.GroupResource]cache.SharedIndexInformer{
		quota.PodsGR:                 core.Pods().Informer(),
		quota.ServicesGR:             core.Services().Informer(),
		quota.ClaimsGR:               core.PersistentVolumeClaims().Informer(),
		{Resource: "configmaps"}:     core.ConfigMaps().Informer(),
		{Resource: "resourcequotas"}: quotas,
	}
	for gr, inf := range typed {
		c.typed[gr] = &source{indexer: inf.GetIndexer(), synced: inf.HasSynced}
		c.synced = append(c.synced, inf.HasSynced)
		if gr.Resource == "resourcequotas" {
			continue
		}
		if _, err := inf.AddEventHandler(c.objectHandler(gr)); err != nil {
			return nil, err
		}
	}
	if _, err := quotas.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addQuota,
		UpdateFunc: c.updateQuota,
		DeleteFunc: c.deleteQuota,
	}); err != nil {
		return nil, err
	}
	if opts.Metadata != nil {
		c.others = &metadataSources{
			factory:  metadatainformer.NewSharedInformerFactory(opts.Metadata, opts.InformerResync),
			resolver: &resolver{discovery: opts.Discovery, clock: opts.Clock},
			onEvent:  c.objectChanged,
			sources:  map[schema.GroupResource]*source{},
		}
	}
	return c, nil
}

// Run waits for the caches, then runs workers and the periodic full resync
// until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	if c.others != nil {
		c.others.start(ctx.Done())
		defer c.others.factory.Shutdown()
	}
	go wait.UntilWithContext(ctx, func(context.Context) { c.resyncAll() }, c.syncPeriod)
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
		After: func(err error) (time.Duration, bool) {
			if errors.Is(err, errNotSynced) {
				return notSyncedDelay, true
			}
			return 0, false
		},
	}.Run(ctx, workers)
}

// resyncAll queues every quota and lets kinds that were not served be
// looked up again.
func (c *Controller) resyncAll() {
	if c.others != nil {
		c.others.resolver.forget()
	}
	all, err := c.quotaLister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, q := range all {
		c.enqueue(q)
	}
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) addQuota(obj any) {
	c.enqueue(obj)
	c.objectChanged(schema.GroupResource{Resource: "resourcequotas"}, obj)
}

// updateQuota reacts to spec changes, and to status.used going down:
// other status changes are this controller's own writes and admission's
// charges, as upstream reasons. A decrease may be the API server giving
// back a deleted object's usage after this controller already counted
// the deletion (the object gone from its cache), which would leave used
// below the truth until the next full resync; a sync puts it right (and
// writes nothing when the decrease was its own).
func (c *Controller) updateQuota(old, cur any) {
	o, n := old.(*corev1.ResourceQuota), cur.(*corev1.ResourceQuota)
	if !apiequality.Semantic.DeepEqual(o.Spec, n.Spec) {
		c.enqueue(cur)
		return
	}
	for name, was := range o.Status.Used {
		if now, ok := n.Status.Used[name]; ok && now.Cmp(was) < 0 {
			c.enqueue(cur)
			return
		}
	}
}

func (c *Controller) deleteQuota(obj any) {
	c.objectChanged(schema.GroupResource{Resource: "resourcequotas"}, obj)
}

// objectHandler reacts to additions and deletions of gr's objects, and to
// updates that change what the object counts.
func (c *Controller) objectHandler(gr schema.GroupResource) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.objectChanged(gr, obj) },
		UpdateFunc: func(old, cur any) {
			if c.usageChanged(gr, old, cur) {
				c.objectChanged(gr, cur)
			}
			if pod, ok := cur.(*corev1.Pod); ok {
				c.recheckWhenPodStopsCounting(pod)
			}
		},
		DeleteFunc: func(obj any) { c.objectChanged(gr, obj) },
	}
}

func (c *Controller) usageChanged(gr schema.GroupResource, old, cur any) bool {
	now := c.clock.Now()
	if !quota.Equal(quota.Usage(gr, old, now), quota.Usage(gr, cur, now)) {
		return true
	}
	o, ok1 := old.(*corev1.Pod)
	n, ok2 := cur.(*corev1.Pod)
	return ok1 && ok2 && quota.IsTerminating(o) != quota.IsTerminating(n)
}

// recheckWhenPodStopsCounting queues the pod's quotas for the moment a
// terminating pod's grace period has run out twice, when it stops counting.
func (c *Controller) recheckWhenPodStopsCounting(pod *corev1.Pod) {
	at := quota.PodStopsCountingAt(pod)
	if at.IsZero() {
		return
	}
	after := at.Sub(c.clock.Now()) + time.Second
	if after <= 0 {
		return
	}
	for _, key := range c.quotasTracking(quota.PodsGR, pod.Namespace) {
		c.queue.AddAfter(key, after)
	}
}

// objectChanged queues the quotas of obj's namespace that count gr.
func (c *Controller) objectChanged(gr schema.GroupResource, obj any) {
	ns, ok := namespaceOf(obj)
	if !ok || ns == "" {
		return
	}
	for _, key := range c.quotasTracking(gr, ns) {
		c.queue.Add(key)
	}
}

// quotasTracking returns the keys of the quotas in namespace whose
// spec.hard names a resource that gr's objects count towards.
func (c *Controller) quotasTracking(gr schema.GroupResource, namespace string) []string {
	quotas, err := c.quotaLister.ResourceQuotas(namespace).List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
		return nil
	}
	var keys []string
	for _, q := range quotas {
		for name := range q.Spec.Hard {
			if g, ok := quota.ResourceFor(name); ok && g == gr {
				keys = append(keys, q.Namespace+"/"+q.Name)
				break
			}
		}
	}
	return keys
}

// sourceFor returns where gr's objects are read from, or nil when the
// server does not serve gr (or the controller was built without metadata
// informers).
func (c *Controller) sourceFor(gr schema.GroupResource) (*source, error) {
	if s, ok := c.typed[gr]; ok {
		return s, nil
	}
	if c.others == nil {
		return nil, nil
	}
	return c.others.get(gr)
}
