package pod

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Event reasons of lifecycle hooks, as upstream's.
const (
	ReasonFailedPostStartHook = "FailedPostStartHook"
	ReasonFailedPreStopHook   = "FailedPreStopHook"
	// ReasonPostStartHookError is the waiting reason of a container
	// whose postStart hook failed, until it starts again.
	ReasonPostStartHookError = "PostStartHookError"
	// MinimumGracePeriod is what a container gets between SIGTERM and
	// SIGKILL at least once its preStop hook has taken its time, as
	// upstream's minimumGracePeriodInSeconds.
	MinimumGracePeriod = 2 * time.Second
)

// HandlerRunner runs containers' lifecycle hooks (postStart, preStop):
// exec in the container, an HTTP GET to it, or a sleep.
type HandlerRunner struct {
	Runtime Runtime
	// Sleep waits for d or until ctx ends (a timer when nil; unit tests
	// record the sleeps instead).
	Sleep func(ctx context.Context, d time.Duration)
}

// Run runs handler h for container c (whose runtime container is id)
// with a time limit; the message says what failed, as upstream's.
func (r *HandlerRunner) Run(ctx context.Context, s *State, c *corev1.Container, id string, h *corev1.LifecycleHandler, limit time.Duration) (string, error) {
	switch {
	case h.Exec != nil:
		code, out, err := r.Runtime.Exec(ctx, id, h.Exec.Command, limit)
		if err == nil && code != 0 {
			err = fmt.Errorf("command '%s' exited with %d: %s", strings.Join(h.Exec.Command, " "), code, out)
		}
		if err != nil {
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
				h.Exec.Command, c.Name, podName(s.Pod), err, string(out)), err
		}
		return "", nil
	case h.HTTPGet != nil:
		podIP := ""
		if s.Sandbox != nil && len(s.Sandbox.IPs) > 0 {
			podIP = s.Sandbox.IPs[0]
		}
		// Upstream's lifecycle HTTP handler fails on transport errors
		// only, whatever the status code.
		if _, err := httpGet(ctx, h.HTTPGet, c, podIP, limit, "kube-lifecycle/1.32"); err != nil {
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v",
				h.HTTPGet.Path, c.Name, podName(s.Pod), err), err
		}
		return "", nil
	case h.Sleep != nil:
		d := time.Duration(h.Sleep.Seconds) * time.Second
		capped := limit <= d
		if capped {
			d = limit
		}
		r.sleep(ctx, d)
		// As upstream's runSleepHandler: a sleep its context cut short
		// failed. One cut at its limit (a preStop sleep as long as the
		// grace period or longer) had all the time it was given.
		if !capped && ctx.Err() != nil {
			err := fmt.Errorf("container terminated before sleep hook finished")
			return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v",
				h.Sleep.Seconds, c.Name, podName(s.Pod), err), err
		}
		return "", nil
	case h.TCPSocket != nil:
		err := fmt.Errorf("tcpSocket is not a valid lifecycle handler")
		return err.Error(), err
	}
	err := fmt.Errorf("lifecycle hook for container %q has no handler", c.Name)
	return err.Error(), err
}

func (r *HandlerRunner) sleep(ctx context.Context, d time.Duration) {
	if r.Sleep != nil {
		r.Sleep(ctx, d)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// PostStart runs c's postStart hook, if any, against the container just
// started: without a time limit, as upstream (the pod's sync waits), until
// ctx ends (the pod's termination cuts it short).
func (r *HandlerRunner) PostStart(ctx context.Context, s *State, c *corev1.Container, id string) (string, error) {
	if r == nil || c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return "", nil
	}
	return r.Run(ctx, s, c, id, c.Lifecycle.PostStart, time.Duration(math.MaxInt64))
}

// StopContainer stops a running container as upstream's killContainer:
// its preStop hook first, for at most grace (a failure is a
// FailedPreStopHook event), then SIGTERM with what is left of grace (at
// least MinimumGracePeriod when a hook ran), then SIGKILL.
func (r *HandlerRunner) StopContainer(ctx context.Context, rt Runtime, rec record.EventRecorder, s *State, cur Container, grace time.Duration) error {
	c := containerNamed(s.Pod, cur.Name())
	if r != nil && c != nil && c.Lifecycle != nil && c.Lifecycle.PreStop != nil && grace > 0 && cur.State == StateRunning {
		start := time.Now()
		hctx, cancel := context.WithTimeout(ctx, grace)
		if msg, err := r.Run(hctx, s, c, cur.ID, c.Lifecycle.PreStop, grace); graceShortened(ctx) {
			// A later deletion shortened the grace period: the stop
			// starts again with it (the hook too, as upstream's
			// killContainer runs it on every kill); no failure of the hook.
			cancel()
			return context.Cause(ctx)
		} else if err != nil {
			// The message stays out of the event, as upstream's: it may
			// hold secrets.
			klog.FromContext(ctx).Info("PreStop hook failed", "pod", klog.KObj(s.Pod), "container", c.Name, "err", err, "message", msg)
			if rec != nil {
				rec.Event(s.Pod, corev1.EventTypeWarning, ReasonFailedPreStopHook, "PreStopHook failed")
			}
		}
		cancel()
		grace = max(grace-time.Since(start), MinimumGracePeriod)
	}
	return rt.StopContainer(ctx, cur.ID, grace)
}

func podName(p *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", p.Name, p.Namespace, p.UID)
}
