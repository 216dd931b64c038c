package app

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	utilexec "k8s.io/client-go/util/exec"

	"skiff.dev/ctl/pkg/cli"
)

// parseRun parses args as skiffctl run's flags and completes the
// options as the command does before it creates anything.
func parseRun(t *testing.T, args ...string) (*RunOptions, error) {
	t.Helper()
	cmd, o := newRunCommand(cli.NewFactory(&cli.ConfigFlags{}, nil, nil))
	if err := cmd.ParseFlags(args); err != nil {
		return nil, err
	}
	return o, o.Complete(cmd, cmd.Flags().Args())
}

func TestRunFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		attach  bool
		wantErr string
	}{
		{args: []string{"x", "--image=busybox"}},
		{args: []string{"x", "--image=busybox", "-i"}, attach: true},
		{args: []string{"x", "--image=busybox", "-i", "--attach=false"}},
		{args: []string{"x", "--image=busybox", "--attach"}, attach: true},
		{args: []string{"x", "--image=busybox", "-it", "--rm", "--restart=Never"}, attach: true},
		{args: []string{"x", "--image=busybox", "-t"}, wantErr: "-i/--stdin is required for containers with -t/--tty=true"},
		{args: []string{"x", "--image=busybox", "--rm"}, wantErr: "--rm should only be used for attached containers"},
		{args: []string{"x", "--image=busybox", "-i", "--attach=false", "--rm"}, wantErr: "--rm should only be used"},
		{args: []string{"x", "--image=busybox", "-i", "--dry-run=client"}, wantErr: "--dry-run=[server|client] can't be used with attached containers"},
		{args: []string{"x", "--image=busybox", "--attach", "--dry-run"}, wantErr: "can't be used with attached containers"},
		{args: []string{"x", "--image=busybox", "--restart=Sometimes"}, wantErr: "invalid restart policy: Sometimes"},
		{args: []string{"x", "--image=busybox", "--expose"}, wantErr: "--port must be set when exposing a service"},
		{args: []string{"x", "--image=busybox", "-i", "--pod-running-timeout=0s"}, wantErr: "--pod-running-timeout must be higher than zero"},
		{args: []string{"--image=busybox", "--", "x"}, wantErr: "NAME is required for run"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o, err := parseRun(t, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Attach != tc.attach {
				t.Errorf("attach = %v, want %v", o.Attach, tc.attach)
			}
		})
	}
}

func TestRunPodWithStdin(t *testing.T) {
	for _, tc := range []struct {
		args                  []string
		stdin, once, tty, cmd bool
		restart               corev1.RestartPolicy
	}{
		{args: []string{"x", "--image=busybox"}, restart: corev1.RestartPolicyAlways},
		{args: []string{"x", "--image=busybox", "-i", "--restart=Never", "--", "sh", "-c", "read x"}, stdin: true, once: true, restart: corev1.RestartPolicyNever},
		{args: []string{"x", "--image=busybox", "-it", "--leave-stdin-open", "--restart=OnFailure", "--command", "--", "sh"}, stdin: true, tty: true, cmd: true, restart: corev1.RestartPolicyOnFailure},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o, err := parseRun(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			var rest []string
			for i, a := range tc.args {
				if a == "--" {
					rest = tc.args[i+1:]
				}
			}
			p, err := o.Pod("x", rest)
			if err != nil {
				t.Fatal(err)
			}
			c := p.Spec.Containers[0]
			if c.Stdin != tc.stdin || c.StdinOnce != tc.once || c.TTY != tc.tty || p.Spec.RestartPolicy != tc.restart {
				t.Errorf("stdin %v once %v tty %v restart %s; want %v %v %v %s", c.Stdin, c.StdinOnce, c.TTY, p.Spec.RestartPolicy, tc.stdin, tc.once, tc.tty, tc.restart)
			}
			if tc.cmd && (len(c.Command) == 0 || len(c.Args) != 0) || !tc.cmd && len(c.Command) != 0 {
				t.Errorf("command %v args %v", c.Command, c.Args)
			}
			if p.Labels["run"] != "x" || c.Name != "x" {
				t.Errorf("labels %v, container %q", p.Labels, c.Name)
			}
		})
	}
}

func TestRunPodExit(t *testing.T) {
	pod := func(phase corev1.PodPhase, term *corev1.ContainerStateTerminated) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}, Status: corev1.PodStatus{Phase: phase}}
		if term != nil {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: term}}}
		}
		return p
	}
	if err := podExit(pod(corev1.PodSucceeded, &corev1.ContainerStateTerminated{})); err != nil {
		t.Errorf("succeeded: %v", err)
	}
	err := podExit(pod(corev1.PodFailed, &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}))
	var code utilexec.ExitError
	var lines interface{ KubectlLines() string }
	if !errorsAs(err, &code) || code.ExitStatus() != 3 || !errorsAs(err, &lines) || lines.KubectlLines() != "pod default/x terminated (Error)\n" {
		t.Errorf("failed with 3: %#v", err)
	}
	if err := podExit(pod(corev1.PodFailed, nil)); err == nil || !strings.Contains(err.Error(), "failed with unknown exit code") {
		t.Errorf("failed without status: %v", err)
	}
	if err := podExit(pod(corev1.PodRunning, nil)); err == nil || !strings.Contains(err.Error(), "left in phase Running") {
		t.Errorf("running: %v", err)
	}
}

func TestRunWaitConditions(t *testing.T) {
	ev := func(phase corev1.PodPhase, ready bool) watch.Event {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		return watch.Event{Type: watch.Modified, Object: p}
	}
	if ok, err := podRunningAndReady(ev(corev1.PodRunning, false)); ok || err != nil {
		t.Errorf("running, not ready: %v %v", ok, err)
	}
	if ok, err := podRunningAndReady(ev(corev1.PodRunning, true)); !ok || err != nil {
		t.Errorf("running and ready: %v %v", ok, err)
	}
	if ok, err := podRunningAndReady(ev(corev1.PodFailed, false)); !ok || err != errPodCompleted {
		t.Errorf("failed before attach: %v %v", ok, err)
	}
	if ok, _ := podSucceeded(ev(corev1.PodFailed, false)); ok {
		t.Errorf("OnFailure's wait ended on a failure")
	}
	if ok, _ := podCompleted(ev(corev1.PodFailed, false)); !ok {
		t.Errorf("Never's wait did not end on a failure")
	}
	if _, err := podCompleted(watch.Event{Type: watch.Deleted, Object: &corev1.Pod{}}); err == nil {
		t.Errorf("a deleted pod is not an error")
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
