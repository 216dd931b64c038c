package pod

import (
	corev1 "k8s.io/api/core/v1"
)

// ReasonPodInitializing is the waiting reason of app containers while the
// init containers run.
const ReasonPodInitializing = "PodInitializing"

// initRestartPolicy is how init containers restart: as OnFailure, unless
// the pod never restarts.
func initRestartPolicy(pod *corev1.Pod) corev1.RestartPolicy {
	if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
		return corev1.RestartPolicyNever
	}
	return corev1.RestartPolicyOnFailure
}

// InitProgress says how far the init containers are: done when each exited
// with 0 in order (or when an app container already exists, as upstream
// does not run them again); otherwise next is the one to run or wait for,
// and failed says it exited non-zero and will not be restarted.
func InitProgress(s *State) (done bool, next *corev1.Container, failed bool) {
	for _, c := range s.Pod.Spec.Containers {
		if cur, _ := s.Latest(c.Name); cur != nil {
			return true, nil, false
		}
	}
	for i := range s.Pod.Spec.InitContainers {
		c := &s.Pod.Spec.InitContainers[i]
		cur, _ := s.Latest(c.Name)
		if cur != nil && cur.State == StateExited && cur.ExitCode == 0 {
			continue
		}
		failed = cur != nil && cur.State == StateExited && !ShouldRestart(initRestartPolicy(s.Pod), cur.ExitCode)
		return false, c, failed
	}
	return true, nil, false
}

// restartPolicyOf is the restart policy that applies to a container:
// ephemeral containers are never restarted.
func restartPolicyOf(s *State, name string) corev1.RestartPolicy {
	for _, c := range s.Pod.Spec.InitContainers {
		if c.Name == name {
			return initRestartPolicy(s.Pod)
		}
	}
	if EphemeralContainer(s.Pod, name) != nil {
		return corev1.RestartPolicyNever
	}
	return s.Pod.Spec.RestartPolicy
}

// EphemeralContainer is the pod's ephemeral container called name, nil if
// there is none.
func EphemeralContainer(pod *corev1.Pod, name string) *corev1.EphemeralContainer {
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return &pod.Spec.EphemeralContainers[i]
		}
	}
	return nil
}

// containersToStart lists the containers that the images and containers
// hooks work on now: the ephemeral containers that have not run (as
// upstream, whether or not the pod is initialized: they are started first,
// and never again once they have run), then the next init container while
// the init containers run, else the app containers.
func containersToStart(s *State) []*corev1.Container {
	var out []*corev1.Container
	for i := range s.Pod.Spec.EphemeralContainers {
		c := (*corev1.Container)(&s.Pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		if cur, _ := s.Latest(c.Name); cur == nil || cur.State == StateCreated {
			out = append(out, c)
		}
	}
	done, next, failed := InitProgress(s)
	if !done {
		if failed || next == nil {
			return out
		}
		return append(out, next)
	}
	for i := range s.Pod.Spec.Containers {
		out = append(out, &s.Pod.Spec.Containers[i])
	}
	return out
}
