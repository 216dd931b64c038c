package pod

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

type harness struct {
	clock   *clock
	rt      *fakeRuntime
	net     *fakeNetwork
	status  *fakeStatus
	started []time.Duration
	sli     []time.Duration
	w       *Worker
}

func newHarness(pod *corev1.Pod) *harness {
	h := &harness{clock: &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}, net: newFakeNetwork(), status: &fakeStatus{}}
	h.rt = newFakeRuntime(h.clock.Now)
	cfg := &WorkerConfig{
		Lifecycle: &Lifecycle{Hooks: []Hook{
			&NetworkHook{Network: h.net},
			&ImagesHook{Runtime: h.rt, Now: h.clock.Now},
			&ContainersHook{Runtime: h.rt, Env: EnvContext{Objects: fakeObjects{}}},
		}},
		Runtime: h.rt, Status: h.status, HostIP: "192.0.2.2", Now: h.clock.Now,
		OnStarted: func(_ *corev1.Pod, d, sli time.Duration) {
			h.started = append(h.started, d)
			h.sli = append(h.sli, sli)
		},
	}
	h.w = NewWorker(cfg, pod)
	return h
}

func (h *harness) sync(t *testing.T) bool {
	t.Helper()
	return h.w.Sync(context.Background())
}

// deleted is a copy of p as the API server leaves it after a deletion with
// grace seconds (nil: none given), at the harness's time.
func (h *harness) deleted(p *corev1.Pod, grace *int64) *corev1.Pod {
	d := p.DeepCopy()
	now := metav1.NewTime(h.clock.Now())
	d.DeletionTimestamp, d.DeletionGracePeriodSeconds = &now, grace
	return d
}

func testPod(policy corev1.RestartPolicy, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"},
		Spec: corev1.PodSpec{
			RestartPolicy: policy, TerminationGracePeriodSeconds: ptr.To[int64](7),
			Containers: []corev1.Container{{Name: "c", Image: image, Env: []corev1.EnvVar{{Name: "IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}}},
		},
	}
}

func TestWorkerStartsPod(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, "busybox")
	pod.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 11, 59, 59, 0, time.UTC)) // 1 s before the worker
	h := newHarness(pod)
	h.rt.onPull = func() { h.clock.Step(2 * time.Second) }
	h.clock.Step(1500 * time.Millisecond)
	if h.sync(t) {
		t.Fatal("worker finished")
	}
	want := []string{"pull docker.io/library/busybox:latest", "create c 0 env=IP=10.0.0.1", "start c 0"}
	if !reflect.DeepEqual(h.rt.calls, want) {
		t.Errorf("runtime calls = %v, want %v", h.rt.calls, want)
	}
	st := h.status.last()
	if st.Phase != corev1.PodRunning || st.PodIP != "10.0.0.1" || len(st.ContainerStatuses) != 1 || !st.ContainerStatuses[0].Ready {
		t.Errorf("status = %+v", st)
	}
	if len(h.started) != 1 || h.started[0] != 3500*time.Millisecond {
		t.Errorf("pod start observations = %v, want [3.5s]", h.started)
	}
	// The SLI runs from creation (1 s earlier) and leaves out the 2 s pull.
	if len(h.sli) != 1 || h.sli[0] != 2500*time.Millisecond {
		t.Errorf("pod start SLI observations = %v, want [2.5s]", h.sli)
	}
	if !h.w.Running() {
		t.Error("Running() = false")
	}
	// A sync with nothing new sends nothing.
	n := len(h.status.statuses)
	h.sync(t)
	if len(h.status.statuses) != n {
		t.Errorf("an unchanged status was sent again")
	}
}

