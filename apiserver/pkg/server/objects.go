package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/admission"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storage"
)

// objects lets admission plugins read stored objects through the stores.
type objects struct {
	s *Server
	// empty remembers, per resource and namespace, when etcd last had
	// nothing while the cache had nothing either (upstream's plugins keep
	// such live lookups for 30 s).
	empty *emptyLookups
}

var _ admission.Objects = objects{}

func newObjects(s *Server) objects {
	return objects{s: s, empty: &emptyLookups{ttl: 10 * time.Second, at: map[collectionKey]time.Time{}}}
}

// emptyLookups is a small TTL set of collections found empty in etcd.
type emptyLookups struct {
	ttl time.Duration
	mu  sync.Mutex
	at  map[collectionKey]time.Time
}

func (e *emptyLookups) fresh(key collectionKey, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.at[key]
	return ok && now.Sub(t) < e.ttl
}

// forget drops key: the collection has just been written to.
func (e *emptyLookups) forget(key collectionKey) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.at, key)
}

// created is told of each object this server has stored: its collection
// is no longer empty, though the watch cache may not show it yet (a
// ResourceQuota created just before a burst of pods, whose own admission
// found the namespace without quotas).
func (o objects) created(group, resource, namespace string) {
	o.empty.forget(emptyKey(group, resource, namespace))
}

// collectionKey names a collection: a resource in a namespace ("" for all).
type collectionKey struct{ group, resource, namespace string }

func emptyKey(group, resource, namespace string) collectionKey {
	return collectionKey{group, resource, namespace}
}

func (e *emptyLookups) set(key collectionKey, now time.Time, empty bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !empty {
		delete(e.at, key)
		return
	}
	if len(e.at) > 10000 {
		// Bounded: forget everything rather than grow without end.
		e.at = map[collectionKey]time.Time{}
	}
	e.at[key] = now
}

func (o objects) storeOf(group, resource string) (*registry.Store, error) {
	if o.s.handler == nil {
		return nil, fmt.Errorf("the API server is not set up yet")
	}
	st := o.s.store(group, resource)
	if st == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: resource}, "")
	}
	return st, nil
}

// Get reads one object from the watch cache as it is (etcd when the cache
// lacks it), as upstream's admission plugins read their listers with a
// live lookup on a miss; a missing one is a NotFound API error.
func (o objects) Get(ctx context.Context, group, resource, namespace, name string) (runtime.Object, error) {
	st, err := o.storeOf(group, resource)
	if err != nil {
		return nil, err
	}
	obj, err := st.GetCached(ctx, namespace, name)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: resource}, name)
	}
	return obj, err
}

// List reads a collection (of one namespace, or all for "") from the watch
// cache as it is, as upstream's admission plugins read their informers: a
// consistent list from the cache would make every admitted write wait until
// the cache of LimitRanges, ResourceQuotas or PriorityClasses had caught up
// with etcd's latest revision, which under a burst of writes to other
// resources can take seconds. An empty answer is checked against etcd
// itself, as upstream's plugins do a live lookup when their informer has
// nothing, and an empty etcd answer is trusted for a while (the cache sees
// a new object within milliseconds, well before that). What must be exact
// (a quota's usage) is charged by compare-and-swap on the object. The
// objects from the cache are its own, shared, as a lister's are: plugins
// read them and never modify them.
func (o objects) List(ctx context.Context, group, resource, namespace string) ([]runtime.Object, error) {
	st, err := o.storeOf(group, resource)
	if err != nil {
		return nil, err
	}
	items, cached, err := st.CachedObjects(ctx, namespace)
	if err != nil {
		return nil, err
	}
	if !cached {
		list, err := st.List(ctx, namespace, storage.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		if items, err = meta.ExtractList(list); err != nil {
			return nil, err
		}
	}
	if len(items) > 0 {
		return items, nil
	}
	key, now := emptyKey(group, resource, namespace), time.Now()
	if o.empty.fresh(key, now) {
		return nil, nil
	}
	list, err := st.List(ctx, namespace, storage.ListOptions{FromStorage: true})
	if err != nil {
		return nil, err
	}
	if items, err = meta.ExtractList(list); err != nil {
		return nil, err
	}
	o.empty.set(key, now, len(items) == 0)
	return items, nil
}

// updateQuota is the ResourceQuota plugin's compare-and-swap on a quota.
func (s *Server) updateQuota(ctx context.Context, namespace, name string, fn func(*corev1.ResourceQuota) error) error {
	st := s.store("", "resourcequotas")
	_, err := st.Storage.GuaranteedUpdate(ctx, st.Key(namespace, name), nil, false, func(existing runtime.Object) (runtime.Object, error) {
		q, ok := existing.(*corev1.ResourceQuota)
		if !ok {
			return nil, fmt.Errorf("expected a ResourceQuota, got %T", existing)
		}
		q = q.DeepCopy()
		if err := fn(q); err != nil {
			return nil, err
		}
		return q, nil
	})
	return err
}
