package eviction

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

const (
	Mi = 1 << 20
	Gi = 1 << 30
)

// fakeSignals returns what the test sets.
type fakeSignals struct {
	mu    sync.Mutex
	obs   Observations
	calls int
}

func newFakeSignals() *fakeSignals {
	s := &fakeSignals{obs: Observations{Signals: map[Signal]Observation{}}}
	// A healthy node: 10Gi memory with 5Gi available, 100Gi disks half
	// full, a million inodes half free, 32768 PIDs with 1000 used.
	s.set(SignalMemoryAvailable, 5*Gi, 10*Gi)
	s.set(SignalNodeFsAvailable, 50*Gi, 100*Gi)
	s.set(SignalImageFsAvailable, 50*Gi, 100*Gi)
	s.set(SignalNodeFsInodesFree, 500000, 1000000)
	s.set(SignalImageFsInodesFree, 500000, 1000000)
	s.set(SignalPIDAvailable, 31768, 32768)
	return s
}

func (s *fakeSignals) set(sig Signal, available, capacity int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.obs.Signals[sig] = Observation{
		Available: resource.NewQuantity(available, resource.BinarySI),
		Capacity:  resource.NewQuantity(capacity, resource.BinarySI),
	}
}

func (s *fakeSignals) Observe(context.Context) (Observations, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	out := Observations{Signals: map[Signal]Observation{}, DedicatedImageFS: s.obs.DedicatedImageFS}
	for k, v := range s.obs.Signals {
		out.Signals[k] = v
	}
	return out, nil
}

func (s *fakeSignals) observed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// evictRecorder records Evict calls.
type evictRecorder struct {
	mu      sync.Mutex
	evicted []string
	last    Eviction
}

func (r *evictRecorder) evict(_ context.Context, pod *corev1.Pod, e Eviction) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evicted = append(r.evicted, pod.Name)
	r.last = e
	return nil
}

func (r *evictRecorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.evicted...)
}

// testPod is a pod with one container per request given ("" = none).
func testPod(name string, priority int32, memRequests ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec:       corev1.PodSpec{Priority: &priority},
	}
	for i, r := range memRequests {
		c := corev1.Container{Name: name + "-" + string(rune('a'+i))}
		if r != "" {
			c.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(r)}
		}
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
	return p
}

// usageTable serves PodUsage from a map by pod name.
type usageTable map[string]PodUsage

func (u usageTable) get(_ context.Context, p *corev1.Pod) (PodUsage, bool) {
	x, ok := u[p.Name]
	return x, ok
}

func (u usageTable) fn() usageFunc {
	return func(p *corev1.Pod) (PodUsage, bool) { return u.get(context.Background(), p) }
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func newTestManager(t *testing.T, o Options) (*Manager, *testingclock.FakeClock) {
	t.Helper()
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if o.Thresholds == nil {
		th, err := ParseThresholds(DefaultHard + ",pid.available<10%")
		if err != nil {
			t.Fatal(err)
		}
		o.Thresholds = th
	}
	if o.PressureTransitionPeriod == 0 {
		o.PressureTransitionPeriod = DefaultPressureTransitionPeriod
	}
	if o.ActivePods == nil {
		o.ActivePods = func() []*corev1.Pod { return nil }
	}
	if o.PodUsage == nil {
		o.PodUsage = usageTable{}.get
	}
	if o.Evict == nil {
		o.Evict = (&evictRecorder{}).evict
	}
	o.Clock = clk
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m, clk
}

// checkErr fails the test unless err matches wantErr ("" for none); it
// reports whether an error was expected, so the case is done.
func checkErr(t *testing.T, err error, wantErr string) bool {
	t.Helper()
	if wantErr == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Fatalf("error = %v, want one containing %q", err, wantErr)
	}
	return true
}