func TestWorkerRestartBackOff(t *testing.T) {
	h := newHarness(testPod(corev1.RestartPolicyAlways, "busybox"))
	h.sync(t)
	lastCS := func() corev1.ContainerStatus { return h.status.last().ContainerStatuses[0] }

	// First crash: restarted at once.
	h.rt.exit("c", 1)
	h.sync(t)
	if got := h.rt.callsWith("start"); len(got) != 2 || got[1] != "start c 1" {
		t.Fatalf("starts = %v, want an immediate restart", got)
	}
	if cs := lastCS(); cs.RestartCount != 1 || cs.State.Running == nil || cs.LastTerminationState.Terminated == nil {
		t.Errorf("after first restart: %+v", cs)
	}
	// Second crash: CrashLoopBackOff for 10 s.
	h.rt.exit("c", 1)
	h.clock.Step(time.Second)
	h.sync(t)
	if cs := lastCS(); cs.State.Waiting == nil || cs.State.Waiting.Reason != ReasonCrashLoopBackOff || cs.RestartCount != 1 {
		t.Fatalf("after second crash: %+v", cs)
	}
	h.clock.Step(8 * time.Second)
	h.sync(t)
	if got := h.rt.callsWith("start"); len(got) != 2 {
		t.Fatalf("restarted during back-off: %v", got)
	}
	h.clock.Step(2 * time.Second)
	h.sync(t)
	if got := h.rt.callsWith("start"); len(got) != 3 || got[2] != "start c 2" {
		t.Fatalf("starts = %v, want a restart after 10 s", got)
	}
	// Only the running attempt and the previous one are kept.
	if h.rt.count() != 2 || len(h.rt.callsWith("remove c 0")) != 1 {
		t.Errorf("containers = %d, removes = %v", h.rt.count(), h.rt.callsWith("remove"))
	}
	// Third crash waits 20 s.
	h.rt.exit("c", 1)
	h.clock.Step(19 * time.Second)
	h.sync(t)
	if cs := lastCS(); cs.State.Waiting == nil || !strings.Contains(cs.State.Waiting.Message, "back-off 20s") {
		t.Fatalf("after third crash: %+v", cs.State)
	}
	// Always pulls again for each restart.
	if got := h.rt.callsWith("pull"); len(got) != 4 {
		t.Errorf("pulls = %v, want one per start (policy Always) plus one during back-off", got)
	}
	h.clock.Step(time.Second)
	h.sync(t)
	if got := h.rt.callsWith("start"); len(got) != 4 || got[3] != "start c 3" {
		t.Fatalf("starts = %v, want a restart after 20 s", got)
	}
	// A container that ran for 10 minutes has its back-off forgotten, as
	// upstream's: restarted at once, then 10 s again.
	h.clock.Step(BackOffResetAfter)
	h.rt.exit("c", 1)
	h.sync(t)
	if got := h.rt.callsWith("start"); len(got) != 5 || got[4] != "start c 4" {
		t.Fatalf("starts = %v, want an immediate restart after a long run", got)
	}
	h.clock.Step(time.Second)
	h.rt.exit("c", 1)
	h.sync(t)
	if cs := lastCS(); cs.State.Waiting == nil || !strings.Contains(cs.State.Waiting.Message, "back-off 10s") {
		t.Fatalf("the crash after the reset: %+v, want back-off 10s", cs.State)
	}
}

func TestWorkerRestartPolicyNever(t *testing.T) {
	tests := []struct {
		name string
		code int32
		want corev1.PodPhase
	}{
		{"succeeded", 0, corev1.PodSucceeded},
		{"failed", 3, corev1.PodFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(testPod(corev1.RestartPolicyNever, "busybox"))
			h.sync(t)
			h.rt.exit("c", tt.code)
			h.sync(t)
			st := h.status.last()
			if st.Phase != tt.want || st.ContainerStatuses[0].State.Terminated == nil || st.ContainerStatuses[0].State.Terminated.ExitCode != tt.code {
				t.Fatalf("status = %+v", st)
			}
			// A terminated pod releases its network but keeps its object
			// and its exited container, for its logs.
			if h.rt.count() != 1 || len(h.net.sandbox) != 0 || h.status.deleted != 0 || len(h.rt.callsWith("remove")) != 0 {
				t.Errorf("containers %d sandboxes %d deletes %d removes %v", h.rt.count(), len(h.net.sandbox), h.status.deleted, h.rt.callsWith("remove"))
			}
			n := len(h.status.statuses)
			h.sync(t)
			if len(h.status.statuses) != n || len(h.rt.callsWith("start")) != 1 {
				t.Errorf("a terminated pod was synced again")
			}
		})
	}
}

