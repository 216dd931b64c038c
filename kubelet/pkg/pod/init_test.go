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

func condOf(st corev1.PodStatus, t corev1.PodConditionType) corev1.PodCondition {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c
		}
	}
	return corev1.PodCondition{}
}

// The conditions' reasons and messages, as upstream's generate.go, along
// an init container's failures and the pod's end.
func TestInitConditionsReasons(t *testing.T) {
	type want struct {
		status          corev1.ConditionStatus
		reason, message string
	}
	check := func(t *testing.T, st corev1.PodStatus, typ corev1.PodConditionType, w want) {
		t.Helper()
		c := condOf(st, typ)
		if c.Status != w.status || c.Reason != w.reason || c.Message != w.message {
			t.Errorf("%s = %s %q %q, want %s %q %q", typ, c.Status, c.Reason, c.Message, w.status, w.reason, w.message)
		}
	}
	t.Run("restarting init container", func(t *testing.T) {
		h := newHarness(initPod(corev1.RestartPolicyAlways))
		h.sync(t)
		st := h.status.last()
		check(t, st, corev1.PodInitialized, want{corev1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [init-1 init-2]"})
		check(t, st, corev1.ContainersReady, want{corev1.ConditionFalse, "ContainersNotReady", "containers with unready status: [c]"})
		check(t, st, corev1.PodReady, want{corev1.ConditionFalse, "ContainersNotReady", "containers with unready status: [c]"})
		if w := st.InitContainerStatuses[1].State.Waiting; w == nil || w.Reason != ReasonPodInitializing {
			t.Errorf("init-2 waits with %+v, want PodInitializing", st.InitContainerStatuses[1].State)
		}
		h.rt.exit("init-1", 1)
		h.sync(t)
		h.rt.exit("init-1", 1)
		h.sync(t)
		st = h.status.last()
		check(t, st, corev1.PodInitialized, want{corev1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [init-1 init-2]"})
		if w := st.InitContainerStatuses[0].State.Waiting; w == nil || w.Reason != ReasonCrashLoopBackOff {
			t.Errorf("init-1 = %+v, want CrashLoopBackOff", st.InitContainerStatuses[0].State)
		}
		if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != ReasonPodInitializing {
			t.Errorf("c = %+v, want PodInitializing", st.ContainerStatuses[0].State)
		}
	})
	t.Run("failed init container under Never", func(t *testing.T) {
		h := newHarness(initPod(corev1.RestartPolicyNever))
		h.sync(t)
		h.rt.exit("init-1", 0)
		h.sync(t)
		h.rt.exit("init-2", 1)
		h.sync(t)
		st := h.status.last()
		if st.Phase != corev1.PodFailed {
			t.Fatalf("phase = %s", st.Phase)
		}
		check(t, st, corev1.PodInitialized, want{corev1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [init-2]"})
		check(t, st, corev1.ContainersReady, want{corev1.ConditionFalse, "PodFailed", ""})
		check(t, st, corev1.PodReady, want{corev1.ConditionFalse, "PodFailed", ""})
	})
	t.Run("succeeded", func(t *testing.T) {
		h := newHarness(initPod(corev1.RestartPolicyNever))
		h.sync(t)
		h.rt.exit("init-1", 0)
		h.sync(t)
		h.rt.exit("init-2", 0)
		h.sync(t)
		st := h.status.last()
		check(t, st, corev1.PodInitialized, want{corev1.ConditionTrue, "", ""})
		check(t, st, corev1.PodReady, want{corev1.ConditionTrue, "", ""})
		h.rt.exit("c", 0)
		h.sync(t)
		st = h.status.last()
		check(t, st, corev1.PodInitialized, want{corev1.ConditionTrue, "PodCompleted", ""})
		check(t, st, corev1.ContainersReady, want{corev1.ConditionFalse, "PodCompleted", ""})
	})
}
