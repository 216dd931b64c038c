package pod

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, d, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("timed out after %s waiting for %s", d, what)
	}
}

// A pod deleted (or removed from the API, or evicted) while its
// container's postStart hook runs does not wait for the hook, as
// upstream's pod workers cancel the sync in flight: the hook (a sleep of
// ten minutes, an exec or an httpGet that hang) is cut short, the
// termination runs at once (the preStop hook, then the stop with the
// grace period), the cut is no FailedPostStartHook and no restart, and
// the pod ends as a pod deleted during its start: Failed, its container
// killed (137).
func TestPodTerminatingCutsPostStartHook(t *testing.T) {
	hang := make(chan struct{})
	reached := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-hang:
		}
	}))
	defer srv.Close()
	defer close(hang)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())

	tests := []struct {
		name string
		hook *corev1.LifecycleHandler
		// how the pod begins terminating: "delete", "remove" or "evict"
		how string
	}{
		{name: "sleep 600 s, pod deleted", hook: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 600}}, how: "delete"},
		{name: "exec sleep 600, pod deleted", hook: execHandler("sh", "-c", "sleep 600"), how: "delete"},
		{name: "httpGet that hangs, pod deleted", hook: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1", Port: intstr.FromInt(port), Path: "/hang"}}, how: "delete"},
		{name: "sleep 600 s, pod removed from the API", hook: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 600}}, how: "remove"},
		{name: "exec sleep 600, pod evicted", hook: execHandler("sh", "-c", "sleep 600"), how: "evict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPod(corev1.RestartPolicyAlways, "busybox")
			p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: tt.hook, PreStop: execHandler("sh", "-c", "prestop")}
			h := newHarness(p)
			rec := record.NewFakeRecorder(100)
			ch := h.containersHook()
			// The real handler runner: its sleep is a timer that ends
			// with its context.
			ch.Recorder, ch.Handlers = rec, &HandlerRunner{Runtime: h.rt}
			h.rt.execHangs = map[string]bool{"sh -c sleep 600": true}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ran := make(chan bool, 1)
			go func() { ran <- h.w.Run(ctx) }()

			// The hook is in flight: the container started, the exec or
			// the request made.
			waitFor(t, 10*time.Second, "the container to start", func() bool { return len(h.rt.callsWith("start c 0")) == 1 })
			switch {
			case tt.hook.Exec != nil:
				waitFor(t, 10*time.Second, "the exec hook to run", func() bool { return len(h.rt.callsWith("exec sh -c sleep 600")) == 1 })
			case tt.hook.HTTPGet != nil:
				select {
				case <-reached:
				case <-time.After(10 * time.Second):
					t.Fatal("the httpGet hook's request never came")
				}
			}

			began := time.Now()
			var evicted <-chan struct{}
			switch tt.how {
			case "delete":
				h.w.Update(h.deleted(p, ptr.To[int64](5)))
			case "remove":
				h.w.Remove()
			case "evict":
				evicted = h.w.Evict(Eviction{Reason: "Evicted", Message: "The node was low on resource: memory.", GracePeriod: 3 * time.Second})
			}
			// Well within any grace period: the fakes stop at once.
			const deadline = 5 * time.Second
			if evicted != nil {
				select {
				case <-evicted:
				case <-time.After(deadline):
					t.Fatalf("the eviction did not end within %s of its start: calls %v", deadline, h.rt.callsWith(""))
				}
				cancel()
				<-ran
			} else {
				select {
				case done := <-ran:
					if !done {
						t.Fatal("the worker stopped without tearing the pod down")
					}
				case <-time.After(deadline):
					t.Fatalf("the pod was not torn down within %s of its deletion: calls %v", deadline, h.rt.callsWith(""))
				}
			}
			t.Logf("terminated %v after the deletion", time.Since(began))

			// The termination path: the preStop hook, then the stop with
			// the termination's grace period, then the removal.
			wantGrace := map[string]time.Duration{"delete": 5 * time.Second, "remove": 7 * time.Second, "evict": 3 * time.Second}[tt.how]
			calls := strings.Join(h.rt.callsWith(""), "|")
			if !strings.Contains(calls, "exec sh -c prestop|stop c ") {
				t.Errorf("calls = %s, want the preStop hook, then the stop", calls)
			}
			// The signal gets what the preStop hook left of the grace
			// period.
			stops := h.rt.callsWith("stop")
			var grace time.Duration
			if len(stops) == 1 {
				grace, _ = time.ParseDuration(strings.TrimPrefix(stops[0], "stop c "))
			}
			if len(stops) != 1 || grace > wantGrace || grace < wantGrace-time.Second {
				t.Errorf("stops = %v, want one with (what is left of) the grace period %s", stops, wantGrace)
			}
			if starts := h.rt.callsWith("start"); len(starts) != 1 {
				t.Errorf("starts = %v, want no restart", starts)
			}
			if h.rt.count() != 0 {
				t.Errorf("%d containers left", h.rt.count())
			}
			evs := events(rec)
			if hasEvent(evs, "Warning FailedPostStartHook") || hasEvent(evs, "Normal Killing FailedPostStartHook") {
				t.Errorf("events %v: the cut hook reported as failed", evs)
			}
			if !hasEvent(evs, "Normal Killing Stopping container c") {
				t.Errorf("events %v, want the termination's Killing", evs)
			}

			h.status.mu.Lock()
			sent := append([]corev1.PodStatus(nil), h.status.statuses...)
			deleted := h.status.deleted
			h.status.mu.Unlock()
			for _, st := range sent {
				for _, cs := range st.ContainerStatuses {
					if w := cs.State.Waiting; w != nil && w.Reason == ReasonPostStartHookError {
						t.Errorf("a status with waiting reason %s: %+v", w.Reason, cs)
					}
				}
			}
			if tt.how == "remove" {
				// Gone from the API: nothing is written any more.
				if len(sent) != 0 || deleted != 0 {
					t.Errorf("statuses %d, deletes %d after the removal, want none", len(sent), deleted)
				}
				return
			}
			if len(sent) == 0 {
				t.Fatal("no final status")
			}
			st := sent[len(sent)-1]
			if st.Phase != corev1.PodFailed || len(st.ContainerStatuses) != 1 {
				t.Fatalf("final status %s %+v, want Failed", st.Phase, st.ContainerStatuses)
			}
			if term := st.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 137 || st.ContainerStatuses[0].RestartCount != 0 {
				t.Errorf("final container status %+v, want terminated 137, no restart", st.ContainerStatuses[0])
			}
			if want := map[string]int{"delete": 1, "evict": 0}[tt.how]; deleted != want {
				t.Errorf("deletes = %d, want %d", deleted, want)
			}
		})
	}
}