// A pod whose network namespace goes away under it gets a new sandbox: its
// cut-off container is stopped within the grace period and started again
// with the new address, as upstream's kubelet re-creates a changed sandbox.
func TestWorkerRecreatesLostSandbox(t *testing.T) {
	h := newHarness(testPod(corev1.RestartPolicyAlways, "busybox"))
	h.sync(t)
	if ip := h.status.last().PodIP; ip != "10.0.0.1" {
		t.Fatalf("pod IP = %q", ip)
	}
	h.net.lose("u1")
	h.sync(t)
	if got := h.rt.callsWith("stop"); !reflect.DeepEqual(got, []string{"stop c 7s"}) {
		t.Fatalf("stops = %v, want the container stopped within its grace period", got)
	}
	h.sync(t)
	if got := h.rt.callsWith("create"); len(got) != 2 || got[1] != "create c 1 env=IP=10.0.0.2" {
		t.Fatalf("creates = %v, want attempt 1 with the new address", got)
	}
	st := h.status.last()
	if st.PodIP != "10.0.0.2" || st.Phase != corev1.PodRunning || st.ContainerStatuses[0].RestartCount != 1 {
		t.Errorf("status = %+v", st)
	}
	if len(h.net.sandbox) != 1 {
		t.Errorf("sandboxes = %v, want the new one only", h.net.sandbox)
	}
	// Nothing is lost any more: the next sync changes nothing.
	n := len(h.rt.calls)
	h.sync(t)
	if len(h.rt.calls) != n {
		t.Errorf("calls after the recovery: %v", h.rt.calls[n:])
	}
}

// A pod that never restarts gets no new sandbox once its container ran: it
// is stopped and the pod ends, as upstream's.
func TestWorkerLostSandboxRestartPolicyNever(t *testing.T) {
	h := newHarness(testPod(corev1.RestartPolicyNever, "busybox"))
	h.sync(t)
	h.net.lose("u1")
	h.sync(t)
	h.sync(t)
	st := h.status.last()
	if st.Phase != corev1.PodFailed || st.ContainerStatuses[0].State.Terminated == nil || st.ContainerStatuses[0].State.Terminated.ExitCode != 137 {
		t.Fatalf("status = %+v", st)
	}
	if got := h.rt.callsWith("start"); len(got) != 1 {
		t.Errorf("starts = %v, want none after the loss", got)
	}
	if got := strings.Count(strings.Join(*h.net.log, ","), "network up"); got != 1 {
		t.Errorf("network set up %d times, want once: %v", got, *h.net.log)
	}
}

func TestWorkerImagePullBackOff(t *testing.T) {
	h := newHarness(testPod(corev1.RestartPolicyAlways, "127.0.0.1:5000/missing:v1"))
	reason := func() string {
		cs := h.status.last().ContainerStatuses[0]
		if cs.State.Waiting == nil {
			return ""
		}
		return cs.State.Waiting.Reason
	}
	h.sync(t)
	if reason() != ReasonErrImagePull {
		t.Fatalf("reason = %q, want ErrImagePull", reason())
	}
	h.clock.Step(time.Second)
	h.sync(t)
	if reason() != ReasonImagePullBackOff || len(h.rt.callsWith("pull")) != 1 {
		t.Fatalf("reason = %q pulls %v, want ImagePullBackOff without a pull", reason(), h.rt.callsWith("pull"))
	}
	h.clock.Step(10 * time.Second)
	h.sync(t)
	if len(h.rt.callsWith("pull")) != 2 || reason() != ReasonErrImagePull {
		t.Fatalf("pulls %v reason %q, want a retry after 10 s", h.rt.callsWith("pull"), reason())
	}
	h.rt.registry["127.0.0.1:5000/missing:v1"] = Image{Ref: "127.0.0.1:5000/missing:v1", ID: "x@sha256:2"}
	h.clock.Step(20 * time.Second)
	h.sync(t)
	if st := h.status.last(); st.Phase != corev1.PodRunning {
		t.Errorf("once the image exists: %+v", st)
	}
}

