package trace

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWhy(t *testing.T) {
	now := t0.Add(time.Minute)
	base := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u", CreationTimestamp: at(0)},
			Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c", Image: "img:1"}}}}
	}
	running, evs, _ := runningPod()
	cases := []struct {
		name   string
		pod    func() *corev1.Pod
		events []corev1.Event
		want   []string
	}{{
		name: "unschedulable",
		pod: func() *corev1.Pod {
			p := base()
			p.Spec.NodeName = ""
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
				Message: "0/1 nodes are available", LastTransitionTime: at(time.Second)}}
			return p
		},
		events: []corev1.Event{
			ev("p", "FailedScheduling", "0/1 nodes are available: 1 Insufficient memory.", 30*time.Second, "u"),
			ev("p", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.", 2*time.Second, "u"),
		},
		want: []string{"pod/p is Pending: it is not scheduled to any node", "reason Unschedulable, for 59s",
			"after 1 attempt: 0/1 nodes are available: 1 Insufficient memory."},
	}, {
		name: "no scheduler",
		pod: func() *corev1.Pod {
			p := base()
			p.Spec.NodeName = ""
			return p
		},
		want: []string{"no scheduler has reported on it yet"},
	}, {
		name: "image pull",
		pod: func() *corev1.Pod {
			p := base()
			p.Status.Phase = corev1.PodPending
			p.Status.StartTime = ptrTime(at(time.Second))
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "img:1",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "img:1"`}}}}
			return p
		},
		events: []corev1.Event{
			ev("p", "Failed", `Failed to pull image "img:1": not found`, 50*time.Second, "u"),
			ev("p", "Failed", `Failed to pull image "other:2": denied`, 55*time.Second, "u"),
			ev("p", "Failed", `Failed to pull image "img:1": old`, 5*time.Second, "u"),
		},
		want: []string{"pod/p is Pending on node node-a.", `Container c is waiting (ImagePullBackOff): its image "img:1" cannot be pulled; the kubelet's last pull failed 10s ago: Failed to pull image "img:1": not found.`},
	}, {
		name: "crash loop",
		pod: func() *corev1.Pod {
			p := base()
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [c]"}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "img:1", RestartCount: 3,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=c pod=p_default(u)"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error",
					StartedAt: at(40 * time.Second), FinishedAt: at(42 * time.Second)}}}}
			return p
		},
		want: []string{"pod/p is Running on node node-a and not Ready (ContainersNotReady: containers with unready status: [c]).",
			"Container c is crash-looping (CrashLoopBackOff, 3 restarts): it last exited with code 3 (Error) at 2026-11-27T05:00:42Z after running 2s"},
	}, {
		name: "probe",
		pod: func() *corev1.Pod {
			p := base()
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "img:1",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(time.Second)}}}}
			return p
		},
		events: func() []corev1.Event {
			e := ev("p", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", 10*time.Second, "u")
			e.Count, e.LastTimestamp = 5, at(50*time.Second)
			return []corev1.Event{e}
		}(),
		want: []string{"Container c is running since 2026-11-27T05:00:01Z but not ready: Readiness probe failed: HTTP probe failed with statuscode: 503 (5 times, last 10s ago)."},
	}, {
		name:   "running",
		pod:    func() *corev1.Pod { return running },
		events: evs,
		want:   []string{"pod/web-1 is Running and Ready on node-a since 2026-11-27T05:00:09Z (51s); nothing is wrong with it."},
	}, {
		name: "failed",
		pod: func() *corev1.Pod {
			p := base()
			p.Status.Phase = corev1.PodFailed
			p.Status.Reason, p.Status.Message = "Evicted", "The node was low on resource: memory."
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}
			return p
		},
		want: []string{"pod/p has Failed (Evicted): The node was low on resource: memory. Container c terminated with exit code 137 (OOMKilled)."},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Why(tc.pod(), tc.events, now)
			if strings.Contains(got, "\n") {
				t.Errorf("not one paragraph: %q", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("got  %q\nwant it to contain %q", got, w)
				}
			}
		})
	}
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }
