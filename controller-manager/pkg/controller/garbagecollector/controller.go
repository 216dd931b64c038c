package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName is the controller's name, as upstream names it.
const ControllerName = "garbage-collector-controller"

// DefaultDiscoveryResyncPeriod is how often upstream's controller manager
// re-reads discovery for the collector.
const DefaultDiscoveryResyncPeriod = 30 * time.Second

// monitorSyncTimeout bounds the wait for the informers before collecting.
const monitorSyncTimeout = 30 * time.Second

// DefaultIgnoredResources are not collected (upstream's list).
func DefaultIgnoredResources() []schema.GroupResource {
	return []schema.GroupResource{{Group: "", Resource: "events"}, {Group: "events.k8s.io", Resource: "events"}}
}

// Options configure the collector.
type Options struct {
	// DiscoveryResyncPeriod is how often discovery is re-read to watch
	// resources served later.
	DiscoveryResyncPeriod time.Duration
	// IgnoredResources are not watched; nil means DefaultIgnoredResources.
	IgnoredResources []schema.GroupResource
}

// Controller is the garbage collector.
type Controller struct {
	metadata  metadata.Interface
	discovery discovery.DiscoveryInterface
	recorder  record.EventRecorder
	metrics   *metrics.Metrics
	opts      Options
	ignored   map[schema.GroupResource]bool
	graph     *graph
	factory   metadatainformer.SharedInformerFactory

	attemptToDelete workqueue.TypedRateLimitingInterface[types.UID]
	attemptToOrphan workqueue.TypedRateLimitingInterface[types.UID]

	mu       sync.Mutex
	mapper   meta.RESTMapper
	monitors map[schema.GroupVersionResource]cache.SharedIndexInformer
}

// NewController builds the collector; it makes its own metadata informers.
// recorder is unused (the collector records no events) and may be nil.
func NewController(metadataClient metadata.Interface, disco discovery.DiscoveryInterface, recorder record.EventRecorder,
	m *metrics.Metrics, opts Options) (*Controller, error) {
	if metadataClient == nil || disco == nil {
		return nil, errors.New("garbage collector: a metadata client and a discovery client are required")
	}
	if opts.DiscoveryResyncPeriod <= 0 {
		opts.DiscoveryResyncPeriod = DefaultDiscoveryResyncPeriod
	}
	if opts.IgnoredResources == nil {
		opts.IgnoredResources = DefaultIgnoredResources()
	}
	ignored := map[schema.GroupResource]bool{}
	for _, gr := range opts.IgnoredResources {
		ignored[gr] = true
	}
	return &Controller{
		metadata:  metadataClient,
		discovery: disco,
		recorder:  recorder,
		metrics:   m,
		opts:      opts,
		ignored:   ignored,
		graph:     newGraph(),
		factory:   metadatainformer.NewSharedInformerFactory(metadataClient, 0),
		attemptToDelete: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.UID](),
			metrics.QueueConfig[types.UID](m, "garbage_collector_attempt_to_delete")),
		attemptToOrphan: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.UID](),
			metrics.QueueConfig[types.UID](m, "garbage_collector_attempt_to_orphan")),
		monitors: map[schema.GroupVersionResource]cache.SharedIndexInformer{},
	}, nil
}

// Run discovers the resources, watches them, waits for the graph to be
// complete, then runs workers on both queues until ctx is done. Discovery
// is re-read every DiscoveryResyncPeriod.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer c.attemptToDelete.ShutDown()
	defer c.attemptToOrphan.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "controller", ControllerName)
	defer logger.Info("Shutting down controller", "controller", ControllerName)
	defer c.factory.Shutdown()

	if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.resyncMonitors(ctx); err != nil {
			logger.Error(err, "Garbage collector: discovering the resources to watch")
		}
		return c.monitorCount() > 0, nil
	}); err != nil {
		return nil
	}
	// As upstream: wait for the graph, but not forever (a resource that
	// cannot be listed must not stop collection of the others).
	syncCtx, cancel := context.WithTimeout(ctx, monitorSyncTimeout)
	synced := cache.WaitForCacheSync(syncCtx.Done(), c.monitorsSynced()...)
	cancel()
	if ctx.Err() != nil {
		return nil
	}
	if synced {
		logger.Info("All resource monitors have synced. Proceeding to collect garbage")
	} else {
		logger.Info("Garbage collector: not all resource monitors could be synced, proceeding anyway")
	}
	for range max(workers, 1) {
		go wait.UntilWithContext(ctx, c.deleteWorker, time.Second)
		go wait.UntilWithContext(ctx, c.orphanWorker, time.Second)
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := c.resyncMonitors(ctx); err != nil {
			logger.Error(err, "Garbage collector: re-reading discovery")
		}
	}, c.opts.DiscoveryResyncPeriod)
	return nil
}