// TestWorkerImageLostBeforeCreate: an image removed between its pull and
// the container's creation (by the image garbage collector, or by hand) is
// pulled again on the next sync, as upstream makes sure of the image before
// every start; the pod does not wait on a create that cannot succeed.
func TestWorkerImageLostBeforeCreate(t *testing.T) {
	for _, policy := range []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent} {
		t.Run(string(policy), func(t *testing.T) {
			p := testPod(corev1.RestartPolicyAlways, "busybox")
			p.Spec.Containers[0].ImagePullPolicy = policy
			h := newHarness(p)
			h.rt.lostAfterPull = 1
			h.sync(t)
			if cs := h.status.last().ContainerStatuses[0]; cs.State.Running != nil {
				t.Fatalf("running without its image: %+v", cs.State)
			}
			h.clock.Step(time.Second)
			h.sync(t)
			if got := h.rt.callsWith("pull"); len(got) != 2 {
				t.Errorf("pulls = %v, want the lost image pulled again", got)
			}
			if cs := h.status.last().ContainerStatuses[0]; cs.State.Running == nil {
				t.Errorf("a second after the image was lost: %+v, want running", cs.State)
			}
		})
	}
}

func TestWorkerPullPolicies(t *testing.T) {
	tests := []struct {
		name      string
		policy    corev1.PullPolicy
		local     bool
		wantPulls int
		wantWait  string
	}{
		{name: "IfNotPresent with a local image", policy: corev1.PullIfNotPresent, local: true},
		{name: "IfNotPresent without", policy: corev1.PullIfNotPresent, wantPulls: 1},
		{name: "Always pulls", policy: corev1.PullAlways, local: true, wantPulls: 1},
		{name: "Never with a local image", policy: corev1.PullNever, local: true},
		{name: "Never without", policy: corev1.PullNever, wantWait: ReasonErrImageNeverPull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPod(corev1.RestartPolicyAlways, "busybox")
			p.Spec.Containers[0].ImagePullPolicy = tt.policy
			h := newHarness(p)
			if tt.local {
				h.rt.images["docker.io/library/busybox:latest"] = Image{Ref: "docker.io/library/busybox:latest", ID: "local"}
			}
			h.sync(t)
			if got := len(h.rt.callsWith("pull")); got != tt.wantPulls {
				t.Errorf("pulls = %d, want %d", got, tt.wantPulls)
			}
			cs := h.status.last().ContainerStatuses[0]
			if tt.wantWait == "" && cs.State.Running == nil {
				t.Errorf("not running: %+v", cs.State)
			}
			if tt.wantWait != "" && (cs.State.Waiting == nil || cs.State.Waiting.Reason != tt.wantWait) {
				t.Errorf("state = %+v, want waiting %s", cs.State, tt.wantWait)
			}
		})
	}
}

