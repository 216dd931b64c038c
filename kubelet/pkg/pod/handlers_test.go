package pod

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
)

// containersHook is the harness's containers hook, to configure.
func (h *harness) containersHook() *ContainersHook {
	for _, hk := range h.w.cfg.Lifecycle.Hooks {
		if ch, ok := hk.(*ContainersHook); ok {
			return ch
		}
	}
	return nil
}

// withHandlers gives the harness a handler runner whose sleeps are
// recorded, and an event recorder.
func (h *harness) withHandlers() (*record.FakeRecorder, *[]time.Duration) {
	rec := record.NewFakeRecorder(100)
	var mu sync.Mutex
	sleeps := &[]time.Duration{}
	ch := h.containersHook()
	ch.Recorder = rec
	ch.Handlers = &HandlerRunner{Runtime: h.rt, Sleep: func(_ context.Context, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		*sleeps = append(*sleeps, d)
	}}
	return rec, sleeps
}

func events(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func hasEvent(evs []string, want string) bool {
	for _, e := range evs {
		if strings.HasPrefix(e, want) {
			return true
		}
	}
	return false
}

func execHandler(cmd ...string) *corev1.LifecycleHandler {
	return &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: cmd}}
}

func TestPostStartHook(t *testing.T) {
	tests := []struct {
		name       string
		policy     corev1.RestartPolicy
		code       int32
		wantKilled bool
		wantPhase  corev1.PodPhase
	}{
		{name: "succeeds", policy: corev1.RestartPolicyAlways, wantPhase: corev1.PodRunning},
		{name: "fails: killed and restarted", policy: corev1.RestartPolicyAlways, code: 1, wantKilled: true, wantPhase: corev1.PodRunning},
		{name: "fails under Never: the pod fails", policy: corev1.RestartPolicyNever, code: 1, wantKilled: true, wantPhase: corev1.PodFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPod(tt.policy, "busybox")
			p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{
				PostStart: execHandler("sh", "-c", "poststart"),
				PreStop:   execHandler("sh", "-c", "prestop"),
			}
			h := newHarness(p)
			rec, _ := h.withHandlers()
			h.rt.execCodes = map[string]int32{"sh -c poststart": tt.code}
			h.sync(t)
			calls := strings.Join(h.rt.calls, "|")
			if !strings.Contains(calls, "start c 0|exec sh -c poststart") {
				t.Fatalf("calls = %s, want the postStart hook right after the start", calls)
			}
			evs := events(rec)
			if got := hasEvent(evs, "Warning FailedPostStartHook PostStartHook failed"); got != tt.wantKilled {
				t.Errorf("FailedPostStartHook event: %v, want %v (events %v)", got, tt.wantKilled, evs)
			}
			if tt.wantKilled {
				// Killed as upstream kills: its preStop hook, then the stop.
				if !strings.Contains(calls, "exec sh -c poststart|exec sh -c prestop|stop c") || !hasEvent(evs, "Normal Killing FailedPostStartHook") {
					t.Errorf("calls = %s, events %v; want the container killed after its failed hook", calls, evs)
				}
			} else if len(h.rt.callsWith("stop")) != 0 {
				t.Errorf("stopped though its hook succeeded: %s", calls)
			}
			h.sync(t)
			if st := h.status.last(); st.Phase != tt.wantPhase {
				t.Errorf("phase = %s, want %s", st.Phase, tt.wantPhase)
			}
			if tt.wantKilled && tt.policy == corev1.RestartPolicyAlways {
				if got := h.rt.callsWith("start"); len(got) != 2 {
					t.Errorf("starts = %v, want a restart after the failed hook", got)
				}
			}
		})
	}
}

