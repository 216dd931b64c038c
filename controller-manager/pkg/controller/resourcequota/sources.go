package resourcequota

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// rediscoverAfter is how long a kind found missing from discovery stays
// missing before discovery is asked again (upstream's quota monitor
// re-reads discovery every 30 seconds).
const rediscoverAfter = 30 * time.Second

// errNotSynced: a kind's informer has not listed its objects yet.
var errNotSynced = errors.New("the objects a quota counts are not in the cache yet")

// source gives the objects of one kind, from an informer's cache.
type source struct {
	indexer cache.Indexer
	synced  cache.InformerSynced
}

// inNamespace lists the objects of the source in namespace.
func (s *source) inNamespace(namespace string) ([]any, error) {
	return s.indexer.ByIndex(cache.NamespaceIndex, namespace)
}

// metadataSources starts a metadata informer for each kind a quota counts
// that the typed informers do not cover, the first time a quota names it.
type metadataSources struct {
	factory  metadatainformer.SharedInformerFactory
	resolver *resolver
	// onEvent is told of every added or deleted object of a kind.
	onEvent func(gr schema.GroupResource, obj any)

	mu      sync.Mutex
	stop    <-chan struct{}
	sources map[schema.GroupResource]*source
}

// start records the channel that stops the informers; informers asked for
// before it are started then.
func (m *metadataSources) start(stop <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stop = stop
	m.factory.Start(stop)
}

// get returns the source of gr, starting its informer if needed, or nil
// when the server does not serve gr as a namespaced kind one can list and
// watch.
func (m *metadataSources) get(gr schema.GroupResource) (*source, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sources[gr]; ok {
		return s, nil
	}
	gvr, ok, err := m.resolver.resolve(gr)
	if err != nil || !ok {
		return nil, err
	}
	inf := m.factory.ForResource(gvr).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m.onEvent(gr, obj) },
		DeleteFunc: func(obj any) { m.onEvent(gr, obj) },
	}); err != nil {
		return nil, fmt.Errorf("watching %s: %w", gr, err)
	}
	s := &source{indexer: inf.GetIndexer(), synced: inf.HasSynced}
	m.sources[gr] = s
	if m.stop != nil {
		m.factory.Start(m.stop)
	}
	return s, nil
}

// resolver maps a kind to the version the server prefers, from discovery.
type resolver struct {
	discovery discovery.DiscoveryInterface
	clock     clock.Clock

	mu      sync.Mutex
	served  map[schema.GroupResource]schema.GroupVersionResource
	fetched time.Time
}

// resolve returns the preferred version of gr when the server serves it
// namespaced with list and watch.
func (r *resolver) resolve(gr schema.GroupResource) (schema.GroupVersionResource, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gvr, ok := r.served[gr]; ok {
		return gvr, true, nil
	}
	if !r.fetched.IsZero() && r.clock.Since(r.fetched) < rediscoverAfter {
		return schema.GroupVersionResource{}, false, nil
	}
	if err := r.refresh(); err != nil {
		return schema.GroupVersionResource{}, false, err
	}
	gvr, ok := r.served[gr]
	return gvr, ok, nil
}

// forget makes the next miss ask discovery again (new CRDs).
func (r *resolver) forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fetched = time.Time{}
}

func (r *resolver) refresh() error {
	if c, ok := r.discovery.(discovery.CachedDiscoveryInterface); ok {
		c.Invalidate()
	}
	lists, err := discovery.ServerPreferredNamespacedResources(r.discovery)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return fmt.Errorf("discovering the served kinds: %w", err)
	}
	if err != nil {
		// Some groups did not answer: use the others.
		utilruntime.HandleError(fmt.Errorf("discovering the served kinds: %w", err))
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "watch"}}, lists)
	served := map[schema.GroupResource]schema.GroupVersionResource{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range l.APIResources {
			served[gv.WithResource(res.Name).GroupResource()] = gv.WithResource(res.Name)
		}
	}
	r.served, r.fetched = served, r.clock.Now()
	return nil
}

// namespaceOf returns the namespace of an informer's object or tombstone.
func namespaceOf(obj any) (string, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("an informer event without metadata: %T", obj))
		return "", false
	}
	return m.GetNamespace(), true
}