func TestWorkerDeletion(t *testing.T) {
	tests := []struct {
		name        string
		grace       *int64
		removed     bool
		downErr     error
		wantGrace   time.Duration
		wantDone    bool
		wantDeletes int
	}{
		{name: "deletion timestamp with grace", grace: ptr.To[int64](3), wantGrace: 3 * time.Second, wantDone: true, wantDeletes: 1},
		{name: "spec grace when the deletion has none", wantGrace: 7 * time.Second, wantDone: true, wantDeletes: 1},
		{name: "removed from the API: no delete call", removed: true, wantGrace: 7 * time.Second, wantDone: true},
		{name: "teardown failure is retried", grace: ptr.To[int64](0), downErr: errBoom, wantGrace: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPod(corev1.RestartPolicyAlways, "busybox")
			h := newHarness(p)
			h.sync(t)
			h.net.downErr = tt.downErr
			if tt.removed {
				h.w.Remove()
			} else {
				h.w.Update(h.deleted(p, tt.grace))
			}
			done := h.sync(t)
			if done != tt.wantDone {
				t.Fatalf("done = %v, want %v", done, tt.wantDone)
			}
			if got := h.rt.callsWith("stop"); len(got) != 1 || got[0] != "stop c "+tt.wantGrace.String() {
				t.Errorf("stops = %v, want grace %s", got, tt.wantGrace)
			}
			if h.rt.count() != 0 {
				t.Errorf("%d containers left", h.rt.count())
			}
			if h.status.deleted != tt.wantDeletes {
				t.Errorf("deletes = %d, want %d", h.status.deleted, tt.wantDeletes)
			}
			if tt.downErr == nil && len(h.net.sandbox) != 0 {
				t.Errorf("sandbox left")
			}
			if h.w.Running() {
				t.Errorf("still counted as running")
			}
			if tt.downErr != nil {
				h.net.downErr = nil
				if !h.sync(t) {
					t.Errorf("retry did not finish")
				}
			}
		})
	}
}

func TestWorkerAdoptsRunningContainer(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	h := newHarness(p)
	h.rt.containers["old"] = &Container{
		ID: "old", State: StateRunning, StartedAt: h.clock.Now().Add(-time.Hour),
		Labels: map[string]string{LabelPodUID: "u1", LabelContainerName: "c", LabelAttempt: "0"},
	}
	h.sync(t)
	if got := h.rt.callsWith("create"); len(got) != 0 {
		t.Errorf("creates = %v, want none", got)
	}
	cs := h.status.last().ContainerStatuses[0]
	if cs.ContainerID != "containerd://old" || cs.State.Running == nil || cs.RestartCount != 0 {
		t.Errorf("status = %+v", cs)
	}
	if len(h.started) != 0 {
		t.Errorf("an adopted pod was counted as started: %v", h.started)
	}
}

func TestWorkerNetworkNotReady(t *testing.T) {
	h := newHarness(testPod(corev1.RestartPolicyAlways, "busybox"))
	h.net.setUpErr = errBoom
	h.sync(t)
	st := h.status.last()
	if st.Phase != corev1.PodPending || len(h.rt.calls) != 0 {
		t.Fatalf("status %+v calls %v", st, h.rt.calls)
	}
	h.net.setUpErr = nil
	h.sync(t)
	if st := h.status.last(); st.Phase != corev1.PodRunning {
		t.Errorf("after the network came up: %+v", st)
	}
}

func TestWorkerAdoptedPodKeepsStatusUntilPrepared(t *testing.T) {
	h := newHarness(testPod(corev1.RestartPolicyAlways, "busybox"))
	h.rt.containers["old"] = &Container{
		ID: "old", State: StateRunning,
		Labels: map[string]string{LabelPodUID: "u1", LabelContainerName: "c", LabelAttempt: "0"},
	}
	h.net.setUpErr = errBoom
	h.sync(t)
	if len(h.status.statuses) != 0 {
		t.Fatalf("sent %+v before the sandbox was found again", h.status.last())
	}
	h.net.setUpErr = nil
	h.sync(t)
	if st := h.status.last(); st.PodIP == "" || st.Phase != corev1.PodRunning {
		t.Errorf("status = %+v", st)
	}
}

