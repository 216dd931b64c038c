package integration

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// etcdWatchers reads the embedded etcd's own gauge of open watchers (it
// registers on the default Prometheus registry, in this process).
func etcdWatchers(t *testing.T) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "etcd_debugging_mvcc_watcher_total" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("etcd_debugging_mvcc_watcher_total not found")
	return 0
}

// TestManyWatchersOneEtcdWatch: 300 API watchers of pods add no etcd
// watcher, and each receives every event.
func TestManyWatchersOneEtcdWatch(t *testing.T) {
	ts := start(t, nil)
	pods := ts.Client.CoreV1().Pods("default")
	if _, err := pods.List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	before := etcdWatchers(t)
	code, body := raw(t, ts, "GET", "/metrics", "", nil)
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	base := registeredPodWatchers(t, string(body))
	const n = 300
	watchers := make([]watch.Interface, n)
	for i := range watchers {
		w, err := pods.Watch(ctx(t), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watchers[i] = w
	}
	if after := etcdWatchers(t); after != before {
		t.Errorf("etcd watchers went from %v to %v with %d API watches", before, after, n)
	}
	code, body = raw(t, ts, "GET", "/metrics", "", nil)
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	if got := registeredPodWatchers(t, string(body)); got != base+n {
		t.Errorf("apiserver_registered_watchers for pods = %d, want %d + %d", got, base, n)
	}
	if _, err := pods.Create(ctx(t), testPod("fan", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, w := range watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := next(t, w)
			if p, ok := ev.Object.(*corev1.Pod); !ok || ev.Type != watch.Added || p.Name != "fan" {
				t.Errorf("watcher %d got %s %T", i, ev.Type, ev.Object)
			}
		}()
	}
	wg.Wait()
}

// registeredPodWatchers reads apiserver_registered_watchers for pods.
func registeredPodWatchers(t *testing.T, metrics string) int {
	t.Helper()
	return int(metricValue(t, metrics, `apiserver_registered_watchers{group="",kind="Pod",version="v1"}`))
}
