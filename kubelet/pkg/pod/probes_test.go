package pod

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// scripted answers probes from a queue per kind ("startup", "liveness",
// "readiness"), true when empty.
type scripted struct {
	answers map[*corev1.Probe][]bool
	calls   map[*corev1.Probe]int
}

func (s *scripted) probe(_ context.Context, _ *State, _ *corev1.Container, _ *Container, p *corev1.Probe) (bool, string) {
	s.calls[p]++
	q := s.answers[p]
	if len(q) == 0 {
		return true, ""
	}
	s.answers[p] = q[1:]
	if q[0] {
		return true, ""
	}
	return false, "scripted failure"
}

func probeHarness(pod *corev1.Pod) (*harness, *scripted) {
	h := newHarness(pod)
	sc := &scripted{answers: map[*corev1.Probe][]bool{}, calls: map[*corev1.Probe]int{}}
	h.w.cfg.Lifecycle.Hooks = append(h.w.cfg.Lifecycle.Hooks, &ProbesHook{Runtime: h.rt, Probe: sc.probe})
	return h, sc
}

func readyOf(h *harness) (ready, started bool) {
	cs := h.status.last().ContainerStatuses[0]
	return cs.Ready, cs.Started != nil && *cs.Started
}

func TestReadinessProbe(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	rp := &corev1.Probe{InitialDelaySeconds: 5, PeriodSeconds: 10, FailureThreshold: 2}
	p.Spec.Containers[0].ReadinessProbe = rp
	h, sc := probeHarness(p)
	sc.answers[rp] = []bool{true, false, false, true}
	h.sync(t)
	if ready, _ := readyOf(h); ready || sc.calls[rp] != 0 {
		t.Fatalf("ready %v with %d probes before the initial delay", ready, sc.calls[rp])
	}
	h.clock.Step(5 * time.Second)
	h.sync(t)
	if ready, _ := readyOf(h); !ready {
		t.Fatalf("not ready after a successful probe")
	}
	if st := h.status.last(); condStatus(st, corev1.PodReady) != corev1.ConditionTrue {
		t.Errorf("Ready condition = %s", condStatus(st, corev1.PodReady))
	}
	h.clock.Step(5 * time.Second)
	h.sync(t)
	if sc.calls[rp] != 1 {
		t.Fatalf("probed %d times before the period passed", sc.calls[rp])
	}
	h.clock.Step(5 * time.Second)
	h.sync(t) // first failure: still ready
	if ready, _ := readyOf(h); !ready {
		t.Fatalf("unready after one failure (threshold 2)")
	}
	h.clock.Step(10 * time.Second)
	h.sync(t) // second failure
	if ready, _ := readyOf(h); ready {
		t.Fatalf("still ready after two failures")
	}
	if st := h.status.last(); st.Phase != corev1.PodRunning || condStatus(st, corev1.PodReady) != corev1.ConditionFalse {
		t.Errorf("phase %s ready %s", st.Phase, condStatus(st, corev1.PodReady))
	}
	h.clock.Step(10 * time.Second)
	h.sync(t)
	if ready, _ := readyOf(h); !ready {
		t.Errorf("not ready again after a success")
	}
}

func TestLivenessProbeRestarts(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	lp := &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 2}
	p.Spec.Containers[0].LivenessProbe = lp
	h, sc := probeHarness(p)
	sc.answers[lp] = []bool{false, false}
	h.sync(t) // starts; first failure
	h.clock.Step(time.Second)
	h.sync(t) // second failure: stopped with the pod's grace period
	if got := h.rt.callsWith("stop"); len(got) != 1 || got[0] != "stop c 7s" {
		t.Fatalf("stops = %v", got)
	}
	h.clock.Step(time.Second)
	h.sync(t) // exited, restarted at once (first restart)
	if got := h.rt.callsWith("start"); len(got) != 2 {
		t.Errorf("starts = %v, want a restart", got)
	}
	if cs := h.status.last().ContainerStatuses[0]; cs.RestartCount != 1 || cs.State.Running == nil {
		t.Errorf("status = %+v", cs)
	}
}

func TestStartupProbeGatesOthers(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	sp := &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 5}
	lp := &corev1.Probe{PeriodSeconds: 1}
	rp := &corev1.Probe{PeriodSeconds: 1}
	c := &p.Spec.Containers[0]
	c.StartupProbe, c.LivenessProbe, c.ReadinessProbe = sp, lp, rp
	h, sc := probeHarness(p)
	sc.answers[sp] = []bool{false, false, true}
	for i := 0; i < 2; i++ {
		h.sync(t)
		h.clock.Step(time.Second)
		if ready, started := readyOf(h); ready || started {
			t.Fatalf("round %d: ready %v started %v before the startup probe succeeded", i, ready, started)
		}
	}
	if sc.calls[lp] != 0 || sc.calls[rp] != 0 {
		t.Fatalf("liveness/readiness ran before startup: %d %d", sc.calls[lp], sc.calls[rp])
	}
	h.sync(t) // startup succeeds
	h.clock.Step(time.Second)
	h.sync(t) // liveness and readiness run
	if ready, started := readyOf(h); !ready || !started {
		t.Errorf("ready %v started %v after startup", ready, started)
	}
}

func condStatus(st corev1.PodStatus, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func TestProber(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && r.Header.Get("X-Check") == "1" {
			return
		}
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	_, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()

	rt := newFakeRuntime(time.Now)
	one := int32(1)
	c := &corev1.Container{Name: "c", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}
	s := NewState(testPod(corev1.RestartPolicyAlways, "busybox"))
	s.Sandbox = &Sandbox{IPs: []string{"127.0.0.1"}}
	cur := &Container{ID: "id"}
	tests := []struct {
		name  string
		probe corev1.ProbeHandler
		exit  *int32
		want  bool
	}{
		{name: "http 200 by named port", probe: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"), HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Check", Value: "1"}}}}, want: true},
		{name: "http 503", probe: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/other", Port: intstr.FromInt32(int32(port))}}, want: false},
		{name: "http unknown port name", probe: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("nope")}}, want: false},
		{name: "tcp open", probe: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}, want: true},
		{name: "tcp closed", probe: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(closedPort))}}, want: false},
		{name: "exec 0", probe: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, want: true},
		{name: "exec 1", probe: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"false"}}}, exit: &one, want: false},
		{name: "grpc unsupported", probe: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 1}}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt.execCode = tt.exit
			p := &Prober{Runtime: rt}
			got, msg := p.Probe(context.Background(), s, c, cur, &corev1.Probe{ProbeHandler: tt.probe, TimeoutSeconds: 2})
			if got != tt.want {
				t.Errorf("Probe = %v (%s), want %v", got, msg, tt.want)
			}
			if !got && msg == "" {
				t.Errorf("a failed probe without a message")
			}
		})
	}
}
