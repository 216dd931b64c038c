package controllerutil

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
)

var errNotYet = errors.New("not yet")

// The loop forgets a key that synced, retries one that failed with
// back-off, and honours After for "not yet".
func TestWorkers(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 10*time.Millisecond))
	var mu sync.Mutex
	calls := map[string]int{}
	w := Workers{
		Name:  "test",
		Queue: q,
		Sync: func(_ context.Context, key string) error {
			mu.Lock()
			defer mu.Unlock()
			calls[key]++
			switch {
			case key == "flaky" && calls[key] < 3:
				return errors.New("boom")
			case key == "later" && calls[key] < 2:
				return errNotYet
			}
			return nil
		},
		After: func(err error) (time.Duration, bool) { return 5 * time.Millisecond, errors.Is(err, errNotYet) },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, 2) }()
	for _, k := range []string{"ok", "flaky", "later"} {
		q.Add(k)
	}
	// A key is forgotten after its Sync returns: wait for that too.
	err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return calls["ok"] == 1 && calls["flaky"] == 3 && calls["later"] == 2 &&
			q.NumRequeues("flaky") == 0 && q.NumRequeues("later") == 0, nil
	})
	if err != nil {
		mu.Lock()
		t.Fatalf("calls = %v (want ok 1, flaky 3, later 2); requeues: flaky %d, later %d (want both forgotten after success)",
			calls, q.NumRequeues("flaky"), q.NumRequeues("later"))
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	if !q.ShuttingDown() {
		t.Error("the queue was not shut down")
	}
}
