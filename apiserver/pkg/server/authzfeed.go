package server

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storefeed"
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

// feed keeps apply current with one resource of the server's storage (its
// watch cache) through client-go's Reflector: one list, then a watch that
// resumes from the last resourceVersion it saw; a list again (reset, then
// the whole state) only when that version is gone. synced gets one value
// once the first list has been applied.
func (s *Server) feed(ctx context.Context, st *registry.Store, sel fields.Selector, apply func(watch.Event), reset func(), synced chan<- struct{}) {
	storefeed.Feed(ctx, storefeed.ListWatch(ctx, st, sel), st.R.New(), apply, reset, func() { synced <- struct{}{} })
}