// A pod deleted while its image is pulled does not wait for the pull: it
// is cut short, which is no ErrImagePull (no Failed event, no back-off),
// and the pod ends Failed, its container never started.
func TestPodTerminatingCutsImagePull(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	h := newHarness(p)
	rec := record.NewFakeRecorder(100)
	for _, hk := range h.w.cfg.Lifecycle.Hooks {
		if ih, ok := hk.(*ImagesHook); ok {
			ih.Recorder = rec
		}
	}
	h.rt.pullHangs = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan bool, 1)
	go func() { ran <- h.w.Run(ctx) }()
	waitFor(t, 10*time.Second, "the pull to begin", func() bool { return len(h.rt.callsWith("pull")) == 1 })
	h.w.Update(h.deleted(p, ptr.To[int64](5)))
	select {
	case done := <-ran:
		if !done {
			t.Fatal("the worker stopped without tearing the pod down")
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the pod was not torn down within 5s of its deletion: calls %v", h.rt.callsWith(""))
	}
	if got := h.rt.callsWith("create"); len(got) != 0 {
		t.Errorf("creates = %v after the deletion, want none", got)
	}
	if evs := events(rec); hasEvent(evs, "Warning Failed") || hasEvent(evs, "Normal BackOff") {
		t.Errorf("events %v: the cut pull reported as failed", evs)
	}
	st := h.status.last()
	if st.Phase != corev1.PodFailed || len(st.ContainerStatuses) != 1 {
		t.Fatalf("final status %s %+v, want Failed", st.Phase, st.ContainerStatuses)
	}
	if w := st.ContainerStatuses[0].State.Waiting; w != nil && (w.Reason == ReasonErrImagePull || w.Reason == ReasonImagePullBackOff) {
		t.Errorf("final container status %+v: the cut pull as a failed one", st.ContainerStatuses[0])
	}
	if h.status.deleted != 1 {
		t.Errorf("deletes = %d, want 1", h.status.deleted)
	}
}

