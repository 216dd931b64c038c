package pleg

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/kubelet/pkg/pod"
)

type fakeLister struct {
	mu    sync.Mutex
	cs    []pod.Container
	err   error
	calls []types.UID
}

func (f *fakeLister) ListContainers(_ context.Context, uid types.UID) ([]pod.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, uid)
	return slices.Clone(f.cs), f.err
}

func (f *fakeLister) set(cs ...pod.Container) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cs = cs
}

func ctr(id, uid string, state pod.ContainerState) pod.Container {
	return pod.Container{ID: id, State: state, Labels: map[string]string{pod.LabelPodUID: uid}}
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestRelistTellsChangedPods(t *testing.T) {
	rt := &fakeLister{}
	var changed []types.UID
	clk := &clock{t: time.Unix(1000, 0)}
	p := New(Options{Runtime: rt, Now: clk.now, OnChange: func(uid types.UID) { changed = append(changed, uid) }})
	relist := func() []types.UID {
		t.Helper()
		changed = nil
		clk.t = clk.t.Add(time.Second)
		if err := p.Relist(context.Background()); err != nil {
			t.Fatal(err)
		}
		slices.Sort(changed)
		return changed
	}

	rt.set(ctr("a1", "a", pod.StateRunning), ctr("b1", "b", pod.StateRunning), ctr("c1", "c", pod.StateCreated))
	if got := relist(); !slices.Equal(got, []types.UID{"a", "b", "c"}) {
		t.Errorf("first relist changed %v, want every pod", got)
	}
	if got := relist(); len(got) != 0 {
		t.Errorf("unchanged relist changed %v, want none", got)
	}
	exited := ctr("a1", "a", pod.StateExited)
	exited.ExitCode = 2
	rt.set(exited, ctr("b1", "b", pod.StateRunning), ctr("c1", "c", pod.StateRunning), ctr("d1", "d", pod.StateCreated))
	if got := relist(); !slices.Equal(got, []types.UID{"a", "c", "d"}) {
		t.Errorf("relist changed %v, want a (exited), c (started), d (new)", got)
	}
	rt.set(exited, ctr("c1", "c", pod.StateRunning), ctr("d1", "d", pod.StateCreated), ctr("d2", "d", pod.StateCreated))
	if got := relist(); !slices.Equal(got, []types.UID{"b", "d"}) {
		t.Errorf("relist changed %v, want b (gone), d (a second container)", got)
	}
	// One listing of every pod per relist, however many pods.
	if want := []types.UID{"", "", "", ""}; !slices.Equal(rt.calls, want) {
		t.Errorf("runtime listings = %q, want %q", rt.calls, want)
	}
}

func TestContainersNewerThan(t *testing.T) {
	rt := &fakeLister{}
	clk := &clock{t: time.Unix(1000, 0)}
	p := New(Options{Runtime: rt, Now: clk.now})
	if _, ok := p.Containers("a", time.Time{}); ok {
		t.Fatal("Containers before any relist: ok")
	}
	rt.set(ctr("a1", "a", pod.StateRunning), ctr("b1", "b", pod.StateRunning))
	if err := p.Relist(context.Background()); err != nil {
		t.Fatal(err)
	}
	cs, ok := p.Containers("a", clk.t.Add(-time.Millisecond))
	if !ok || len(cs) != 1 || cs[0].ID != "a1" {
		t.Errorf("Containers(a, before the relist) = %v, %v; want [a1], true", cs, ok)
	}
	if _, ok := p.Containers("a", clk.t); ok {
		t.Error("Containers(a, when the relist began): ok; a change then may be missing from it")
	}
	if cs, ok := p.Containers("x", time.Time{}); !ok || len(cs) != 0 {
		t.Errorf("Containers of a pod with none = %v, %v; want none, true", cs, ok)
	}
	// A failed relist keeps the previous one, with its time.
	rt.err = errors.New("containerd is down")
	clk.t = clk.t.Add(time.Second)
	if err := p.Relist(context.Background()); err == nil {
		t.Fatal("Relist with the runtime down: no error")
	}
	if _, ok := p.Containers("a", clk.t.Add(-time.Millisecond)); ok {
		t.Error("a failed relist made the old listing look newer")
	}
}

func TestHealthyAndMetrics(t *testing.T) {
	rt := &fakeLister{}
	clk := &clock{t: time.Unix(1000, 0)}
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	p := New(Options{Runtime: rt, Now: clk.now, Metrics: m})
	if err := p.Healthy(); err != nil {
		t.Errorf("Healthy at start: %v", err)
	}
	clk.t = clk.t.Add(RelistThreshold + time.Second)
	if err := p.Healthy(); err == nil || !strings.Contains(err.Error(), "pleg was last seen active 3m1s ago; threshold is 3m0s") {
		t.Errorf("Healthy with no relist for 3m1s = %v", err)
	}
	if err := p.Relist(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Healthy(); err != nil {
		t.Errorf("Healthy right after a relist: %v", err)
	}
	clk.t = clk.t.Add(2 * time.Second)
	if err := p.Relist(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(m.LastSeen); got != float64(clk.t.Unix()) {
		t.Errorf("kubelet_pleg_last_seen_seconds = %v, want %v", got, clk.t.Unix())
	}
	n, err := testutil.GatherAndCount(reg, "kubelet_pleg_relist_duration_seconds", "kubelet_pleg_relist_interval_seconds")
	if err != nil || n != 2 {
		t.Fatalf("gathered %d PLEG histograms (%v), want 2", n, err)
	}
	want := `
# HELP kubelet_pleg_relist_interval_seconds Interval in seconds between relisting in PLEG.
# TYPE kubelet_pleg_relist_interval_seconds histogram
kubelet_pleg_relist_interval_seconds_bucket{le="0.005"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.01"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.025"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.05"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.1"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.25"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.5"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="1"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="2.5"} 1
kubelet_pleg_relist_interval_seconds_bucket{le="5"} 1
kubelet_pleg_relist_interval_seconds_bucket{le="10"} 1
kubelet_pleg_relist_interval_seconds_bucket{le="+Inf"} 1
kubelet_pleg_relist_interval_seconds_sum 2
kubelet_pleg_relist_interval_seconds_count 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kubelet_pleg_relist_interval_seconds"); err != nil {
		t.Error(err)
	}
}

// Run relists at once and then every period, until its context ends.
func TestRunRelists(t *testing.T) {
	rt := &fakeLister{}
	seen := make(chan types.UID, 10)
	p := New(Options{Runtime: rt, Period: 10 * time.Millisecond, OnChange: func(uid types.UID) { seen <- uid }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	rt.set(ctr("a1", "a", pod.StateRunning))
	select {
	case uid := <-seen:
		if uid != "a" {
			t.Errorf("changed %q, want a", uid)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no relist saw the new container within 10 s")
	}
}
