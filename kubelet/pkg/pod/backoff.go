package pod

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Upstream's back-off for restarting crashed containers and for pulling
// images: 10 s, doubled on each failure, at most 5 minutes.
const (
	InitialBackOff = 10 * time.Second
	MaxBackOff     = 5 * time.Minute
)

// BackOff is the delay after the n-th consecutive failure (n >= 1); 0 for
// n <= 0.
func BackOff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := InitialBackOff
	for i := 1; i < n; i++ {
		d *= 2
		if d >= MaxBackOff {
			return MaxBackOff
		}
	}
	return d
}

// RestartDelay is how long after a container with restartCount restarts
// before it exited the kubelet waits to start it again: the first restart
// is immediate, then 10 s, 20 s, ... up to 5 minutes, as upstream's
// CrashLoopBackOff.
func RestartDelay(restartCount int) time.Duration {
	return BackOff(restartCount)
}

// BackOffResetAfter is how long a container must have run for its crash
// back-off to start again from the beginning: upstream forgets a back-off
// entry not touched for twice the maximum delay.
const BackOffResetAfter = 2 * MaxBackOff

// restartDelay is the delay before restarting the exited container cur:
// RestartDelay of the restarts since the container last ran for
// BackOffResetAfter or more (the streak starts at the attempt recorded in
// s.BackOffFrom, which this updates).
func restartDelay(s *State, name string, cur *Container) time.Duration {
	if s.BackOffFrom == nil {
		s.BackOffFrom = map[string]int{}
	}
	from := s.BackOffFrom[name]
	if !cur.StartedAt.IsZero() && cur.FinishedAt.Sub(cur.StartedAt) >= BackOffResetAfter && from < cur.Attempt() {
		from = cur.Attempt()
		s.BackOffFrom[name] = from
	}
	return RestartDelay(cur.Attempt() - from)
}

// ShouldRestart applies the pod's restart policy to an exited container.
func ShouldRestart(policy corev1.RestartPolicy, exitCode int32) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	default:
		return true
	}
}