// A pod deleted with a long grace period and then again with a shorter
// one stops within the shorter one, as upstream's pod workers restart a
// termination whose grace period is shortened. Whether the first stop is
// waiting for a container that ignores SIGTERM or for a preStop hook that
// hangs, it is cut short, nothing else of the pod is torn down meanwhile,
// and the container is stopped again with the new period (its preStop
// hook run again, as upstream's killContainer runs it on every kill; the
// cut is no FailedPreStopHook).
func TestShorterGracePeriodRestartsTermination(t *testing.T) {
	for _, tt := range []struct {
		name    string
		preStop bool
		// the runtime's calls that show the first stop in flight, and
		// the second
		first, second string
		// the stops, and the preStop hook's runs and failures, in all
		wantStops, wantHooks, wantFailed int
	}{
		{name: "the signal ignored", first: "stop c 10m0s", second: "stop c 1s", wantStops: 2},
		// The second run of the hook hangs past the new second: that one
		// is a failure, then the signal gets the minimum grace period.
		{name: "the preStop hook hangs", preStop: true, first: "exec sh -c sleep 600", second: "stop c 2s", wantStops: 1, wantHooks: 2, wantFailed: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := testPod(corev1.RestartPolicyAlways, "busybox")
			if tt.preStop {
				p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: execHandler("sh", "-c", "sleep 600")}
			}
			h := newHarness(p)
			rec := record.NewFakeRecorder(100)
			ch := h.containersHook()
			ch.Recorder, ch.Handlers = rec, &HandlerRunner{Runtime: h.rt}
			h.rt.execHangs = map[string]bool{"sh -c sleep 600": true}
			h.rt.stopWaits = true
			if h.sync(t) {
				t.Fatal("the pod was torn down before its deletion")
			}
			if starts := h.rt.callsWith("start"); len(starts) != 1 {
				t.Fatalf("starts = %v, want the container started", starts)
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ran := make(chan bool, 1)
			go func() { ran <- h.w.Run(ctx) }()

			h.w.Update(h.deleted(p, ptr.To[int64](600)))
			waitFor(t, 10*time.Second, tt.first, func() bool { return len(h.rt.callsWith(tt.first)) == 1 })

			began := time.Now()
			h.w.Update(h.deleted(p, ptr.To[int64](1)))
			// The second stop waits out its grace period: the cut
			// release has torn nothing else down meanwhile.
			waitFor(t, 10*time.Second, tt.second, func() bool { return len(h.rt.callsWith(tt.second)) == 1 })
			if n := h.net.downs(); n != 0 {
				t.Errorf("the network was torn down %d times while the container still ran", n)
			}
			select {
			case done := <-ran:
				if !done {
					t.Fatal("the worker stopped without tearing the pod down")
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("the pod was not torn down within 20 s of the shorter deletion: calls %v", h.rt.callsWith(""))
			}
			t.Logf("torn down %v after the second deletion", time.Since(began))
			if stops := h.rt.callsWith("stop"); len(stops) != tt.wantStops || stops[len(stops)-1] != tt.second {
				t.Errorf("stops = %v, want %d, the last %q", stops, tt.wantStops, tt.second)
			}
			if hooks := h.rt.callsWith("exec sh -c sleep 600"); len(hooks) != tt.wantHooks {
				t.Errorf("preStop hook runs = %v, want %d", hooks, tt.wantHooks)
			}
			failed, evs := 0, events(rec)
			for _, ev := range evs {
				if strings.Contains(ev, ReasonFailedPreStopHook) {
					failed++
				}
			}
			if failed != tt.wantFailed {
				t.Errorf("%d FailedPreStopHook events, want %d: %v", failed, tt.wantFailed, evs)
			}
			if h.net.downs() == 0 {
				t.Error("the network was never torn down")
			}
			h.status.mu.Lock()
			sent, dels := append([]corev1.PodStatus(nil), h.status.statuses...), h.status.deleted
			h.status.mu.Unlock()
			if len(sent) == 0 || sent[len(sent)-1].Phase != corev1.PodFailed || dels != 1 {
				t.Errorf("final status %+v, deletes %d; want Failed, then the object deleted once", sent, dels)
			}
		})
	}
}

// A second deletion with a longer (or the same) grace period does not
// restart the termination: a grace period only gets shorter.
func TestLongerGracePeriodKeepsTermination(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	h := newHarness(p)
	h.rt.stopWaits = true
	if h.sync(t) {
		t.Fatal("the pod was torn down before its deletion")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan bool, 1)
	go func() { ran <- h.w.Run(ctx) }()
	d := h.deleted(p, ptr.To[int64](2))
	h.w.Update(d)
	waitFor(t, 10*time.Second, "the stop with 2 s", func() bool { return len(h.rt.callsWith("stop c 2s")) == 1 })
	longer := d.DeepCopy()
	longer.DeletionGracePeriodSeconds = ptr.To[int64](600)
	h.w.Update(longer)
	h.w.Update(d.DeepCopy())
	select {
	case <-ran:
	case <-time.After(20 * time.Second):
		t.Fatalf("the pod was not torn down within 20 s: calls %v", h.rt.callsWith(""))
	}
	if stops := h.rt.callsWith("stop"); len(stops) != 1 {
		t.Errorf("stops = %v, want the one 2 s stop", stops)
	}
}
