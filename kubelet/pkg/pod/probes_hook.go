package pod

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// ProbeFunc runs one probe against a running container and says whether
// it succeeded, with a message when it did not.
type ProbeFunc func(ctx context.Context, s *State, c *corev1.Container, cur *Container, p *corev1.Probe) (bool, string)

// ProbeCounter is the state of one probe of one container.
type ProbeCounter struct {
	Successes, Failures int
	NextAt              time.Time
}

// ProbeState is what the probes found for one container (by ID: a
// restarted container starts over).
type ProbeState struct {
	ContainerID string
	// Started: the startup probe succeeded (or there is none).
	Started bool
	// Ready: the readiness probe's verdict (true when there is none).
	Ready    bool
	Counters map[string]*ProbeCounter // "startup", "liveness", "readiness"
}

// ProbesHook runs the startup, liveness and readiness probes of running
// containers on every sync, at their periods, with upstream's defaults
// (period 10 s, timeout 1 s, success threshold 1, failure threshold 3).
// Liveness and readiness wait for the startup probe. A container that
// fails its liveness or startup probe is stopped, and its restart policy
// applies.
type ProbesHook struct {
	Runtime  Runtime
	Probe    ProbeFunc
	Recorder record.EventRecorder
	// Handlers runs the preStop hook of a container being killed (none
	// when nil).
	Handlers *HandlerRunner
}

// Name implements Hook.
func (h *ProbesHook) Name() string { return "probes" }

// Run implements Runner.
func (h *ProbesHook) Run(ctx context.Context, s *State) error {
	if s.Probes == nil {
		s.Probes = map[string]*ProbeState{}
	}
	for i := range s.Pod.Spec.Containers {
		c := &s.Pod.Spec.Containers[i]
		cur, _ := s.Latest(c.Name)
		if cur == nil || cur.State != StateRunning {
			delete(s.Probes, c.Name)
			continue
		}
		ps := s.Probes[c.Name]
		if ps == nil || ps.ContainerID != cur.ID {
			ps = &ProbeState{ContainerID: cur.ID, Started: c.StartupProbe == nil, Ready: c.ReadinessProbe == nil, Counters: map[string]*ProbeCounter{}}
			s.Probes[c.Name] = ps
		}
		if err := h.probeContainer(ctx, s, c, cur, ps); err != nil {
			return err
		}
	}
	return nil
}

func (h *ProbesHook) probeContainer(ctx context.Context, s *State, c *corev1.Container, cur *Container, ps *ProbeState) error {
	if !ps.Started {
		ok, fail := h.step(ctx, s, c, cur, ps, "startup", c.StartupProbe)
		if ok {
			ps.Started = true
		}
		if fail {
			return h.kill(ctx, s, c, cur, "failed startup probe")
		}
		return nil
	}
	if c.LivenessProbe != nil {
		if _, fail := h.step(ctx, s, c, cur, ps, "liveness", c.LivenessProbe); fail {
			return h.kill(ctx, s, c, cur, "failed liveness probe")
		}
	}
	if c.ReadinessProbe != nil {
		ok, fail := h.step(ctx, s, c, cur, ps, "readiness", c.ReadinessProbe)
		if ok {
			ps.Ready = true
		}
		if fail {
			ps.Ready = false
		}
	}
	return nil
}

// step probes when due and reports whether the success or the failure
// threshold was reached by this result.
func (h *ProbesHook) step(ctx context.Context, s *State, c *corev1.Container, cur *Container, ps *ProbeState, kind string, p *corev1.Probe) (succeeded, failed bool) {
	cnt := ps.Counters[kind]
	if cnt == nil {
		cnt = &ProbeCounter{NextAt: cur.StartedAt.Add(time.Duration(p.InitialDelaySeconds) * time.Second)}
		ps.Counters[kind] = cnt
	}
	if s.Now.Before(cnt.NextAt) {
		return false, false
	}
	period, _, successThreshold, failureThreshold := probeSettings(p)
	cnt.NextAt = s.Now.Add(period)
	ok, msg := h.Probe(ctx, s, c, cur, p)
	if ok {
		cnt.Successes++
		cnt.Failures = 0
		return cnt.Successes >= successThreshold, false
	}
	cnt.Failures++
	cnt.Successes = 0
	klog.FromContext(ctx).V(2).Info("Probe failed", "pod", klog.KObj(s.Pod), "container", c.Name, "probe", kind, "msg", msg)
	if h.Recorder != nil {
		h.Recorder.Eventf(s.Pod, corev1.EventTypeWarning, "Unhealthy", "%s probe failed: %s", strings.ToUpper(kind[:1])+kind[1:], msg)
	}
	if cnt.Failures >= failureThreshold {
		cnt.Failures = 0
		return false, true
	}
	return false, false
}

