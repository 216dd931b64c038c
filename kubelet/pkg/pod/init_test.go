package pod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func initPod(policy corev1.RestartPolicy) *corev1.Pod {
	p := testPod(policy, "busybox")
	p.Spec.InitContainers = []corev1.Container{{Name: "init-1", Image: "busybox"}, {Name: "init-2", Image: "busybox"}}
	return p
}

func TestInitContainersRunInOrder(t *testing.T) {
	h := newHarness(initPod(corev1.RestartPolicyAlways))
	starts := func() []string { return h.rt.callsWith("start") }
	h.sync(t)
	if got := starts(); len(got) != 1 || got[0] != "start init-1 0" {
		t.Fatalf("starts = %v, want only init-1", got)
	}
	st := h.status.last()
	if st.Phase != corev1.PodPending || condStatus(st, corev1.PodInitialized) != corev1.ConditionFalse ||
		st.ContainerStatuses[0].State.Waiting == nil || st.ContainerStatuses[0].State.Waiting.Reason != ReasonPodInitializing ||
		len(st.InitContainerStatuses) != 2 || st.InitContainerStatuses[0].State.Running == nil {
		t.Fatalf("status while init-1 runs = %+v", st)
	}
	h.rt.exit("init-1", 0)
	h.sync(t)
	if got := starts(); len(got) != 2 || got[1] != "start init-2 0" {
		t.Fatalf("starts = %v, want init-2 next", got)
	}
	// A failed init container is restarted (OnFailure semantics).
	h.rt.exit("init-2", 1)
	h.sync(t)
	if got := starts(); len(got) != 3 || got[2] != "start init-2 1" {
		t.Fatalf("starts = %v, want init-2 restarted", got)
	}
	h.rt.exit("init-2", 0)
	h.sync(t)
	if got := starts(); len(got) != 4 || got[3] != "start c 0" {
		t.Fatalf("starts = %v, want the app container", got)
	}
	st = h.status.last()
	if st.Phase != corev1.PodRunning || condStatus(st, corev1.PodInitialized) != corev1.ConditionTrue || condStatus(st, corev1.PodReady) != corev1.ConditionTrue {
		t.Fatalf("status after init = phase %s conditions %+v", st.Phase, st.Conditions)
	}
	for _, ics := range st.InitContainerStatuses {
		if ics.State.Terminated == nil || ics.State.Terminated.Reason != "Completed" || !ics.Ready {
			t.Errorf("init status %s = %+v", ics.Name, ics)
		}
	}
	if st.InitContainerStatuses[1].RestartCount != 1 {
		t.Errorf("init-2 restarts = %d, want 1", st.InitContainerStatuses[1].RestartCount)
	}
	// Init containers do not run again when the app container restarts.
	h.rt.exit("c", 1)
	h.sync(t)
	if got := starts(); len(got) != 5 || got[4] != "start c 1" {
		t.Errorf("starts = %v, want only the app container restarted", got)
	}
}

func TestInitContainerFailsPodNever(t *testing.T) {
	h := newHarness(initPod(corev1.RestartPolicyNever))
	h.sync(t)
	h.rt.exit("init-1", 2)
	h.sync(t)
	st := h.status.last()
	if st.Phase != corev1.PodFailed {
		t.Errorf("phase = %s, want Failed", st.Phase)
	}
	if got := h.rt.callsWith("start"); len(got) != 1 {
		t.Errorf("starts = %v, want nothing after the failed init container", got)
	}
	if t1 := st.InitContainerStatuses[0].State.Terminated; t1 == nil || t1.ExitCode != 2 {
		t.Errorf("init-1 status = %+v", st.InitContainerStatuses[0])
	}
}
