package pod

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ContainerIDPrefix makes a runtime ID a containerID, as upstream.
const ContainerIDPrefix = "containerd://"

// ComputeStatus is the pod's status from what the hooks know: one
// container status per spec container (init, app and ephemeral), the phase and the conditions as
// upstream's kubelet computes them. old is the status last sent (start
// time, condition transition times and QoS class carry over); hostIP is
// the node's address.
func ComputeStatus(s *State, old corev1.PodStatus, hostIP string) corev1.PodStatus {
	pod := s.Pod
	st := corev1.PodStatus{
		QOSClass:  old.QOSClass,
		StartTime: old.StartTime,
		HostIP:    hostIP,
	}
	if hostIP != "" {
		st.HostIPs = []corev1.HostIP{{IP: hostIP}}
	}
	if st.StartTime == nil {
		t := metav1.NewTime(s.Now.Truncate(time.Second))
		st.StartTime = &t
	}
	if s.Sandbox != nil && len(s.Sandbox.IPs) > 0 {
		st.PodIP = s.Sandbox.IPs[0]
		for _, ip := range s.Sandbox.IPs {
			st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: ip})
		}
	}
	initDone, _, initFailed := InitProgress(s)
	for _, c := range pod.Spec.InitContainers {
		cs := containerStatus(s, c)
		if t := cs.State.Terminated; t != nil && t.ExitCode == 0 {
			cs.Ready = true
		}
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
	}
	for _, c := range pod.Spec.Containers {
		cs := containerStatus(s, c)
		if !initDone && cs.State.Waiting != nil {
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: ReasonPodInitializing}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	// Ephemeral containers, as upstream's: never restarted, never ready,
	// and without started (the prober sets it only for the others).
	for i := range pod.Spec.EphemeralContainers {
		cs := containerStatus(s, corev1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
		cs.Started, cs.Ready = nil, false
		st.EphemeralContainerStatuses = append(st.EphemeralContainerStatuses, cs)
	}
	switch {
	case initFailed:
		st.Phase = corev1.PodFailed
	case !initDone:
		st.Phase = corev1.PodPending
	default:
		st.Phase = Phase(pod.Spec.RestartPolicy, st.ContainerStatuses)
	}
	st.Conditions = conditions(s, st)
	keepTransitionTimes(old.Conditions, st.Conditions, s.Now)
	return st
}

func containerStatus(s *State, c corev1.Container) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: new(bool)}
	cur, prev := s.Latest(c.Name)
	if prev != nil && prev.State == StateExited {
		cs.LastTerminationState = corev1.ContainerState{Terminated: terminated(s, prev)}
	}
	if cur == nil {
		cs.State = corev1.ContainerState{Waiting: waitingBeforeStart(s, c.Name)}
		if img := s.Images[c.Name]; img != nil && img.Ready {
			cs.Image = img.Image.Ref
		}
		return cs
	}
	cs.ContainerID = ContainerIDPrefix + cur.ID
	cs.RestartCount = int32(cur.Attempt())
	cs.Image = cur.Image
	cs.ImageID = cur.ImageID
	switch cur.State {
	case StateRunning:
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(cur.StartedAt)}}
		started, ready := c.StartupProbe == nil, c.ReadinessProbe == nil
		if ps := s.Probes[c.Name]; ps != nil && ps.ContainerID == cur.ID {
			started, ready = ps.Started, ps.Ready
		}
		*cs.Started = started
		cs.Ready = started && ready
	case StateExited:
		if ShouldRestart(restartPolicyOf(s, c.Name), cur.ExitCode) {
			// Waiting to be restarted: the exited one is the last state.
			cs.LastTerminationState = corev1.ContainerState{Terminated: terminated(s, cur)}
			cs.State = corev1.ContainerState{Waiting: restartWaiting(s, c.Name, cur)}
		} else {
			cs.State = corev1.ContainerState{Terminated: terminated(s, cur)}
		}
	default:
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}}
	}
	return cs
}

// waitingBeforeStart explains why a container has not started yet: an
// error, else, as upstream's default, PodInitializing in a pod with init
// containers and ContainerCreating in one without.
func waitingBeforeStart(s *State, name string) *corev1.ContainerStateWaiting {
	if e, ok := s.Errors[name]; ok {
		return &corev1.ContainerStateWaiting{Reason: e.Reason, Message: e.Message}
	}
	if img := s.Images[name]; img != nil && !img.Ready && img.Reason != "" {
		return &corev1.ContainerStateWaiting{Reason: img.Reason, Message: img.Message}
	}
	if len(s.Pod.Spec.InitContainers) > 0 {
		return &corev1.ContainerStateWaiting{Reason: ReasonPodInitializing}
	}
	return &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}
}

// restartWaiting is the waiting state of an exited container that will be
// restarted: CrashLoopBackOff while the back-off lasts.
func restartWaiting(s *State, name string, cur *Container) *corev1.ContainerStateWaiting {
	delay := restartDelay(s, name, cur)
	backingOff := delay > 0 && s.Now.Before(cur.FinishedAt.Add(delay))
	if e, ok := s.Errors[name]; ok && !(backingOff && e.Reason == ReasonPostStartHookError) {
		return &corev1.ContainerStateWaiting{Reason: e.Reason, Message: e.Message}
	}
	if img := s.Images[name]; img != nil && !img.Ready && img.Reason != "" {
		return &corev1.ContainerStateWaiting{Reason: img.Reason, Message: img.Message}
	}
	if backingOff {
		return &corev1.ContainerStateWaiting{
			Reason:  ReasonCrashLoopBackOff,
			Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", delay, name, s.Pod.Name, s.Pod.Namespace, s.Pod.UID),
		}
	}
	return &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}
}