func (h *ProbesHook) kill(ctx context.Context, s *State, c *corev1.Container, cur *Container, why string) error {
	klog.FromContext(ctx).Info("Stopping container", "pod", klog.KObj(s.Pod), "container", c.Name, "reason", why)
	if h.Recorder != nil {
		h.Recorder.Eventf(s.Pod, corev1.EventTypeNormal, "Killing", "Container %s %s, will be restarted", c.Name, why)
	}
	delete(s.Probes, c.Name)
	s.Changed = true
	return h.Handlers.StopContainer(ctx, h.Runtime, h.Recorder, s, *cur, GracePeriod(s.Pod))
}

// probeSettings applies upstream's defaults to a probe.
func probeSettings(p *corev1.Probe) (period, timeout time.Duration, success, failure int) {
	period, timeout, success, failure = 10*time.Second, time.Second, 1, 3
	if p.PeriodSeconds > 0 {
		period = time.Duration(p.PeriodSeconds) * time.Second
	}
	if p.TimeoutSeconds > 0 {
		timeout = time.Duration(p.TimeoutSeconds) * time.Second
	}
	if p.SuccessThreshold > 0 {
		success = int(p.SuccessThreshold)
	}
	if p.FailureThreshold > 0 {
		failure = int(p.FailureThreshold)
	}
	return period, timeout, success, failure
}

// Prober runs exec, httpGet, tcpSocket and grpc probes for real: exec
// through the runtime, the others from the node to the pod's address.
type Prober struct {
	Runtime Runtime
}

// Probe implements ProbeFunc.
func (p *Prober) Probe(ctx context.Context, s *State, c *corev1.Container, cur *Container, probe *corev1.Probe) (bool, string) {
	_, timeout, _, _ := probeSettings(probe)
	podIP := ""
	if s.Sandbox != nil && len(s.Sandbox.IPs) > 0 {
		podIP = s.Sandbox.IPs[0]
	}
	switch {
	case probe.Exec != nil:
		code, out, err := p.Runtime.Exec(ctx, cur.ID, probe.Exec.Command, timeout)
		if err != nil {
			return false, err.Error()
		}
		if code != 0 {
			return false, fmt.Sprintf("command %q exited with %d: %s", probe.Exec.Command, code, strings.TrimSpace(string(out)))
		}
		return true, ""
	case probe.HTTPGet != nil:
		return httpProbe(ctx, probe.HTTPGet, c, podIP, timeout)
	case probe.TCPSocket != nil:
		port, err := resolvePort(probe.TCPSocket.Port, c)
		if err != nil {
			return false, err.Error()
		}
		host := probe.TCPSocket.Host
		if host == "" {
			host = podIP
		}
		conn, err := (&net.Dialer{Timeout: timeout}).DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return false, err.Error()
		}
		_ = conn.Close()
		return true, ""
	case probe.GRPC != nil:
		service := ""
		if probe.GRPC.Service != nil {
			service = *probe.GRPC.Service
		}
		return grpcProbe(ctx, podIP, int(probe.GRPC.Port), service, timeout)
	}
	return false, "probe has no handler"
}

func httpProbe(ctx context.Context, g *corev1.HTTPGetAction, c *corev1.Container, podIP string, timeout time.Duration) (bool, string) {
	code, err := httpGet(ctx, g, c, podIP, timeout, "kube-probe/1.32")
	if err != nil {
		return false, err.Error()
	}
	if code < 200 || code >= 400 {
		return false, fmt.Sprintf("HTTP probe failed with statuscode: %d", code)
	}
	return true, ""
}

// httpGet sends an HTTPGetAction's request to the container (at the pod's
// address unless it names a host) and returns the status code; HTTPS is
// not verified, as upstream's probes and hooks do not.
func httpGet(ctx context.Context, g *corev1.HTTPGetAction, c *corev1.Container, podIP string, timeout time.Duration, userAgent string) (int, error) {
	port, err := resolvePort(g.Port, c)
	if err != nil {
		return 0, err
	}
	host := g.Host
	if host == "" {
		host = podIP
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := g.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}
	u, err = u.Parse(path)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", userAgent)
	for _, h := range g.HTTPHeaders {
		req.Header.Add(h.Name, h.Value)
	}
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // upstream's probes and hooks do not verify
		DisableKeepAlives: true,
		Proxy:             nil,
	}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<10))
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// resolvePort turns a number or a named container port into a number.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		if p.IntVal <= 0 || p.IntVal > 65535 {
			return 0, fmt.Errorf("invalid port %d", p.IntVal)
		}
		return int(p.IntVal), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil && n > 0 && n <= 65535 {
		return n, nil
	}
	return 0, fmt.Errorf("no port named %q in container %s", p.StrVal, c.Name)
}
