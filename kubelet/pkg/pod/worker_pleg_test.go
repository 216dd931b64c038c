package pod

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// countingRuntime counts the listings a worker asks the runtime for.
type countingRuntime struct {
	*fakeRuntime
	mu    sync.Mutex
	lists int
}

func (c *countingRuntime) ListContainers(ctx context.Context, uid types.UID) ([]Container, error) {
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	return c.fakeRuntime.ListContainers(ctx, uid)
}

// snapshotCache is a PLEG as the worker sees it: what the runtime held at
// the last relist, and when that relist began.
type snapshotCache struct {
	rt *fakeRuntime
	at time.Time
	cs []Container
}

func (s *snapshotCache) relist(t *testing.T) {
	t.Helper()
	s.at = time.Now()
	var err error
	if s.cs, err = s.rt.ListContainers(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
}

func (s *snapshotCache) Containers(uid types.UID, after time.Time) ([]Container, bool) {
	if s.at.IsZero() || !s.at.After(after) {
		return nil, false
	}
	var out []Container
	for _, c := range s.cs {
		if c.PodUID() == uid {
			out = append(out, c)
		}
	}
	return out, true
}

// A worker fed by the PLEG asks the runtime for its containers only until
// a relist newer than its last change exists; idle, it reads the relist,
// and it sees an exit once a relist has seen it.
func TestWorkerReadsContainersFromPLEG(t *testing.T) {
	h := newHarness(testPod(corev1.RestartPolicyAlways, "busybox"))
	rt := &countingRuntime{fakeRuntime: h.rt}
	cache := &snapshotCache{rt: h.rt}
	h.w.cfg.Runtime, h.w.cfg.Containers = rt, cache
	lists := func() int {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		n := rt.lists
		rt.lists = 0
		return n
	}

	h.sync(t) // starts the container
	if n := lists(); n != 2 {
		t.Errorf("first sync listed the runtime %d times, want 2 (no relist yet; again after the start)", n)
	}
	// The relist began before the worker's last change was done: not used.
	h.sync(t)
	if n := lists(); n != 1 {
		t.Errorf("sync after a change with no newer relist listed %d times, want 1", n)
	}
	cache.relist(t)
	for range 3 {
		h.sync(t)
	}
	if n := lists(); n != 0 {
		t.Errorf("idle syncs with a fresh relist listed the runtime %d times, want 0", n)
	}
	if !h.w.Running() {
		t.Fatal("Running() = false")
	}

	h.rt.exit("c", 1)
	h.sync(t)
	if !h.w.Running() {
		t.Error("the worker saw the exit before a relist did")
	}
	cache.relist(t)
	h.clock.Step(time.Minute) // past the crash back-off
	h.sync(t)                 // sees the exit, restarts the container
	if got := h.rt.callsWith("start c"); len(got) != 2 {
		t.Fatalf("starts = %v, want the restart", got)
	}
	if n := lists(); n != 1 {
		t.Errorf("the restarting sync listed %d times, want 1 (after the restart; the exit came from the relist)", n)
	}
	h.sync(t)
	if n := lists(); n != 1 {
		t.Errorf("sync after the restart listed %d times, want 1 (the relist predates it)", n)
	}
	cs := h.status.last().ContainerStatuses[0]
	if cs.RestartCount != 1 || cs.State.Running == nil {
		t.Errorf("container status = %+v, want running, restarted once", cs)
	}
}
