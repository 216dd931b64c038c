package controllerutil

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// Workers is the loop every controller runs: take a key from the queue,
// sync it, forget it on success, put it back with back-off on error.
type Workers struct {
	// Name is the controller's name, in its logs and sync metrics.
	Name    string
	Queue   workqueue.TypedRateLimitingInterface[string]
	Sync    func(ctx context.Context, key string) error
	Metrics *metrics.Metrics
	// Synced are the informers to wait for before the first sync.
	Synced []cache.InformerSynced
	// Started, when set, runs once the caches are synced and before any
	// worker (state rebuilt from the caches).
	Started func() error
	// After, when set, may turn an error that means "not yet" into a plain
	// delay instead of the back-off.
	After func(err error) (time.Duration, bool)
}

// Run waits for the caches, runs n workers (at least one) until ctx ends,
// and shuts the queue down.
func (w Workers) Run(ctx context.Context, n int) error {
	defer utilruntime.HandleCrash()
	defer w.Queue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("controller", w.Name)
	ctx = klog.NewContext(ctx, logger)
	logger.Info("Starting controller")
	defer logger.Info("Shutting down controller")
	if !cache.WaitForNamedCacheSync(w.Name, ctx.Done(), w.Synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("%s: caches did not sync", w.Name)
	}
	if w.Started != nil {
		if err := w.Started(); err != nil {
			return err
		}
	}
	for range max(n, 1) {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for w.processNext(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (w Workers) processNext(ctx context.Context) bool {
	key, quit := w.Queue.Get()
	if quit {
		return false
	}
	defer w.Queue.Done(key)
	start := time.Now()
	err := w.Sync(ctx, key)
	w.Metrics.ObserveSync(w.Name, start, err)
	if err == nil {
		w.Queue.Forget(key)
		return true
	}
	if w.After != nil {
		if d, ok := w.After(err); ok {
			w.Queue.Forget(key)
			w.Queue.AddAfter(key, d)
			return true
		}
	}
	if apierrors.IsConflict(err) {
		// Optimistic concurrency: the cache was behind a write; the retry
		// reads the newer object.
		klog.FromContext(ctx).V(2).Info("Sync hit a conflict, retrying", "key", key, "err", err)
	} else {
		utilruntime.HandleErrorWithContext(ctx, err, "Sync failed", "key", key)
	}
	w.Queue.AddRateLimited(key)
	return true
}
