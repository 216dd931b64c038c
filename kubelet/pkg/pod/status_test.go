package pod

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPhase(t *testing.T) {
	running := corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	waiting := corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	exited := func(code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	backoff := corev1.ContainerStatus{
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}},
	}
	tests := []struct {
		name     string
		policy   corev1.RestartPolicy
		statuses []corev1.ContainerStatus
		want     corev1.PodPhase
	}{
		{"no containers yet", corev1.RestartPolicyAlways, nil, corev1.PodPending},
		{"waiting", corev1.RestartPolicyAlways, []corev1.ContainerStatus{waiting}, corev1.PodPending},
		{"one running one waiting", corev1.RestartPolicyAlways, []corev1.ContainerStatus{running, waiting}, corev1.PodPending},
		{"running", corev1.RestartPolicyAlways, []corev1.ContainerStatus{running, running}, corev1.PodRunning},
		{"crash loop is running", corev1.RestartPolicyAlways, []corev1.ContainerStatus{backoff}, corev1.PodRunning},
		{"running and exited", corev1.RestartPolicyNever, []corev1.ContainerStatus{running, exited(0)}, corev1.PodRunning},
		{"never: all succeeded", corev1.RestartPolicyNever, []corev1.ContainerStatus{exited(0), exited(0)}, corev1.PodSucceeded},
		{"never: one failed", corev1.RestartPolicyNever, []corev1.ContainerStatus{exited(0), exited(2)}, corev1.PodFailed},
		{"on failure: all succeeded", corev1.RestartPolicyOnFailure, []corev1.ContainerStatus{exited(0)}, corev1.PodSucceeded},
		{"on failure: failed one restarts", corev1.RestartPolicyOnFailure, []corev1.ContainerStatus{exited(0), backoff}, corev1.PodRunning},
		{"always: exited ones restart", corev1.RestartPolicyAlways, []corev1.ContainerStatus{exited(0)}, corev1.PodRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Phase(tt.policy, tt.statuses); got != tt.want {
				t.Errorf("Phase = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestComputeStatus(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	basePod := func(policy corev1.RestartPolicy) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"},
			Spec:       corev1.PodSpec{RestartPolicy: policy, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
	}
	ctr := func(attempt string, state ContainerState, code int32, finished time.Time) Container {
		return Container{
			ID: "id" + attempt, State: state, ExitCode: code, StartedAt: now.Add(-time.Minute), FinishedAt: finished,
			Image: "docker.io/library/busybox:latest", ImageID: "docker.io/library/busybox@sha256:1",
			Labels: map[string]string{LabelPodUID: "u1", LabelContainerName: "c", LabelAttempt: attempt},
		}
	}
	tests := []struct {
		name       string
		policy     corev1.RestartPolicy
		containers []Container
		images     map[string]*ImageState
		sandbox    *Sandbox
		wantPhase  corev1.PodPhase
		wantReady  bool
		check      func(t *testing.T, cs corev1.ContainerStatus)
	}{
		{
			name: "creating", policy: corev1.RestartPolicyAlways, wantPhase: corev1.PodPending,
			check: func(t *testing.T, cs corev1.ContainerStatus) {
				if cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" || cs.ContainerID != "" {
					t.Errorf("state = %+v", cs.State)
				}
			},
		},
		{
			name: "image pull back-off", policy: corev1.RestartPolicyAlways, wantPhase: corev1.PodPending,
			images: map[string]*ImageState{"c": {Reason: ReasonImagePullBackOff, Message: "Back-off pulling image"}},
			check: func(t *testing.T, cs corev1.ContainerStatus) {
				if cs.State.Waiting == nil || cs.State.Waiting.Reason != ReasonImagePullBackOff {
					t.Errorf("state = %+v", cs.State)
				}
			},
		},
		{
			name: "running", policy: corev1.RestartPolicyAlways, wantPhase: corev1.PodRunning, wantReady: true,
			sandbox:    &Sandbox{IPs: []string{"10.244.1.2"}},
			containers: []Container{ctr("0", StateRunning, 0, time.Time{})},
			check: func(t *testing.T, cs corev1.ContainerStatus) {
				if cs.State.Running == nil || !cs.Ready || !*cs.Started || cs.ContainerID != "containerd://id0" || cs.RestartCount != 0 ||
					cs.ImageID != "docker.io/library/busybox@sha256:1" || cs.Image != "docker.io/library/busybox:latest" {
					t.Errorf("status = %+v", cs)
				}
			},
		},
		{
			name: "crash loop back-off with last state", policy: corev1.RestartPolicyAlways, wantPhase: corev1.PodRunning,
			containers: []Container{ctr("0", StateExited, 1, now.Add(-time.Minute)), ctr("1", StateExited, 2, now.Add(-time.Second))},
			check: func(t *testing.T, cs corev1.ContainerStatus) {
				if cs.State.Waiting == nil || cs.State.Waiting.Reason != ReasonCrashLoopBackOff || cs.RestartCount != 1 {
					t.Errorf("state = %+v restarts %d", cs.State, cs.RestartCount)
				}
				if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 2 || lt.Reason != "Error" || lt.ContainerID != "containerd://id1" {
					t.Errorf("last state = %+v", cs.LastTerminationState)
				}
			},
		},
		{
			name: "restarted and running shows the previous exit", policy: corev1.RestartPolicyAlways, wantPhase: corev1.PodRunning, wantReady: true,
			containers: []Container{ctr("0", StateExited, 1, now.Add(-time.Minute)), ctr("1", StateRunning, 0, time.Time{})},
			check: func(t *testing.T, cs corev1.ContainerStatus) {
				if cs.State.Running == nil || cs.RestartCount != 1 || cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 1 {
					t.Errorf("status = %+v", cs)
				}
			},
		},
		{
			name: "never: completed", policy: corev1.RestartPolicyNever, wantPhase: corev1.PodSucceeded,
			containers: []Container{ctr("0", StateExited, 0, now)},
			check: func(t *testing.T, cs corev1.ContainerStatus) {
				if cs.State.Terminated == nil || cs.State.Terminated.Reason != "Completed" || cs.Ready {
					t.Errorf("status = %+v", cs)
				}
			},
		},
		{
			name: "never: failed", policy: corev1.RestartPolicyNever, wantPhase: corev1.PodFailed,
			containers: []Container{ctr("0", StateExited, 137, now)},
			check: func(t *testing.T, cs corev1.ContainerStatus) {
				if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 137 || cs.State.Terminated.Reason != "Error" {
					t.Errorf("status = %+v", cs)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewState(basePod(tt.policy))
			s.Now, s.Containers, s.Sandbox = now, tt.containers, tt.sandbox
			if tt.images != nil {
				s.Images = tt.images
			}
			st := ComputeStatus(s, corev1.PodStatus{}, "192.0.2.2")
			if st.Phase != tt.wantPhase {
				t.Errorf("phase = %s, want %s", st.Phase, tt.wantPhase)
			}
			if len(st.ContainerStatuses) != 1 {
				t.Fatalf("container statuses = %+v", st.ContainerStatuses)
			}
			tt.check(t, st.ContainerStatuses[0])
			want := corev1.ConditionFalse
			if tt.wantReady {
				want = corev1.ConditionTrue
			}
			conds := map[corev1.PodConditionType]corev1.ConditionStatus{}
			for _, c := range st.Conditions {
				conds[c.Type] = c.Status
			}
			if conds[corev1.PodReady] != want || conds[corev1.ContainersReady] != want || conds[corev1.PodInitialized] != corev1.ConditionTrue || conds[corev1.PodScheduled] != corev1.ConditionTrue {
				t.Errorf("conditions = %v, want Ready %s", conds, want)
			}
			if st.HostIP != "192.0.2.2" || st.StartTime == nil {
				t.Errorf("hostIP %q startTime %v", st.HostIP, st.StartTime)
			}
			if tt.sandbox != nil && (st.PodIP != tt.sandbox.IPs[0] || len(st.PodIPs) != 1) {
				t.Errorf("podIP %q podIPs %v", st.PodIP, st.PodIPs)
			}
		})
	}
}

func TestComputeStatusKeepsTransitionTimes(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := NewState(&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}})
	s.Now = now
	first := ComputeStatus(s, corev1.PodStatus{}, "")
	s.Now = now.Add(time.Hour)
	second := ComputeStatus(s, first, "")
	for i := range second.Conditions {
		if !second.Conditions[i].LastTransitionTime.Equal(&first.Conditions[i].LastTransitionTime) {
			t.Errorf("condition %s transition time moved without a change", second.Conditions[i].Type)
		}
	}
	if !second.StartTime.Equal(first.StartTime) {
		t.Errorf("start time moved: %v -> %v", first.StartTime, second.StartTime)
	}
}
