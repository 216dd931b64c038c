package iptables

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"

	"skiff.dev/proxy/pkg/healthcheck"
)

// fakeKernel accepts or fails every call, and counts restores.
type fakeKernel struct {
	fail     atomic.Bool
	restores atomic.Int32
	last     atomic.Value
}

func (k *fakeKernel) Restore(_ context.Context, data []byte) error {
	if k.fail.Load() {
		return errors.New("iptables-restore: exit status 1: line 3 failed")
	}
	k.restores.Add(1)
	k.last.Store(string(data))
	return nil
}

func (k *fakeKernel) Save(context.Context, string) ([]byte, error) {
	if k.fail.Load() {
		return nil, errors.New("iptables-save: exit status 1")
	}
	return nil, nil
}
func (k *fakeKernel) EnsureJumps([]Jump) error { return nil }
func (k *fakeKernel) DeleteJumps([]Jump) error { return nil }

// TestHealthzWhenSyncsFail runs the sync loop over a kernel that starts
// failing: /healthz stays 200 while syncs succeed and turns 503 once a
// change has waited longer than twice the sync period; it recovers when
// syncs succeed again.
func TestHealthzWhenSyncsFail(t *testing.T) {
	k := &fakeKernel{}
	h := newHarness(t, k)
	syncPeriod := 200 * time.Millisecond
	health := healthcheck.New(clock.RealClock{}, 2*syncPeriod)
	reg := prometheus.NewRegistry()
	h.p.o.Health, h.p.o.SyncPeriod, h.p.o.MinSyncPeriod, h.p.o.Metrics = health, syncPeriod, 10*time.Millisecond, NewMetrics(reg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.p.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	code := func() int {
		rec := httptest.NewRecorder()
		health.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		return rec.Code
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true,
			func(context.Context) (bool, error) { return cond(), nil }); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	waitFor("a first successful sync", func() bool { return k.restores.Load() > 0 })
	if c := code(); c != http.StatusOK {
		t.Fatalf("/healthz = %d after a successful sync", c)
	}

	k.fail.Store(true)
	h.set(svc("a", "10.96.0.10", []corev1.ServicePort{tcp("http", 80, 8080)}))
	waitFor("/healthz 503", func() bool { return code() == http.StatusServiceUnavailable })
	// The oldest waiting change is not older than the last successful
	// sync, so 503 comes at least twice the sync period after it.
	if _, st := health.Healthy(); st.CurrentTime.Sub(st.LastUpdated) < 2*syncPeriod {
		t.Fatalf("/healthz turned 503 %v after the last successful sync, before twice the sync period", st.CurrentTime.Sub(st.LastUpdated))
	}
	if n := testutil.ToFloat64(h.p.o.Metrics.SyncFailures); n == 0 {
		t.Fatal("no restore failure counted")
	}

	k.fail.Store(false)
	waitFor("/healthz 200 again", func() bool { return code() == http.StatusOK })
	if s, _ := k.last.Load().(string); !strings.Contains(s, "10.96.0.10") {
		t.Fatalf("the change was not written once the kernel recovered:\n%s", s)
	}
}

// TestChangesAreCoalesced: with --min-sync-period 1s, twenty changes in
// 200 ms reach the kernel in at most two syncs after the first one (the
// limiter lets two run back to back, then one per period), and the last
// sync holds all of them.
func TestChangesAreCoalesced(t *testing.T) {
	k := &fakeKernel{}
	h := newHarness(t, k)
	h.p.o.SyncPeriod, h.p.o.MinSyncPeriod = time.Hour, time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.p.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true,
			func(context.Context) (bool, error) { return cond(), nil }); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	waitFor("the first sync", func() bool { return k.restores.Load() == 1 })
	// The changes come 10 ms apart, each long enough for a sync of this
	// fake kernel to finish: without the limiter, each would be a sync.
	pace := time.NewTicker(10 * time.Millisecond)
	defer pace.Stop()
	var ips []string
	for i := range 20 {
		<-pace.C
		ip := fmt.Sprintf("10.96.1.%d", i+1)
		ips = append(ips, ip)
		h.set(svc(fmt.Sprintf("s%d", i), ip, []corev1.ServicePort{tcp("http", 80, 8080)}))
	}
	waitFor("every change in the kernel", func() bool {
		s, _ := k.last.Load().(string)
		for _, ip := range ips {
			if !strings.Contains(s, ip) {
				return false
			}
		}
		return true
	})
	if n := k.restores.Load(); n > 3 {
		t.Errorf("%d restores for a first sync and a burst of 20 changes, want at most 3", n)
	}
}