func TestWorkerHostNetwork(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	p.Spec.HostNetwork = true
	h := newHarness(p)
	h.w.cfg.Lifecycle.Hooks[0] = &NetworkHook{Network: h.net, HostIP: "192.0.2.2"}
	h.sync(t)
	if len(*h.net.log) != 0 {
		t.Errorf("CNI used for a hostNetwork pod: %v", *h.net.log)
	}
	if st := h.status.last(); st.PodIP != "192.0.2.2" || st.Phase != corev1.PodRunning {
		t.Errorf("status = %+v", st)
	}
	if got := h.rt.callsWith("create"); len(got) != 1 || got[0] != "create c 0 env=IP=192.0.2.2" {
		t.Errorf("creates = %v", got)
	}
}

func TestWorkerDoesNotRestartTerminatedPod(t *testing.T) {
	for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
		p := testPod(corev1.RestartPolicyNever, "busybox")
		p.Status.Phase = phase
		h := newHarness(p)
		h.sync(t)
		h.sync(t)
		if len(h.rt.calls) != 0 || len(h.status.statuses) != 0 {
			t.Errorf("%s pod: runtime calls %v, statuses %d; want nothing", phase, h.rt.calls, len(h.status.statuses))
		}
		if got := *h.net.log; len(got) != 1 || got[0] != "network down" {
			t.Errorf("%s pod: network calls %v, want one teardown", phase, got)
		}
	}
}

func TestWorkerEvict(t *testing.T) {
	h := newHarness(testPod(corev1.RestartPolicyAlways, "busybox"))
	h.sync(t)
	if !h.w.Running() {
		t.Fatal("pod not running before the eviction")
	}
	done := h.w.Evict(Eviction{
		Reason: "Evicted", Message: "The node was low on resource: memory.", GracePeriod: time.Second,
		Condition: &corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet"},
	})
	h.sync(t)
	select {
	case <-done:
	default:
		t.Fatal("the eviction is not reported done after a sync")
	}
	if h.rt.count() != 0 {
		t.Errorf("%d containers left after the eviction", h.rt.count())
	}
	st := h.status.last()
	if st.Phase != corev1.PodFailed || st.Reason != "Evicted" || st.Message != "The node was low on resource: memory." {
		t.Errorf("status = %s %q %q", st.Phase, st.Reason, st.Message)
	}
	if cs := st.ContainerStatuses[0]; cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 137 || cs.Ready {
		t.Errorf("container status = %+v", cs)
	}
	var disruption bool
	for _, c := range st.Conditions {
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionFalse {
			t.Errorf("Ready = %s after the eviction", c.Status)
		}
		disruption = disruption || (c.Type == corev1.DisruptionTarget && c.Reason == "TerminationByKubelet")
	}
	if !disruption {
		t.Errorf("no DisruptionTarget condition: %+v", st.Conditions)
	}
	if !h.w.Finished() || h.w.Running() {
		t.Errorf("Finished %v Running %v after the eviction", h.w.Finished(), h.w.Running())
	}
	// The pod is never started again.
	starts := len(h.rt.callsWith("start"))
	h.clock.Step(time.Minute)
	h.sync(t)
	if len(h.rt.callsWith("start")) != starts {
		t.Error("an evicted pod was started again")
	}
	// A second eviction of a finished pod is done at once.
	select {
	case <-h.w.Evict(Eviction{Reason: "Evicted"}):
	default:
		t.Error("evicting a finished pod again does not report done")
	}
}

