package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/util/workqueue"
)

func TestQueueAndSyncMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](), QueueConfig[string](m, "replicaset"))
	defer q.ShutDown()
	q.Add("default/a")
	q.Add("default/b")
	if got := testutil.ToFloat64(m.queue.adds.WithLabelValues("replicaset")); got != 2 {
		t.Errorf("workqueue_adds_total = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.queue.depth.WithLabelValues("replicaset")); got != 2 {
		t.Errorf("workqueue_depth = %v, want 2", got)
	}
	q.AddRateLimited("default/c")
	if got := testutil.ToFloat64(m.queue.retries.WithLabelValues("replicaset")); got != 1 {
		t.Errorf("workqueue_retries_total = %v, want 1", got)
	}

	m.ObserveSync("replicaset", time.Now(), nil)
	m.ObserveSync("replicaset", time.Now(), errors.New("boom"))
	m.ObserveSync("replicaset", time.Now(), nil)
	want := `
# HELP controller_sync_total Syncs run by each controller, by result (success or error).
# TYPE controller_sync_total counter
controller_sync_total{controller="replicaset",result="error"} 1
controller_sync_total{controller="replicaset",result="success"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "controller_sync_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.syncDuration); n != 1 {
		t.Errorf("controller_sync_duration_seconds has %d series, want 1", n)
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	m.ObserveSync("x", time.Now(), nil)
	if cfg := QueueConfig[string](m, "x"); cfg.MetricsProvider != nil || cfg.Name != "x" {
		t.Errorf("QueueConfig(nil) = %+v", cfg)
	}
}