func terminated(s *State, c *Container) *corev1.ContainerStateTerminated {
	reason := c.Reason
	if reason == "" {
		reason = "Completed"
		if c.ExitCode != 0 {
			reason = "Error"
		}
	}
	return &corev1.ContainerStateTerminated{
		ExitCode:    c.ExitCode,
		Reason:      reason,
		Message:     s.TerminationMessages[c.ID],
		StartedAt:   metav1.NewTime(c.StartedAt),
		FinishedAt:  metav1.NewTime(c.FinishedAt),
		ContainerID: ContainerIDPrefix + c.ID,
	}
}

// Phase is upstream's getPhase for a pod without init containers.
func Phase(policy corev1.RestartPolicy, statuses []corev1.ContainerStatus) corev1.PodPhase {
	var running, waiting, stopped, succeeded int
	for _, cs := range statuses {
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.State.Waiting != nil:
			if cs.LastTerminationState.Terminated != nil {
				stopped++
			} else {
				waiting++
			}
		}
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped > 0:
		if policy == corev1.RestartPolicyAlways {
			return corev1.PodRunning
		}
		if stopped == succeeded {
			return corev1.PodSucceeded
		}
		if policy == corev1.RestartPolicyNever {
			return corev1.PodFailed
		}
		return corev1.PodRunning
	}
	return corev1.PodPending
}

// conditions are upstream's (pkg/kubelet/status/generate.go):
// PodReadyToStartContainers is False until the sandbox is made and the
// volumes are set up (upstream mounts them first); Initialized
// says which init containers are not done, ContainersReady and Ready which
// containers are not ready, with upstream's reasons and messages.
func conditions(s *State, st corev1.PodStatus) []corev1.PodCondition {
	return []corev1.PodCondition{
		condition(corev1.PodReadyToStartContainers, s.Sandbox != nil && !s.VolumesFailed(), "", ""),
		initializedCondition(s.Pod, st),
		containersReadyCondition(corev1.ContainersReady, s.Pod, st),
		containersReadyCondition(corev1.PodReady, s.Pod, st),
		condition(corev1.PodScheduled, true, "", ""),
	}
}

func condition(t corev1.PodConditionType, ok bool, reason, message string) corev1.PodCondition {
	if ok {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message}
	}
	return corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, Message: message}
}

// initializedCondition is upstream's GeneratePodInitializedCondition.
func initializedCondition(pod *corev1.Pod, st corev1.PodStatus) corev1.PodCondition {
	if len(pod.Spec.InitContainers) == 0 {
		return condition(corev1.PodInitialized, true, "", "")
	}
	var unknown, incomplete []string
	for _, c := range pod.Spec.InitContainers {
		cs, ok := statusOf(st.InitContainerStatuses, c.Name)
		if !ok {
			unknown = append(unknown, c.Name)
			continue
		}
		if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
			incomplete = append(incomplete, c.Name)
		}
	}
	if st.Phase == corev1.PodSucceeded && len(unknown) == 0 {
		return condition(corev1.PodInitialized, true, "PodCompleted", "")
	}
	// An app container that has run means the pod was initialized.
	for _, cs := range st.ContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil {
			return condition(corev1.PodInitialized, true, "", "")
		}
	}
	if msg := unreadyMessage(unknown, incomplete, "incomplete"); msg != "" {
		return condition(corev1.PodInitialized, false, "ContainersNotInitialized", msg)
	}
	return condition(corev1.PodInitialized, true, "", "")
}

// containersReadyCondition is upstream's GenerateContainersReadyCondition
// (and GeneratePodReadyCondition, which repeats it).
func containersReadyCondition(t corev1.PodConditionType, pod *corev1.Pod, st corev1.PodStatus) corev1.PodCondition {
	var unknown, unready []string
	for _, c := range pod.Spec.Containers {
		cs, ok := statusOf(st.ContainerStatuses, c.Name)
		switch {
		case !ok:
			unknown = append(unknown, c.Name)
		case !cs.Ready:
			unready = append(unready, c.Name)
		}
	}
	switch {
	case st.Phase == corev1.PodSucceeded && len(unknown) == 0:
		return condition(t, false, "PodCompleted", "")
	case st.Phase == corev1.PodFailed:
		return condition(t, false, "PodFailed", "")
	}
	if msg := unreadyMessage(unknown, unready, "unready"); msg != "" {
		return condition(t, false, "ContainersNotReady", msg)
	}
	return condition(t, true, "", "")
}

// unreadyMessage is upstream's "containers with unknown status: [a],
// containers with <what> status: [b c]".
func unreadyMessage(unknown, other []string, what string) string {
	var parts []string
	if len(unknown) > 0 {
		parts = append(parts, fmt.Sprintf("containers with unknown status: %s", unknown))
	}
	if len(other) > 0 {
		parts = append(parts, fmt.Sprintf("containers with %s status: %s", what, other))
	}
	return strings.Join(parts, ", ")
}

func statusOf(list []corev1.ContainerStatus, name string) (corev1.ContainerStatus, bool) {
	for _, cs := range list {
		if cs.Name == name {
			return cs, true
		}
	}
	return corev1.ContainerStatus{}, false
}

// keepTransitionTimes carries the old lastTransitionTime over for a
// condition whose status did not change.
func keepTransitionTimes(old, cur []corev1.PodCondition, now time.Time) {
	for i := range cur {
		for _, o := range old {
			if o.Type == cur[i].Type && o.Status == cur[i].Status && !o.LastTransitionTime.IsZero() {
				cur[i].LastTransitionTime = o.LastTransitionTime
			}
		}
		if cur[i].LastTransitionTime.IsZero() {
			cur[i].LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
		}
	}
}
