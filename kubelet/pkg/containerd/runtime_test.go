package containerd

import (
	"reflect"
	"testing"
	"time"

	"skiff.dev/kubelet/pkg/pod"
)

func TestProcessArgs(t *testing.T) {
	tests := []struct {
		name                           string
		entrypoint, cmd, command, args []string
		want                           []string
	}{
		{name: "image defaults", entrypoint: []string{"/ep"}, cmd: []string{"a"}, want: []string{"/ep", "a"}},
		{name: "cmd only image", cmd: []string{"sh"}, want: []string{"sh"}},
		{name: "args replace cmd", entrypoint: []string{"/ep"}, cmd: []string{"a"}, args: []string{"b", "c"}, want: []string{"/ep", "b", "c"}},
		{name: "command replaces entrypoint and drops cmd", entrypoint: []string{"/ep"}, cmd: []string{"a"}, command: []string{"sh"}, want: []string{"sh"}},
		{name: "command and args", entrypoint: []string{"/ep"}, cmd: []string{"a"}, command: []string{"sh", "-c"}, args: []string{"echo"}, want: []string{"sh", "-c", "echo"}},
		{name: "nothing", want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ProcessArgs(tt.entrypoint, tt.cmd, tt.command, tt.args); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ProcessArgs = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestExitedOrCreated(t *testing.T) {
	ts := "2026-01-01T12:00:00Z"
	tm, _ := time.Parse(time.RFC3339, ts)
	tests := []struct {
		name     string
		labels   map[string]string
		want     pod.ContainerState
		wantCode int32
		reason   string
	}{
		{name: "never started", labels: map[string]string{}, want: pod.StateCreated},
		{name: "exit recorded", labels: map[string]string{labelStartedAt: ts, labelExitCode: "3", labelFinishedAt: ts}, want: pod.StateExited, wantCode: 3},
		{name: "started, task lost with containerd's state", labels: map[string]string{labelStartedAt: ts}, want: pod.StateExited, wantCode: 255, reason: "ContainerStatusUnknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pc := &pod.Container{StartedAt: parseTime(tt.labels[labelStartedAt])}
			got := exitedOrCreated(pc, tt.labels)
			if got != tt.want || pc.ExitCode != tt.wantCode || pc.Reason != tt.reason {
				t.Errorf("got %s code %d reason %q, want %s %d %q", got, pc.ExitCode, pc.Reason, tt.want, tt.wantCode, tt.reason)
			}
			if got == pod.StateExited && !pc.FinishedAt.Equal(tm) {
				t.Errorf("finishedAt = %v, want %v", pc.FinishedAt, tm)
			}
		})
	}
}

func TestImageID(t *testing.T) {
	if got := imageID("docker.io/library/busybox:latest", "sha256:abc"); got != "docker.io/library/busybox@sha256:abc" {
		t.Errorf("imageID = %q", got)
	}
}
