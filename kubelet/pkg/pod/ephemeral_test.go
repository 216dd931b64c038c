package pod

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func withEphemeral(pod *corev1.Pod, name, target string) *corev1.Pod {
	p := pod.DeepCopy()
	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: name, Image: "busybox", ImagePullPolicy: corev1.PullIfNotPresent},
		TargetContainerName:      target,
	})
	return p
}

// An ephemeral container added to a running pod is started in it (in the
// target's process namespace when it names one), reported in
// ephemeralContainerStatuses, and never restarted; the pod's phase and
// readiness do not depend on it.
func TestWorkerStartsEphemeralContainer(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, "busybox")
	h := newHarness(pod)
	var specs []ContainerSpec
	h.rt.onCreate = func(s ContainerSpec) { specs = append(specs, s) }
	h.sync(t)
	if st := h.status.last(); st.Phase != corev1.PodRunning || len(st.EphemeralContainerStatuses) != 0 {
		t.Fatalf("before: %+v", st)
	}
	target, _ := h.w.state.Latest("c")

	h.w.Update(withEphemeral(pod, "debug", "c"))
	h.sync(t)
	want := []string{"create debug 0 env=", "start debug 0"}
	if got := h.rt.calls[len(h.rt.calls)-2:]; !reflect.DeepEqual(got, want) {
		t.Fatalf("runtime calls = %v, want %v at the end", h.rt.calls, want)
	}
	if s := specs[len(specs)-1]; s.TargetID != target.ID || s.NetNSPath == "" || s.Labels[LabelContainerName] != "debug" {
		t.Errorf("ephemeral spec: target %q (want %q), netns %q", s.TargetID, target.ID, s.NetNSPath)
	}
	st := h.status.last()
	if len(st.EphemeralContainerStatuses) != 1 {
		t.Fatalf("ephemeral statuses = %+v", st.EphemeralContainerStatuses)
	}
	es := st.EphemeralContainerStatuses[0]
	if es.Name != "debug" || es.State.Running == nil || es.ContainerID == "" || es.ImageID != "docker.io/library/busybox@sha256:1" ||
		es.Image != "docker.io/library/busybox:latest" || es.Ready || es.Started != nil || es.RestartCount != 0 {
		t.Errorf("ephemeral status = %+v", es)
	}
	if len(st.ContainerStatuses) != 1 || st.Phase != corev1.PodRunning {
		t.Errorf("pod status = %+v", st)
	}

	// It exits: terminated, and not restarted though the pod's policy is Always.
	h.rt.exit("debug", 3)
	h.sync(t)
	h.sync(t)
	if got := h.rt.callsWith("start debug"); len(got) != 1 {
		t.Errorf("the ephemeral container was restarted: %v", got)
	}
	es = h.status.last().EphemeralContainerStatuses[0]
	if es.State.Terminated == nil || es.State.Terminated.ExitCode != 3 || es.RestartCount != 0 {
		t.Errorf("after its exit: %+v", es.State)
	}
	if st := h.status.last(); st.Phase != corev1.PodRunning {
		t.Errorf("phase %s after the ephemeral container's exit", st.Phase)
	}
}

// An ephemeral container whose target does not run is not created: it
// waits with CreateContainerConfigError and is tried again.
func TestEphemeralContainerTargetNotRunning(t *testing.T) {
	pod := testPod(corev1.RestartPolicyNever, "busybox")
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "other", Image: "busybox"})
	h := newHarness(pod)
	h.sync(t)
	h.rt.exit("c", 0)
	h.w.Update(withEphemeral(pod, "debug", "c"))
	h.sync(t)
	if got := h.rt.callsWith("create debug"); len(got) != 0 {
		t.Fatalf("created with its target exited: %v", got)
	}
	es := h.status.last().EphemeralContainerStatuses
	if len(es) != 1 || es[0].State.Waiting == nil || es[0].State.Waiting.Reason != ReasonCreateContainerConfigError {
		t.Errorf("ephemeral status = %+v", es)
	}
}