func (c *Controller) monitorCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.monitors)
}

func (c *Controller) monitorsSynced() []cache.InformerSynced {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []cache.InformerSynced
	for _, inf := range c.monitors {
		out = append(out, inf.HasSynced)
	}
	return out
}

// resyncMonitors reads discovery, refreshes the REST mapper and starts a
// metadata informer for each new resource. Resources that are no longer
// served keep their (idle) informer.
func (c *Controller) resyncMonitors(ctx context.Context) error {
	groupResources, err := restmapper.GetAPIGroupResources(c.discovery)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return err
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groupResources)
	resources := c.deletableResources(groupResources)
	c.mu.Lock()
	c.mapper = mapper
	var added []string
	for gvr, gvk := range resources {
		if _, ok := c.monitors[gvr]; ok {
			continue
		}
		inf := c.factory.ForResource(gvr).Informer()
		if _, herr := inf.AddEventHandler(c.handlers(gvk)); herr != nil {
			c.mu.Unlock()
			return herr
		}
		c.monitors[gvr] = inf
		added = append(added, gvr.String())
	}
	c.mu.Unlock()
	if len(added) > 0 {
		klog.FromContext(ctx).V(2).Info("Garbage collector watches new resources", "resources", added)
		c.factory.Start(ctx.Done())
	}
	return err
}

// deletableResources are the preferred versions of the resources with the
// list, watch and delete verbs, with their kinds.
func (c *Controller) deletableResources(groups []*restmapper.APIGroupResources) map[schema.GroupVersionResource]schema.GroupVersionKind {
	out := map[schema.GroupVersionResource]schema.GroupVersionKind{}
	for _, g := range groups {
		version := g.Group.PreferredVersion.Version
		if version == "" && len(g.Group.Versions) > 0 {
			version = g.Group.Versions[0].Version
		}
		for _, r := range g.VersionedResources[version] {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, "list", "watch", "delete") {
				continue
			}
			gvr := schema.GroupVersionResource{Group: g.Group.Name, Version: version, Resource: r.Name}
			if c.ignored[gvr.GroupResource()] {
				continue
			}
			out[gvr] = schema.GroupVersionKind{Group: g.Group.Name, Version: version, Kind: r.Kind}
		}
	}
	return out
}

func hasVerbs(have metav1.Verbs, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// handlers feed the graph from one resource's informer.
func (c *Controller) handlers(gvk schema.GroupVersionKind) cache.ResourceEventHandler {
	apiVersion, kind := gvk.GroupVersion().String(), gvk.Kind
	upsert := func(obj any) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		id := objectReference{OwnerReference: metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: m.GetName(), UID: m.GetUID()}, Namespace: m.GetNamespace()}
		c.enqueue(c.graph.observe(id, m.GetOwnerReferences(), m.GetDeletionTimestamp() != nil, m.GetFinalizers()))
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    upsert,
		UpdateFunc: func(_, obj any) { upsert(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			m, err := meta.Accessor(obj)
			if err != nil {
				return
			}
			c.enqueue(c.graph.remove(m.GetUID()))
		},
	}
}

func (c *Controller) enqueue(e enqueuer) {
	for _, uid := range e.attemptToDelete {
		c.attemptToDelete.Add(uid)
	}
	for _, uid := range e.attemptToOrphan {
		c.attemptToOrphan.Add(uid)
	}
}

// restMapping maps an apiVersion and kind to its resource.
func (c *Controller) restMapping(apiVersion, kind string) (*meta.RESTMapping, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	mapper := c.mapper
	c.mu.Unlock()
	if mapper == nil {
		return nil, fmt.Errorf("no REST mapping yet for %s %s", apiVersion, kind)
	}
	return mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
}

func (c *Controller) deleteWorker(ctx context.Context) {
	for c.processNext(ctx, c.attemptToDelete, c.attemptToDeleteItem) {
	}
}

func (c *Controller) orphanWorker(ctx context.Context) {
	for c.processNext(ctx, c.attemptToOrphan, c.attemptToOrphanItem) {
	}
}

// errRequeue asks for the item to be looked at again later.
var errRequeue = errors.New("requeue")

func (c *Controller) processNext(ctx context.Context, q workqueue.TypedRateLimitingInterface[types.UID], sync func(context.Context, types.UID) error) bool {
	uid, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(uid)
	start := time.Now()
	err := sync(ctx, uid)
	if errors.Is(err, errRequeue) {
		c.metrics.ObserveSync(ControllerName, start, nil)
		q.AddRateLimited(uid)
		return true
	}
	c.metrics.ObserveSync(ControllerName, start, err)
	if err == nil {
		q.Forget(uid)
		return true
	}
	utilruntime.HandleErrorWithContext(ctx, err, "Garbage collector", "uid", uid)
	q.AddRateLimited(uid)
	return true
}
