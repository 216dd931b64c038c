// Package storefeed feeds the server's own consumers of API objects (the
// authorizers, admission plugins and the CRD controllers) from its storage
// with client-go's informer machinery: a cache.ListerWatcher over a
// registry.Store (its watch cache), which a cache.Reflector or informer
// lists once and then watches, resuming from the last resourceVersion
// after a watch ends and listing again only when that version is gone.
package storefeed

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"skiff.dev/apiserver/pkg/endpoints"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storage"
)

// ListWatch lists and watches every object of st (of every namespace) that
// sel selects (all when nil), with ctx's identity and lifetime. Storage
// errors reach the reflector as the API errors a client would see (a
// resourceVersion too old is 410 Expired, which makes it list again).
func ListWatch(ctx context.Context, st *registry.Store, sel fields.Selector) *cache.ListWatch {
	pred := storage.SelectionPredicate{Field: sel}
	gr := st.R.GroupResource()
	return &cache.ListWatch{
		ListFunc: func(o metav1.ListOptions) (runtime.Object, error) {
			obj, err := st.List(ctx, "", storage.ListOptions{
				ResourceVersion: o.ResourceVersion, ResourceVersionMatch: o.ResourceVersionMatch, Predicate: pred,
			})
			if err != nil {
				return nil, endpoints.ToStatusError(err, gr, "")
			}
			return obj, nil
		},
		WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
			w, err := st.Watch(ctx, "", storage.ListOptions{
				ResourceVersion: o.ResourceVersion, ResourceVersionMatch: o.ResourceVersionMatch,
				AllowWatchBookmarks: o.AllowWatchBookmarks, SendInitialEvents: o.SendInitialEvents, Predicate: pred,
			})
			if err != nil {
				return nil, endpoints.ToStatusError(err, gr, "")
			}
			return w, nil
		},
		// A list from the watch cache is whole: it has no pages.
		DisableChunking: true,
	}
}

// Feed runs a cache.Reflector over lw until ctx ends, handing each change
// to apply as a watch event (Added, Modified, Deleted). Each list the
// reflector makes (the first, and another when the watch cannot resume
// because its resourceVersion is gone) is a whole new state: reset forgets
// what the consumer knew, then every listed object is applied as Added, so
// objects deleted while the watch was down are dropped. synced, when set,
// is called once, after the first list has been applied.
func Feed(ctx context.Context, lw cache.ListerWatcher, objType runtime.Object, apply func(watch.Event), reset func(), synced func()) {
	st := &feedStore{Store: cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc), apply: apply, reset: reset, synced: synced}
	r := cache.NewReflectorWithOptions(lw, objType, st, cache.ReflectorOptions{Name: "storefeed " + fmt.Sprintf("%T", objType)})
	r.Run(ctx.Done())
}

// feedStore is the reflector's store: it keeps the objects seen (as any
// reflector store does) and hands each change on.
type feedStore struct {
	cache.Store
	apply  func(watch.Event)
	reset  func()
	synced func()
	once   sync.Once
}

func (f *feedStore) Add(obj any) error {
	if err := f.Store.Add(obj); err != nil {
		return err
	}
	send(f.apply, watch.Added, obj)
	return nil
}

func (f *feedStore) Update(obj any) error {
	if err := f.Store.Update(obj); err != nil {
		return err
	}
	send(f.apply, watch.Modified, obj)
	return nil
}

func (f *feedStore) Delete(obj any) error {
	if err := f.Store.Delete(obj); err != nil {
		return err
	}
	send(f.apply, watch.Deleted, obj)
	return nil
}

func (f *feedStore) Replace(list []any, rv string) error {
	if err := f.Store.Replace(list, rv); err != nil {
		return err
	}
	f.reset()
	for _, obj := range list {
		send(f.apply, watch.Added, obj)
	}
	if f.synced != nil {
		f.once.Do(f.synced)
	}
	return nil
}

func send(apply func(watch.Event), t watch.EventType, obj any) {
	if o, ok := obj.(runtime.Object); ok {
		apply(watch.Event{Type: t, Object: o})
	}
}