func TestPostStartHookErrorWaitingReason(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: execHandler("false")}
	h := newHarness(p)
	h.withHandlers()
	h.rt.execCodes = map[string]int32{"false": 1}
	h.sync(t)
	cs := h.status.last().ContainerStatuses[0]
	if w := cs.State.Waiting; w == nil || w.Reason != ReasonPostStartHookError || !strings.Contains(w.Message, "Exec lifecycle hook ([false]) for Container \"c\" in Pod \"p_ns(u1)\" failed") {
		t.Fatalf("state = %+v, want waiting PostStartHookError", cs.State)
	}
	h.sync(t) // restarted at once, fails again: now in back-off
	h.sync(t)
	if w := h.status.last().ContainerStatuses[0].State.Waiting; w == nil || w.Reason != ReasonCrashLoopBackOff {
		t.Errorf("state after the second failure = %+v, want CrashLoopBackOff", h.status.last().ContainerStatuses[0].State)
	}
}

// A postStart sleep holds the container's start back, as upstream's: the
// pod's status (and its start observation) comes only once the sleep is
// over; the fake clock moves by the sleep.
func TestPostStartSleepHook(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}}
	h := newHarness(p)
	rec, _ := h.withHandlers()
	var sleeps []time.Duration
	var during []string
	h.containersHook().Handlers.Sleep = func(_ context.Context, d time.Duration) {
		sleeps = append(sleeps, d)
		h.status.mu.Lock()
		sent := len(h.status.statuses)
		h.status.mu.Unlock()
		if !strings.HasSuffix(strings.Join(h.rt.calls, "|"), "start c 0") {
			during = append(during, "the sleep ran before the start: "+strings.Join(h.rt.calls, "|"))
		}
		if sent != 0 || h.w.Running() {
			during = append(during, "a status was sent before the sleep was over")
		}
		h.clock.Step(d)
	}
	h.sync(t)
	for _, e := range during {
		t.Error(e)
	}
	if len(sleeps) != 1 || sleeps[0] != 5*time.Second {
		t.Fatalf("sleeps = %v, want [5s]", sleeps)
	}
	st := h.status.last()
	if st.Phase != corev1.PodRunning || len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].State.Running == nil {
		t.Fatalf("status after the sleep = %+v, want the container running", st)
	}
	if len(h.started) != 1 || h.started[0] != 5*time.Second {
		t.Errorf("pod start observations = %v, want [5s] (the sleep included)", h.started)
	}
	if evs := events(rec); hasEvent(evs, "Warning FailedPostStartHook") {
		t.Errorf("events %v: the sleep failed", evs)
	}
}

// A postStart sleep ends with its context, as upstream's runSleepHandler,
// and then fails: the hook did not finish. The container is killed as
// after any failed postStart hook.
func TestPostStartSleepEndsWithContext(t *testing.T) {
	s := NewState(testPod(corev1.RestartPolicyAlways, "busybox"))
	c := &s.Pod.Spec.Containers[0]
	h := &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 3600}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	msg, err := (&HandlerRunner{}).Run(ctx, s, c, "id", h, time.Duration(math.MaxInt64))
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the sleep took %v after its context ended", took)
	}
	want := `Sleep lifecycle hook (3600) for Container "c" in Pod "p_ns(u1)" failed - error: container terminated before sleep hook finished`
	if err == nil || msg != want {
		t.Errorf("Run = %q, %v; want %q", msg, err, want)
	}

	// In the pod's sync: the kubelet's context ends during the sleep.
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: h}
	hs := newHarness(p)
	rec, _ := hs.withHandlers()
	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	hs.containersHook().Handlers.Sleep = func(context.Context, time.Duration) { scancel() }
	hs.w.Sync(sctx)
	evs := events(rec)
	if !hasEvent(evs, "Warning FailedPostStartHook PostStartHook failed") || !hasEvent(evs, "Normal Killing FailedPostStartHook") {
		t.Errorf("events %v, want the failed hook's and the kill", evs)
	}
	if calls := strings.Join(hs.rt.calls, "|"); !strings.Contains(calls, "start c 0|stop c") {
		t.Errorf("calls = %s, want the container stopped after its cut sleep", calls)
	}
}