// A pod that finished keeps its exited containers and their logs (for
// `kubectl logs`) while its network goes; deleting it removes them.
func TestWorkerFinishedPodKeepsContainersUntilDeleted(t *testing.T) {
	p := testPod(corev1.RestartPolicyOnFailure, "busybox")
	h := newHarness(p)
	logDir := t.TempDir()
	for _, hk := range h.w.cfg.Lifecycle.Hooks {
		if ch, ok := hk.(*ContainersHook); ok {
			ch.LogDir = logDir
		}
	}
	writeLog := func(attempt string) string {
		path := filepath.Join(logDir, "u1", "c", attempt+".log")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("out\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	h.sync(t)
	log0 := writeLog("0")
	h.rt.exit("c", 1) // restarted at once: attempt 1
	h.sync(t)
	log1 := writeLog("1")
	h.rt.exit("c", 0)
	h.clock.Step(time.Second)
	h.sync(t)
	if st := h.status.last(); st.Phase != corev1.PodSucceeded {
		t.Fatalf("phase = %s, want Succeeded", st.Phase)
	}
	if !h.w.Finished() {
		t.Error("Finished() = false")
	}
	if h.rt.count() != 2 || len(h.rt.callsWith("remove")) != 0 || len(h.net.sandbox) != 0 {
		t.Errorf("after finishing: containers %d removes %v sandboxes %d; want both attempts kept, the sandbox gone",
			h.rt.count(), h.rt.callsWith("remove"), len(h.net.sandbox))
	}
	for _, path := range []string{log0, log1} {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("log of a finished pod: %v", err)
		}
	}
	// Deleted: everything goes, logs too.
	h.w.Update(h.deleted(p, nil))
	if !h.sync(t) {
		t.Fatal("the deleted pod's worker did not finish")
	}
	if h.rt.count() != 0 || h.status.deleted != 1 {
		t.Errorf("after deletion: containers %d deletes %d", h.rt.count(), h.status.deleted)
	}
	if _, err := os.Stat(filepath.Join(logDir, "u1")); !os.IsNotExist(err) {
		t.Errorf("the pod's logs are left after its deletion: %v", err)
	}
}

// A restarted container's older attempts go with their logs and
// termination message files; the last one stays for lastState and
// `--previous`.
func TestContainersHookRemovesOlderAttemptLogs(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	p.Spec.Containers[0].TerminationMessagePath = corev1.TerminationMessagePathDefault
	h := newHarness(p)
	logDir := t.TempDir()
	h.containersHook().LogDir, h.containersHook().PodsDir = logDir, t.TempDir()
	h.sync(t)
	for _, a := range []string{"0", "1"} {
		path := filepath.Join(logDir, "u1", "c", a+".log")
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.rt.exit("c", 1)
	h.sync(t) // attempt 1 starts; 0 is kept as the previous one
	cs, _ := h.rt.ListContainers(context.Background(), "u1")
	var msgFile string
	for _, c := range cs {
		if c.Attempt() == 0 {
			msgFile = c.Labels[LabelTerminationMessagePath]
		}
	}
	if msgFile == "" {
		t.Fatal("attempt 0 has no termination message file")
	}
	h.rt.exit("c", 1)
	h.clock.Step(11 * time.Second)
	h.sync(t) // attempt 2 starts; 0 goes
	if _, err := os.Stat(filepath.Join(logDir, "u1", "c", "0.log")); !os.IsNotExist(err) {
		t.Errorf("attempt 0's log: %v, want removed with its container", err)
	}
	if _, err := os.Stat(msgFile); !os.IsNotExist(err) {
		t.Errorf("attempt 0's termination message file: %v, want removed with its container", err)
	}
	if _, err := os.Stat(filepath.Join(logDir, "u1", "c", "1.log")); err != nil {
		t.Errorf("attempt 1's log: %v, want kept", err)
	}
}

// A pod that runs past its activeDeadlineSeconds is killed and ends Failed
// with DeadlineExceeded, as upstream; it keeps its containers, and is not
// started again.
func TestWorkerActiveDeadline(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	p.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
	p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: execHandler("prestop")}
	h := newHarness(p)
	rec, _ := h.withHandlers()
	h.w.cfg.Recorder = rec
	h.sync(t)
	h.clock.Step(29 * time.Second)
	h.sync(t)
	if st := h.status.last(); st.Phase != corev1.PodRunning {
		t.Fatalf("phase before the deadline = %s", st.Phase)
	}
	h.clock.Step(time.Second)
	h.sync(t)
	st := h.status.last()
	if st.Phase != corev1.PodFailed || st.Reason != "DeadlineExceeded" || st.Message != "Pod was active on the node longer than the specified deadline" {
		t.Fatalf("status = %s %q %q", st.Phase, st.Reason, st.Message)
	}
	if cs := st.ContainerStatuses[0]; cs.State.Terminated == nil || cs.Ready {
		t.Errorf("container status = %+v", cs)
	}
	if got := strings.Join(h.rt.calls, "|"); !strings.Contains(got, "exec prestop|stop c ") {
		t.Errorf("calls = %s, want the container killed after its preStop hook", got)
	}
	if h.rt.count() != 1 || len(h.net.sandbox) != 0 {
		t.Errorf("containers %d sandboxes %d, want the container kept and the sandbox released", h.rt.count(), len(h.net.sandbox))
	}
	if evs := events(rec); !hasEvent(evs, "Normal DeadlineExceeded Pod was active on the node longer than the specified deadline") {
		t.Errorf("events = %v", evs)
	}
	h.clock.Step(time.Minute)
	h.sync(t)
	if got := h.rt.callsWith("start"); len(got) != 1 {
		t.Errorf("starts = %v: started again after its deadline", got)
	}
}

// A deadline lowered on a running pod applies at once.
func TestWorkerActiveDeadlineLowered(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	h := newHarness(p)
	h.sync(t)
	h.clock.Step(10 * time.Second)
	u := p.DeepCopy()
	u.Spec.ActiveDeadlineSeconds = ptr.To[int64](5)
	h.w.Update(u)
	h.sync(t)
	if st := h.status.last(); st.Phase != corev1.PodFailed || st.Reason != "DeadlineExceeded" {
		t.Errorf("status = %s %q", st.Phase, st.Reason)
	}
}

// A pod being deleted gets its final status (its containers' exits, a
// terminal phase) before its object is deleted, as upstream's kubelet
// writes it: what waits on the pod (a Job's finalizer) sees how it ended.
func TestWorkerDeletionWritesFinalStatus(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	h := newHarness(p)
	h.sync(t)
	h.w.Update(h.deleted(p, ptr.To[int64](1)))
	if !h.sync(t) {
		t.Fatal("worker did not finish")
	}
	st := h.status.last()
	if st.Phase != corev1.PodFailed {
		t.Errorf("final phase = %s, want Failed", st.Phase)
	}
	if len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].State.Terminated == nil ||
		st.ContainerStatuses[0].State.Terminated.ExitCode != 137 || st.ContainerStatuses[0].Ready {
		t.Errorf("final container status = %+v", st.ContainerStatuses)
	}
	for _, c := range st.Conditions {
		if (c.Type == corev1.PodReady || c.Type == corev1.ContainersReady) && c.Status != corev1.ConditionFalse {
			t.Errorf("condition %s = %s after termination", c.Type, c.Status)
		}
	}
	if h.status.deleted != 1 {
		t.Errorf("deletes = %d, want 1", h.status.deleted)
	}
}

func TestTerminatedStatusPhase(t *testing.T) {
	term := func(code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	tests := []struct {
		name string
		st   corev1.PodStatus
		prev corev1.PodStatus
		want corev1.PodPhase
	}{
		{name: "every container exited 0", st: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{term(0), term(0)}}, want: corev1.PodSucceeded},
		{name: "one failed", st: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{term(0), term(143)}}, want: corev1.PodFailed},
		{name: "one never started", st: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}}}}, want: corev1.PodFailed},
		{name: "gone from the runtime after exiting 0", st: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}}}},
			prev: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}}, want: corev1.PodSucceeded},
		{name: "gone from the runtime while running", st: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}}}},
			prev: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}, want: corev1.PodFailed},
		{name: "already succeeded", st: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{term(1)}}, want: corev1.PodSucceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := terminatedStatus(tt.st, tt.prev, time.Now()).Phase; got != tt.want {
				t.Errorf("phase = %s, want %s", got, tt.want)
			}
		})
	}
}
