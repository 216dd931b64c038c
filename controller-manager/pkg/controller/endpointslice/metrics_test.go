package endpointslice

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// histogram is a histogram's sample count and sum, gathered from reg.
func histogram(t *testing.T, reg *prometheus.Registry, name string) (uint64, float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	return 0, 0
}

// Each sync counts upstream's endpoint_slice_controller_* series (endpoints
// added and removed per sync, slice changes by operation, syncs by result)
// and, when it writes, the time from the trigger time to the write.
func TestSyncMetrics(t *testing.T) {
	svc := newService("web")
	a, b := newPod("a", "web", "10.244.1.1"), newPod("b", "web", "10.244.1.2")
	f := newFixture(t, Options{}, svc, newNode("node-1", ""), a, b)
	reg := prometheus.NewRegistry()
	f.c.metrics = metrics.New(reg)
	f.c.now = func() time.Time { return now }
	counter := func(name, label string) float64 {
		t.Helper()
		v, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range v {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.GetMetric() {
				if m.GetLabel()[0].GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
		return 0
	}

	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	if n, sum := histogram(t, reg, "endpoint_slice_controller_endpoints_added_per_sync"); n != 1 || sum != 2 {
		t.Errorf("added per sync: %d syncs, %v endpoints; want 1, 2", n, sum)
	}
	if counter("endpoint_slice_controller_changes", "create") != 1 || counter("endpoint_slice_controller_syncs", "success") != 1 {
		t.Errorf("changes/syncs after the first sync:\n%s", dump(t, reg))
	}
	// The first sync's trigger time is the Service's creation, an hour ago.
	if n, sum := histogram(t, reg, "skiff_endpoint_slice_controller_change_to_write_duration_seconds"); n != 1 || sum != 3600 {
		t.Errorf("change to write: %d observations, %vs", n, sum)
	}

	// An unchanged sync writes nothing: no change-to-write observation.
	f.observe()
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	if n, _ := histogram(t, reg, "skiff_endpoint_slice_controller_change_to_write_duration_seconds"); n != 1 {
		t.Errorf("a sync without writes observed: %d", n)
	}

	// Both pods go: two endpoints removed, the slice updated.
	_ = f.podIdx.Delete(a)
	_ = f.podIdx.Delete(b)
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	if n, sum := histogram(t, reg, "endpoint_slice_controller_endpoints_removed_per_sync"); n != 3 || sum != 2 {
		t.Errorf("removed per sync: %d syncs, %v endpoints; want 3, 2", n, sum)
	}
	if counter("endpoint_slice_controller_changes", "update") != 1 || counter("endpoint_slice_controller_syncs", "success") != 3 {
		t.Errorf("after the pods left:\n%s", dump(t, reg))
	}

	// The cache behind the controller's own write: a stale sync.
	if err := f.sync(svc); err == nil {
		t.Fatal("no stale cache")
	}
	if counter("endpoint_slice_controller_syncs", "stale") != 1 {
		t.Errorf("stale syncs:\n%s", dump(t, reg))
	}
}

func dump(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for _, mf := range mfs {
		out += mf.String() + "\n"
	}
	return out
}