func TestPreStopHook(t *testing.T) {
	tests := []struct {
		name      string
		handler   *corev1.LifecycleHandler
		code      int32
		wantSleep []time.Duration
		wantEvent bool
	}{
		{name: "exec", handler: execHandler("sh", "-c", "prestop")},
		{name: "exec fails: FailedPreStopHook, still stopped", handler: execHandler("sh", "-c", "prestop"), code: 2, wantEvent: true},
		{name: "sleep", handler: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}, wantSleep: []time.Duration{5 * time.Second}},
		{name: "sleep longer than the grace period", handler: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 60}}, wantSleep: []time.Duration{7 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPod(corev1.RestartPolicyAlways, "busybox")
			p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: tt.handler}
			h := newHarness(p)
			rec, sleeps := h.withHandlers()
			h.rt.execCodes = map[string]int32{"sh -c prestop": tt.code}
			h.sync(t)
			if len(h.rt.callsWith("exec")) != 0 {
				t.Fatalf("the preStop hook ran at the start: %v", h.rt.calls)
			}
			h.w.Update(h.deleted(p, nil))
			if !h.sync(t) {
				t.Fatal("the deleted pod's worker did not finish")
			}
			calls := strings.Join(h.rt.calls, "|")
			if tt.handler.Exec != nil && !strings.Contains(calls, "exec sh -c prestop|stop c") {
				t.Errorf("calls = %s, want the preStop hook before the stop", calls)
			}
			if strings.Join(durations(*sleeps), ",") != strings.Join(durations(tt.wantSleep), ",") {
				t.Errorf("sleeps = %v, want %v", *sleeps, tt.wantSleep)
			}
			if got := hasEvent(events(rec), "Warning FailedPreStopHook PreStopHook failed"); got != tt.wantEvent {
				t.Errorf("FailedPreStopHook event: %v, want %v", got, tt.wantEvent)
			}
			if h.rt.count() != 0 {
				t.Errorf("%d containers left", h.rt.count())
			}
		})
	}
}

func durations(ds []time.Duration) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.String())
	}
	return out
}

func TestHTTPLifecycleHandler(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RequestURI()+" "+r.UserAgent()+" "+r.Header.Get("X-Hook"))
		mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError) // hooks do not look at the status
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	c := &corev1.Container{Name: "c", Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: int32(port)}}}
	s := NewState(testPod(corev1.RestartPolicyAlways, "busybox"))
	s.Sandbox = &Sandbox{IPs: []string{"127.0.0.1"}}
	r := &HandlerRunner{}
	h := &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/echo?msg=poststart", Port: intstr.FromString("web"),
		HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Hook", Value: "yes"}}}}
	if msg, err := r.Run(context.Background(), s, c, "id", h, time.Second); err != nil {
		t.Fatalf("Run: %v (%s)", err, msg)
	}
	if len(got) != 1 || got[0] != "/echo?msg=poststart kube-lifecycle/1.32 yes" {
		t.Errorf("requests = %q", got)
	}
	srv.Close()
	msg, err := r.Run(context.Background(), s, c, "id", h, time.Second)
	if err == nil || !strings.HasPrefix(msg, `HTTP lifecycle hook (/echo?msg=poststart) for Container "c" in Pod "p_ns(u1)" failed - error:`) {
		t.Errorf("to a closed port: %q, %v; want a failure", msg, err)
	}
}

