package eviction

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
)

func conditionStatus(m *Manager) map[corev1.NodeConditionType]string {
	out := map[corev1.NodeConditionType]string{}
	for _, c := range m.NodeConditions() {
		out[c.Type] = string(c.Status) + " " + c.Reason + " " + c.Message
	}
	return out
}

func TestConditionsTransitionPeriod(t *testing.T) {
	sig := newFakeSignals()
	m, clk := newTestManager(t, Options{Signals: sig})
	ctx := context.Background()
	sync := func() {
		t.Helper()
		if _, err := m.Synchronize(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := func(mem, disk, pid string) {
		t.Helper()
		got := conditionStatus(m)
		w := map[corev1.NodeConditionType]string{
			corev1.NodeMemoryPressure: mem, corev1.NodeDiskPressure: disk, corev1.NodePIDPressure: pid,
		}
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("conditions at %v:\n got %v\nwant %v", clk.Now(), got, w)
		}
	}
	const (
		memOK    = "False KubeletHasSufficientMemory kubelet has sufficient memory available"
		memLow   = "True KubeletHasInsufficientMemory kubelet has insufficient memory available"
		diskOK   = "False KubeletHasNoDiskPressure kubelet has no disk pressure"
		diskLow  = "True KubeletHasDiskPressure kubelet has disk pressure"
		pidOK    = "False KubeletHasSufficientPID kubelet has sufficient PID available"
		pidLow   = "True KubeletHasInsufficientPID kubelet has insufficient PID available"
		interval = 10 * time.Second
	)
	want(memOK, diskOK, pidOK) // before the first pass
	sync()
	want(memOK, diskOK, pidOK)

	sig.set(SignalMemoryAvailable, 50*Mi, 10*Gi)     // below 100Mi
	sig.set(SignalImageFsInodesFree, 40000, 1000000) // below 5%
	sig.set(SignalPIDAvailable, 1000, 32768)         // below 10%
	sync()
	want(memLow, diskLow, pidLow)
	if !m.IsUnderMemoryPressure() || !m.IsUnderDiskPressure() || !m.IsUnderPIDPressure() {
		t.Fatal("IsUnder*Pressure disagree with the conditions")
	}

	// Memory recovers first; the condition stays True for 5 minutes.
	sig.set(SignalMemoryAvailable, 5*Gi, 10*Gi)
	clk.Step(interval)
	recovered := clk.Now().Add(-interval) // last observed under pressure
	sync()
	want(memLow, diskLow, pidLow)
	clk.SetTime(recovered.Add(DefaultPressureTransitionPeriod - time.Second))
	sync()
	want(memLow, diskLow, pidLow)
	clk.SetTime(recovered.Add(DefaultPressureTransitionPeriod))
	sync()
	want(memOK, diskLow, pidLow)
	if got := m.Conditions(); !reflect.DeepEqual(got, []corev1.NodeConditionType{corev1.NodeDiskPressure, corev1.NodePIDPressure}) {
		t.Errorf("Conditions() = %v", got)
	}
}

func TestZeroTransitionPeriodStillReportsCurrentPressure(t *testing.T) {
	sig := newFakeSignals()
	m, clk := newTestManager(t, Options{Signals: sig, PressureTransitionPeriod: time.Nanosecond})
	sig.set(SignalNodeFsAvailable, 1*Gi, 100*Gi)
	if _, err := m.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !m.IsUnderDiskPressure() {
		t.Fatal("no disk pressure while nodefs is below 10%")
	}
	sig.set(SignalNodeFsAvailable, 50*Gi, 100*Gi)
	clk.Step(time.Second)
	if _, err := m.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m.IsUnderDiskPressure() {
		t.Fatal("disk pressure kept after the period")
	}
}

func TestSynchronizeEvictsOnePodPerPass(t *testing.T) {
	sig := newFakeSignals()
	sig.set(SignalMemoryAvailable, 12*Mi, 10*Gi)
	pods := []*corev1.Pod{testPod("small", 0, ""), testPod("c", 0, ""), testPod("guaranteed", 0, "1Gi")}
	pods[1].Spec.Containers[0].Name = "c"
	usage := usageTable{
		"small":      {MemoryWorkingSet: 10 * Mi, Containers: []ContainerUsage{{Name: "small-a", MemoryWorkingSet: 10 * Mi}}},
		"c":          {MemoryWorkingSet: 300 * Mi, Containers: []ContainerUsage{{Name: "c", MemoryWorkingSet: 300 * Mi}}},
		"guaranteed": {MemoryWorkingSet: 900 * Mi},
	}
	rec := &evictRecorder{}
	events := record.NewFakeRecorder(10)
	reg := prometheus.NewRegistry()
	metrics := NewMetrics(reg)
	m, _ := newTestManager(t, Options{
		Signals: sig, ActivePods: func() []*corev1.Pod { return pods }, PodUsage: usage.get,
		Evict: rec.evict, Recorder: events, Metrics: metrics,
	})
	evicted, err := m.Synchronize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if evicted == nil || evicted.Name != "c" || !reflect.DeepEqual(rec.names(), []string{"c"}) {
		t.Fatalf("evicted %v, Evict calls %v; want only c", evicted, rec.names())
	}
	wantMsg := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 12Mi. " +
		"Container c was using 300Mi, request is 0, has larger consumption of memory. "
	e := rec.last
	if e.Message != wantMsg || e.Reason != "Evicted" || e.Signal != SignalMemoryAvailable || e.GracePeriodSeconds != 1 {
		t.Errorf("eviction %+v\nwant message %q", e, wantMsg)
	}
	if e.Condition.Type != corev1.DisruptionTarget || e.Condition.Reason != corev1.PodReasonTerminationByKubelet {
		t.Errorf("condition %+v", e.Condition)
	}
	if e.Annotations[OffendingContainersKey] != "c" || e.Annotations[StarvedResourceKey] != "memory" {
		t.Errorf("annotations %v", e.Annotations)
	}
	select {
	case ev := <-events.Events:
		// The fake recorder appends the annotations.
		if !strings.HasPrefix(ev, "Warning Evicted "+wantMsg) || !strings.Contains(ev, "offending_containers:c") {
			t.Errorf("event %q", ev)
		}
	default:
		t.Error("no event recorded")
	}
	if got := testutil.ToFloat64(metrics.Evictions.WithLabelValues("memory.available")); got != 1 {
		t.Errorf("kubelet_evictions{eviction_signal=memory.available} = %v, want 1", got)
	}
	// The next pass evicts the next pod only.
	pods = pods[:1]
	pods = append(pods, testPod("guaranteed", 0, "1Gi"))
	if _, err := m.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.names(); !reflect.DeepEqual(got, []string{"c", "small"}) {
		t.Errorf("after two passes evicted %v, want [c small]", got)
	}
}

func TestSynchronizeSkipsCriticalPods(t *testing.T) {
	sig := newFakeSignals()
	sig.set(SignalPIDAvailable, 10, 32768)
	critical := testPod("critical", 0, "")
	critical.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	system := testPod("system", SystemCriticalPriority, "")
	normal := testPod("normal", 1000, "")
	usage := usageTable{"critical": {Processes: 100}, "system": {Processes: 100}, "normal": {Processes: 1}}
	rec := &evictRecorder{}
	m, _ := newTestManager(t, Options{
		Signals: sig, ActivePods: func() []*corev1.Pod { return []*corev1.Pod{critical, system, normal} },
		PodUsage: usage.get, Evict: rec.evict,
	})
	if _, err := m.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.names(); !reflect.DeepEqual(got, []string{"normal"}) {
		t.Errorf("evicted %v, want [normal]", got)
	}
	if !strings.HasPrefix(rec.last.Message, "The node was low on resource: pids. Threshold quantity: 3276, available: 10. ") {
		t.Errorf("message %q", rec.last.Message)
	}
}

func TestSynchronizeReclaimsBeforeEvictingForDisk(t *testing.T) {
	tests := []struct {
		name      string
		sig       Signal
		dedicated bool
		freed     bool // the reclaim functions relieve the pressure
		wantCalls []string
		wantEvict []string
	}{
		{name: "shared fs: containers then images, enough", sig: SignalNodeFsAvailable, freed: true,
			wantCalls: []string{"containers", "images"}},
		{name: "shared fs: not enough, one pod evicted", sig: SignalNodeFsAvailable,
			wantCalls: []string{"containers", "images"}, wantEvict: []string{"big"}},
		{name: "dedicated imagefs: nodefs reclaims containers only", sig: SignalNodeFsAvailable, dedicated: true,
			wantCalls: []string{"containers"}, wantEvict: []string{"big"}},
		{name: "dedicated imagefs: imagefs reclaims containers and images", sig: SignalImageFsAvailable, dedicated: true, freed: true,
			wantCalls: []string{"containers", "images"}},
		{name: "memory reclaims nothing", sig: SignalMemoryAvailable, wantEvict: []string{"big"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig := newFakeSignals()
			sig.obs.DedicatedImageFS = tt.dedicated
			healthy := sig.obs.Signals[tt.sig]
			sig.set(tt.sig, 1, healthy.Capacity.Value())
			var calls []string
			reclaim := func(name string) func(context.Context) error {
				return func(context.Context) error {
					calls = append(calls, name)
					if tt.freed && name == calls[0] && len(calls) == 1 {
						return errors.New("one reclaim error does not stop the others")
					}
					if tt.freed {
						sig.set(tt.sig, healthy.Available.Value(), healthy.Capacity.Value())
					}
					return nil
				}
			}
			pods := []*corev1.Pod{testPod("small", 0, ""), testPod("big", 0, "")}
			usage := usageTable{"small": diskUsageOf(1, 1, 1), "big": diskUsageOf(100, 100, 100)}
			usage["small"] = PodUsage{MemoryWorkingSet: Mi, Containers: usage["small"].Containers}
			usage["big"] = PodUsage{MemoryWorkingSet: Gi, Containers: usage["big"].Containers, VolumesBytes: 100 * Mi}
			rec := &evictRecorder{}
			m, _ := newTestManager(t, Options{
				Signals: sig, ActivePods: func() []*corev1.Pod { return pods }, PodUsage: usage.get, Evict: rec.evict,
				DeleteUnusedContainers: reclaim("containers"), DeleteUnusedImages: reclaim("images"),
			})
			if _, err := m.Synchronize(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(calls, tt.wantCalls) {
				t.Errorf("reclaim calls %v, want %v", calls, tt.wantCalls)
			}
			if got := rec.names(); !reflect.DeepEqual(got, tt.wantEvict) {
				t.Errorf("evicted %v, want %v", got, tt.wantEvict)
			}
		})
	}
}

func TestMemoryIsReclaimedBeforeDisk(t *testing.T) {
	sig := newFakeSignals()
	sig.set(SignalMemoryAvailable, Mi, 10*Gi)
	sig.set(SignalImageFsAvailable, Mi, 100*Gi)
	rec := &evictRecorder{}
	m, _ := newTestManager(t, Options{
		Signals: sig, ActivePods: func() []*corev1.Pod { return []*corev1.Pod{testPod("p", 0, "")} },
		PodUsage: usageTable{"p": memUsage(10)}.get, Evict: rec.evict,
	})
	if _, err := m.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rec.last.Signal != SignalMemoryAvailable {
		t.Errorf("acted on %s, want memory.available", rec.last.Signal)
	}
}

func TestAdmit(t *testing.T) {
	bestEffort := testPod("best-effort", 0, "")
	burstable := testPod("burstable", 0, "100Mi")
	tolerating := testPod("tolerating", 0, "")
	tolerating.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	critical := testPod("critical", SystemCriticalPriority, "")
	tests := []struct {
		name    string
		low     []Signal
		pod     *corev1.Pod
		want    bool
		wantMsg string
	}{
		{name: "no pressure", pod: bestEffort, want: true},
		{name: "memory pressure refuses best effort", low: []Signal{SignalMemoryAvailable}, pod: bestEffort,
			wantMsg: "The node had condition: [MemoryPressure]. "},
		{name: "memory pressure admits burstable", low: []Signal{SignalMemoryAvailable}, pod: burstable, want: true},
		{name: "memory pressure admits a pod tolerating the taint", low: []Signal{SignalMemoryAvailable}, pod: tolerating, want: true},
		{name: "disk pressure refuses every pod", low: []Signal{SignalNodeFsAvailable}, pod: burstable,
			wantMsg: "The node had condition: [DiskPressure]. "},
		{name: "pid pressure refuses every pod", low: []Signal{SignalPIDAvailable}, pod: burstable,
			wantMsg: "The node had condition: [PIDPressure]. "},
		{name: "memory and disk pressure refuse burstable", low: []Signal{SignalMemoryAvailable, SignalImageFsAvailable}, pod: burstable,
			wantMsg: "The node had condition: [MemoryPressure DiskPressure]. "},
		{name: "critical pods are admitted", low: []Signal{SignalMemoryAvailable, SignalNodeFsAvailable}, pod: critical, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig := newFakeSignals()
			for _, s := range tt.low {
				sig.set(s, 1, sig.obs.Signals[s].Capacity.Value())
			}
			m, _ := newTestManager(t, Options{Signals: sig, Evict: func(context.Context, *corev1.Pod, Eviction) error { return nil }})
			if _, err := m.Synchronize(context.Background()); err != nil {
				t.Fatal(err)
			}
			ok, reason, msg := m.Admit(tt.pod)
			if ok != tt.want {
				t.Fatalf("admit = %v (%s: %s), want %v", ok, reason, msg, tt.want)
			}
			if !ok && (reason != "Evicted" || msg != tt.wantMsg) {
				t.Errorf("reason %q message %q, want Evicted and %q", reason, msg, tt.wantMsg)
			}
		})
	}
}

func TestNewRejectsMissingCallbacks(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New without callbacks gave no error")
	}
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestStartSynchronizesEveryInterval(t *testing.T) {
	sig := newFakeSignals()
	m, clk := newTestManager(t, Options{Signals: sig})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	waitFor(t, "the first pass", func() bool { return sig.observed() == 1 && clk.HasWaiters() })
	clk.Step(9 * time.Second)
	if sig.observed() != 1 {
		t.Fatalf("a pass ran before 10 s")
	}
	clk.Step(time.Second)
	waitFor(t, "the second pass", func() bool { return sig.observed() == 2 })
}

func TestStartWaitsForCleanupAfterEviction(t *testing.T) {
	sig := newFakeSignals()
	sig.set(SignalMemoryAvailable, Mi, 10*Gi)
	rec := &evictRecorder{}
	var mu sync.Mutex
	var listed, cleanupChecks int
	m, clk := newTestManager(t, Options{
		Signals: sig,
		// Only the first pass finds a pod to evict.
		ActivePods: func() []*corev1.Pod {
			mu.Lock()
			defer mu.Unlock()
			if listed++; listed > 1 {
				return nil
			}
			return []*corev1.Pod{testPod("p", 0, "")}
		},
		PodUsage: usageTable{"p": memUsage(10)}.get, Evict: rec.evict,
		PodCleanedUp: func(*corev1.Pod) bool {
			mu.Lock()
			defer mu.Unlock()
			cleanupChecks++
			return cleanupChecks > 2
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	checks := func() int {
		mu.Lock()
		defer mu.Unlock()
		return cleanupChecks
	}
	// The first pass evicts, then checks the cleanup every second: two
	// checks fail, the third (after 2 s) succeeds and the next pass runs
	// at once, without waiting for the 10 s interval.
	waitFor(t, "the eviction", func() bool { return len(rec.names()) == 1 && checks() == 1 && clk.HasWaiters() })
	clk.Step(time.Second)
	waitFor(t, "the second check", func() bool { return checks() == 2 && clk.HasWaiters() })
	if sig.observed() != 1 {
		t.Fatalf("a pass ran while the evicted pod was not cleaned up")
	}
	clk.Step(time.Second)
	waitFor(t, "the pass after cleanup", func() bool { return sig.observed() == 2 })
	if got := rec.names(); len(got) != 1 {
		t.Errorf("evicted %v, want one pod", got)
	}
}
