package integration

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// waitFor polls cond until it returns nil, for at most 30 seconds.
func waitFor(t *testing.T, cond func() error) error {
	t.Helper()
	return waitForWithin(t, 30*time.Second, cond)
}

// waitForWithin is waitFor with a deadline of the caller's.
func waitForWithin(t *testing.T, timeout time.Duration, cond func() error) error {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = cond()
		return last == nil, nil
	})
	if err != nil {
		return last
	}
	return nil
}
