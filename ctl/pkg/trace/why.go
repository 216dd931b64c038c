package trace

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Why explains in one paragraph why the pod is (or is not) running, from its
// conditions, its events (the scheduler's FailedScheduling reasons, image
// pull failures, probe failures) and its containers' last exits. now is used
// for "for how long".
func Why(p *corev1.Pod, events []corev1.Event, now time.Time) string {
	evs := sortEvents(events)
	var b []string
	name := "pod/" + p.Name
	latest := func(reason string, match func(corev1.Event) bool) *corev1.Event {
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i].Reason == reason && (match == nil || match(evs[i])) {
				return &evs[i]
			}
		}
		return nil
	}
	count := func(e *corev1.Event) int32 {
		if e.Count < 1 {
			return 1
		}
		return e.Count
	}
	if p.DeletionTimestamp != nil {
		b = append(b, fmt.Sprintf("%s is being deleted (since %s, grace period %ds).", name,
			p.DeletionTimestamp.UTC().Format(time.RFC3339), gracePeriod(p)))
	}
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		b = append(b, fmt.Sprintf("%s has Succeeded: all its containers exited 0 and will not be restarted (restartPolicy %s).", name, p.Spec.RestartPolicy))
		return strings.Join(b, " ")
	case corev1.PodFailed:
		s := fmt.Sprintf("%s has Failed", name)
		if p.Status.Reason != "" {
			s += " (" + p.Status.Reason + ")"
		}
		if p.Status.Message != "" {
			s += ": " + p.Status.Message
		}
		b = append(b, sentence(s))
	}
	// Not scheduled.
	if p.Spec.NodeName == "" {
		s := fmt.Sprintf("%s is Pending: it is not scheduled to any node", name)
		if c := podCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
			s += fmt.Sprintf(" (PodScheduled=False, reason %s, for %s)", c.Reason, since(now, c.LastTransitionTime.Time))
			if c.Message != "" && latest("FailedScheduling", nil) == nil {
				s += ": " + c.Message
			}
		}
		if e := latest("FailedScheduling", nil); e != nil {
			s += fmt.Sprintf("; the scheduler (%s) says, after %d attempt%s: %s", reporter(*e, "scheduler"), count(e), plural(int(count(e))), e.Message)
		} else if p.Spec.SchedulerName != "" && p.Spec.SchedulerName != corev1.DefaultSchedulerName {
			s += fmt.Sprintf("; it asks for scheduler %q and no FailedScheduling event has come from it", p.Spec.SchedulerName)
		} else {
			s += "; no scheduler has reported on it yet (is the scheduler running?)"
		}
		return strings.Join(append(b, sentence(s)), " ")
	}
	// Scheduled: the kubelet's side.
	statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	ready := podCondition(p, corev1.PodReady)
	if p.Status.Phase == corev1.PodRunning && ready != nil && ready.Status == corev1.ConditionTrue && len(b) == 0 {
		return fmt.Sprintf("%s is Running and Ready on %s since %s (%s); nothing is wrong with it.", name, p.Spec.NodeName,
			ready.LastTransitionTime.UTC().Format(time.RFC3339), since(now, ready.LastTransitionTime.Time))
	}
	if p.Status.Phase != corev1.PodFailed {
		s := fmt.Sprintf("%s is %s on node %s", name, orPending(p.Status.Phase), p.Spec.NodeName)
		if ready != nil && ready.Status != corev1.ConditionTrue {
			s += " and not Ready"
			if ready.Reason != "" {
				s += " (" + ready.Reason
				if ready.Message != "" {
					s += ": " + ready.Message
				}
				s += ")"
			}
		}
		b = append(b, sentence(s))
	}
	if p.Status.StartTime == nil && p.Status.Phase == corev1.PodPending {
		b = append(b, fmt.Sprintf("The kubelet on %s has not reported on it yet (no status.startTime).", p.Spec.NodeName))
	}
	if c := podCondition(p, corev1.PodReadyToStartContainers); c != nil && c.Status != corev1.ConditionTrue {
		s := "Its sandbox is not ready"
		if e := latest("FailedCreatePodSandBox", nil); e != nil {
			s += ": " + e.Message
		}
		b = append(b, sentence(s))
	}
	for _, cs := range statuses {
		b = append(b, containerWhy(cs, evs, latest, now)...)
	}
	if len(statuses) == 0 {
		if e := latest("Failed", nil); e != nil {
			b = append(b, sentence("The kubelet reports: "+e.Message))
		}
	}
	return strings.Join(b, " ")
}

