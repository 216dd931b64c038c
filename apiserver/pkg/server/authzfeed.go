package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storage"
)

// authzFeed is one resource whose watch events reach an authorizer or an
// admission plugin.
type authzFeed struct {
	store *registry.Store
	apply func(watch.Event)
	reset func()
	// fields, when set, selects the objects the feed needs.
	fields fields.Selector
}

func closedOr(ch chan struct{}, msg string) error {
	select {
	case <-ch:
		return nil
	default:
		return errors.New(msg)
	}
}

// runAuthorizerFeeds keeps the RBAC and Node authorizers' objects current
// from the server's own watch caches, and closes authzSynced once each
// has read the initial state.
func (s *Server) runAuthorizerFeeds(ctx context.Context) error {
	type feed = authzFeed
	var feeds []feed
	if s.rbac != nil {
		for _, res := range []string{"roles", "clusterroles", "rolebindings", "clusterrolebindings"} {
			res := res
			feeds = append(feeds, feed{s.store("rbac.authorization.k8s.io", res), s.rbac.Apply, func() { s.rbac.Reset(res) }, nil})
		}
	}
	if s.nodeAuthz != nil {
		// Only pods bound to a node matter to the Node authorizer: the
		// watch leaves out the rest (every pod is created unbound), and
		// sends a pod's binding as its ADDED event.
		feeds = append(feeds, feed{s.store("", "pods"), s.nodeAuthz.Apply, s.nodeAuthz.Reset, fields.OneTermNotEqualSelector("spec.nodeName", "")})
	}
	feeds = append(feeds, feed{s.store("", "namespaces"), s.nsLifecycle.Apply, s.nsLifecycle.Reset, nil},
		feed{s.store("admissionregistration.k8s.io", "mutatingwebhookconfigurations"), s.webhooks.Apply, func() { s.webhooks.Reset(true) }, nil},
		feed{s.store("admissionregistration.k8s.io", "validatingwebhookconfigurations"), s.webhooks.Apply, func() { s.webhooks.Reset(false) }, nil})
	feeds = append(feeds, s.policyFeeds()...)
	var wg sync.WaitGroup
	var once sync.Once
	synced := make(chan struct{}, len(feeds))
	for _, f := range feeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.feed(ctx, f.store, f.fields, f.apply, f.reset, synced)
		}()
	}
	go func() {
		for range feeds {
			select {
			case <-synced:
			case <-ctx.Done():
				return
			}
		}
		once.Do(func() { close(s.authzSynced) })
	}()
	wg.Wait()
	return nil
}

// feed watches one resource from the cache, starting with its whole state,
// and resumes from the last revision when the watch ends.
func (s *Server) feed(ctx context.Context, st *registry.Store, sel fields.Selector, apply func(watch.Event), reset func(), synced chan<- struct{}) {
	logger := klog.FromContext(ctx).WithValues("resource", st.R.Resource)
	rv := ""
	first := true
	for ctx.Err() == nil {
		opts := storage.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true, Predicate: storage.SelectionPredicate{Field: sel}}
		if rv == "" {
			opts.SendInitialEvents = ptr.To(true)
			opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
		}
		w, err := st.Watch(ctx, "", opts)
		if err != nil {
			if errors.Is(err, storage.ErrGone) {
				rv = ""
			}
			logger.V(2).Info("authorizer watch failed, retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		fresh := rv == ""
		var initial []watch.Event
		for ev := range w.ResultChan() {
			m, _ := meta.Accessor(ev.Object)
			if ev.Type == watch.Bookmark {
				if m != nil && m.GetResourceVersion() != "" && !fresh {
					rv = m.GetResourceVersion()
				}
				if fresh && m != nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
					// The whole state has arrived: it replaces what was known,
					// so objects deleted while the watch was down are dropped.
					reset()
					for _, e := range initial {
						apply(e)
					}
					initial, fresh, rv = nil, false, m.GetResourceVersion()
					if first {
						first = false
						synced <- struct{}{}
					}
				}
				continue
			}
			if ev.Type == watch.Error {
				rv = ""
				break
			}
			if fresh {
				initial = append(initial, ev)
				continue
			}
			if m != nil && m.GetResourceVersion() != "" {
				rv = m.GetResourceVersion()
			}
			apply(ev)
		}
		if fresh {
			// Ended before the whole state arrived: start over.
			rv = ""
		}
		w.Stop()
	}
}