func TestTerminationMessage(t *testing.T) {
	long := strings.Repeat("x", MaxTerminationMessageLength) + "END"
	var logLines strings.Builder
	pad := strings.Repeat(" ", 30)
	for i := range 100 {
		logLines.WriteString("2026-01-01T12:00:00.000000000Z stdout F line " + strconv.Itoa(i) + pad + "\n")
	}
	tests := []struct {
		name   string
		policy corev1.TerminationMessagePolicy
		file   string
		log    string
		code   int32
		want   string
	}{
		{name: "the file", file: "bye", code: 0, want: "bye"},
		{name: "the file's last 4096 bytes", file: long, code: 1, want: long[len(long)-MaxTerminationMessageLength:]},
		{name: "no fallback by default", log: "2026-01-01T12:00:00Z stdout F oops\n", code: 1, want: ""},
		{name: "fallback to the log on failure", policy: corev1.TerminationMessageFallbackToLogsOnError,
			log: "2026-01-01T12:00:00Z stdout F one\n2026-01-01T12:00:00Z stderr F oops\n", code: 1, want: "one\noops\n"},
		{name: "fallback: the last 80 lines", policy: corev1.TerminationMessageFallbackToLogsOnError,
			log: logLines.String(), code: 2, want: "line 20\n"},
		{name: "no fallback on success", policy: corev1.TerminationMessageFallbackToLogsOnError,
			log: "2026-01-01T12:00:00Z stdout F fine\n", code: 0, want: ""},
		{name: "the file wins over the log", policy: corev1.TerminationMessageFallbackToLogsOnError,
			file: "from file", log: "2026-01-01T12:00:00Z stdout F from log\n", code: 1, want: "from file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPod(corev1.RestartPolicyNever, "busybox")
			p.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
			p.Spec.Containers[0].TerminationMessagePolicy = tt.policy
			h := newHarness(p)
			ch := h.containersHook()
			ch.PodsDir, ch.LogDir = t.TempDir(), t.TempDir()
			h.sync(t)
			cs, err := h.rt.ListContainers(context.Background(), "u1")
			if err != nil || len(cs) != 1 {
				t.Fatalf("containers %v, %v", cs, err)
			}
			file := cs[0].Labels[LabelTerminationMessagePath]
			if !strings.HasPrefix(file, filepath.Join(ch.PodsDir, "u1", "containers", "c")+"/") {
				t.Fatalf("termination message file %q", file)
			}
			if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o666 {
				t.Fatalf("termination message file: %v %v, want mode 0666", fi, err)
			}
			if err := os.WriteFile(file, []byte(tt.file), 0o666); err != nil {
				t.Fatal(err)
			}
			logPath := filepath.Join(ch.LogDir, "u1", "c", "0.log")
			_ = os.MkdirAll(filepath.Dir(logPath), 0o755)
			if err := os.WriteFile(logPath, []byte(tt.log), 0o644); err != nil {
				t.Fatal(err)
			}
			h.rt.exit("c", tt.code)
			h.sync(t)
			term := h.status.last().ContainerStatuses[0].State.Terminated
			if term == nil {
				t.Fatalf("state = %+v", h.status.last().ContainerStatuses[0].State)
			}
			want := tt.want
			if tt.name == "fallback: the last 80 lines" {
				// Lines 20 to 99, cut at 2048 bytes.
				var b strings.Builder
				for i := 20; i < 100; i++ {
					b.WriteString("line " + strconv.Itoa(i) + pad + "\n")
				}
				want = b.String()[:MaxTerminationMessageLogLength]
			}
			if term.Message != want {
				t.Errorf("message = %q, want %q", term.Message, want)
			}
		})
	}
}

func TestTerminationMessageMount(t *testing.T) {
	p := testPod(corev1.RestartPolicyNever, "busybox")
	p.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
	h := newHarness(p)
	var specs []ContainerSpec
	h.rt.onCreate = func(s ContainerSpec) { specs = append(specs, s) }
	h.containersHook().PodsDir = t.TempDir()
	h.sync(t)
	if len(specs) != 1 {
		t.Fatalf("specs = %d", len(specs))
	}
	var found bool
	for _, m := range specs[0].Mounts {
		if m.Destination == "/dev/termination-log" && m.Source == specs[0].Labels[LabelTerminationMessagePath] && !m.ReadOnly {
			found = true
		}
	}
	if !found {
		t.Errorf("mounts = %+v, want the termination message file at /dev/termination-log", specs[0].Mounts)
	}
}

// Messages of containers that are gone (older attempts) are forgotten.
func TestTerminationMessagesForgetRemovedContainers(t *testing.T) {
	s := NewState(testPod(corev1.RestartPolicyAlways, "busybox"))
	s.TerminationMessages = map[string]string{"gone": "old", "kept": "bye"}
	s.Containers = []Container{{ID: "kept", State: StateExited, Labels: map[string]string{LabelContainerName: "c"}}}
	s.ReadTerminationMessages(context.Background())
	if len(s.TerminationMessages) != 1 || s.TerminationMessages["kept"] != "bye" {
		t.Errorf("messages = %v, want only the kept container's", s.TerminationMessages)
	}
}