func containerWhy(cs corev1.ContainerStatus, evs []corev1.Event, latest func(string, func(corev1.Event) bool) *corev1.Event, now time.Time) []string {
	var b []string
	c := "Container " + cs.Name
	byImage := func(e corev1.Event) bool { return strings.Contains(e.Message, fmt.Sprintf("%q", cs.Image)) }
	lastExit := func() string {
		t := cs.LastTerminationState.Terminated
		if t == nil {
			return ""
		}
		s := fmt.Sprintf("it last exited with code %d", t.ExitCode)
		if t.Signal != 0 {
			s += fmt.Sprintf(" (signal %d)", t.Signal)
		}
		if t.Reason != "" {
			s += " (" + t.Reason + ")"
		}
		if !t.FinishedAt.IsZero() {
			s += fmt.Sprintf(" at %s", t.FinishedAt.UTC().Format(time.RFC3339))
			if !t.StartedAt.IsZero() {
				s += fmt.Sprintf(" after running %s", t.FinishedAt.Sub(t.StartedAt.Time).Round(time.Second))
			}
		}
		if t.Message != "" {
			s += ", saying: " + strings.TrimSpace(t.Message)
		}
		return s
	}
	switch {
	case cs.State.Waiting != nil:
		w := cs.State.Waiting
		switch w.Reason {
		case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName":
			s := fmt.Sprintf("%s is waiting (%s): its image %q cannot be pulled", c, w.Reason, cs.Image)
			if e := latest("Failed", byImage); e != nil {
				s += fmt.Sprintf("; the kubelet's last pull failed %s: %s", sinceAgo(now, EventTime(*e)), e.Message)
			} else if w.Message != "" {
				s += ": " + w.Message
			}
			b = append(b, sentence(s))
		case "CrashLoopBackOff":
			s := fmt.Sprintf("%s is crash-looping (CrashLoopBackOff, %d restart%s)", c, cs.RestartCount, plural(int(cs.RestartCount)))
			if x := lastExit(); x != "" {
				s += ": " + x
			}
			if w.Message != "" {
				s += "; " + w.Message
			}
			b = append(b, sentence(s))
		default:
			s := fmt.Sprintf("%s is waiting (%s)", c, orDefault(w.Reason, "no reason given"))
			if w.Message != "" {
				s += ": " + w.Message
			}
			if x := lastExit(); x != "" {
				s += "; " + x
			}
			b = append(b, sentence(s))
		}
	case cs.State.Terminated != nil:
		t := cs.State.Terminated
		s := fmt.Sprintf("%s terminated with exit code %d", c, t.ExitCode)
		if t.Reason != "" {
			s += " (" + t.Reason + ")"
		}
		if t.Message != "" {
			s += ": " + strings.TrimSpace(t.Message)
		}
		b = append(b, sentence(s))
	case cs.State.Running != nil && !cs.Ready:
		s := fmt.Sprintf("%s is running since %s but not ready", c, cs.State.Running.StartedAt.UTC().Format(time.RFC3339))
		if e := latest("Unhealthy", nil); e != nil {
			s += fmt.Sprintf(": %s (%d time%s, last %s)", e.Message, max32(e.Count, 1), plural(int(max32(e.Count, 1))), sinceAgo(now, lastTime(*e)))
		} else {
			s += "; no probe failure is reported (its readiness probe has not passed yet)"
		}
		if x := lastExit(); x != "" {
			s += "; " + x
		}
		b = append(b, sentence(s))
	case cs.State.Running != nil && cs.RestartCount > 0:
		if x := lastExit(); x != "" {
			b = append(b, fmt.Sprintf("%s is running but has restarted %d time%s: %s.", c, cs.RestartCount, plural(int(cs.RestartCount)), x))
		}
	}
	return b
}

func lastTime(e corev1.Event) time.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	return EventTime(e)
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

func gracePeriod(p *corev1.Pod) int64 {
	if p.DeletionGracePeriodSeconds != nil {
		return *p.DeletionGracePeriodSeconds
	}
	return 0
}

func orPending(ph corev1.PodPhase) string {
	if ph == "" {
		return string(corev1.PodPending)
	}
	return string(ph)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func since(now, t time.Time) string {
	if t.IsZero() || now.Before(t) {
		return "a moment"
	}
	return now.Sub(t).Round(time.Second).String()
}

func sinceAgo(now, t time.Time) string {
	if t.IsZero() || now.Before(t) {
		return "just now"
	}
	return now.Sub(t).Round(time.Second).String() + " ago"
}

// sentence ends s with one full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}
