package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ephemeralStatus is the pod's status of ephemeral container name.
func ephemeralStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.EphemeralContainerStatuses {
		if p.Status.EphemeralContainerStatuses[i].Name == name {
			return &p.Status.EphemeralContainerStatuses[i]
		}
	}
	return nil
}

// TestEphemeralContainers adds ephemeral containers to a running pod, as
// upstream's conformance test and kubectl debug do, on real containerd: the
// one added through pods/ephemeralcontainers runs, its status appears, its
// logs, exec and attach work, and with targetContainerName it sees the
// target's processes; the one kubectl debug adds without a target sees
// only its own, exits, and is not restarted.
func TestEphemeralContainers(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	// A serving certificate the API server trusts: logs, exec and attach
	// go through it.
	e.tlsCert = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".crt")
	e.tlsKey = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".key")
	e.startKubelet(t)
	e.makeReady(t)
	pods := e.client.CoreV1().Pods("default")
	e.createPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers:                    []corev1.Container{{Name: "app", Image: "busybox", Command: []string{"sleep", "3601"}}},
		},
	})
	poll(t, 60*time.Second, "pod target to run", func() (bool, string) {
		p := e.getPod(t, "target")
		return condition(p, corev1.ContainersReady) == corev1.ConditionTrue, fmt.Sprintf("%+v", p.Status.ContainerStatuses)
	})

	// As the conformance test: stdin and tty, a loop that logs.
	p := e.getPod(t, "target")
	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debugger", Image: "busybox", Command: []string{"sh", "-c", "while true; do echo polo; sleep 1; done"},
			Stdin: true, TTY: true, ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		},
		TargetContainerName: "app",
	})
	if _, err := pods.UpdateEphemeralContainers(ctx, "target", p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, 60*time.Second, "the ephemeral container to run", func() (bool, string) {
		p := e.getPod(t, "target")
		es := ephemeralStatus(p, "debugger")
		return es != nil && es.State.Running != nil, fmt.Sprintf("%+v", p.Status.EphemeralContainerStatuses)
	})
	p = e.getPod(t, "target")
	es := ephemeralStatus(p, "debugger")
	if !strings.HasPrefix(es.ContainerID, "containerd://") || !strings.Contains(es.ImageID, "@sha256:") || es.Image == "" || es.Ready || es.RestartCount != 0 {
		t.Errorf("ephemeral status %+v", es)
	}
	if len(e.podContainers(t, p.UID)) != 2 {
		t.Errorf("containers of the pod: %v, want app and debugger", e.podContainers(t, p.UID))
	}

	t.Run("logs", func(t *testing.T) {
		poll(t, 30*time.Second, "the ephemeral container's log", func() (bool, string) {
			logs, err := pods.GetLogs("target", &corev1.PodLogOptions{Container: "debugger"}).DoRaw(ctx)
			return err == nil && strings.Contains(string(logs), "polo"), fmt.Sprintf("%q %v", logs, err)
		})
	})

	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Log("no kubectl: exec, attach and kubectl debug are not tried")
		return
	}
	kubectl := func(args ...string) (string, error) {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", e.ts.Kubeconfig, "-n", "default"}, args...)...).CombinedOutput()
		return string(out), err
	}

	t.Run("exec sees the target's processes", func(t *testing.T) {
		out, err := kubectl("exec", "target", "-c", "debugger", "--", "busybox", "ps")
		if err != nil || !strings.Contains(out, "sleep 3601") {
			t.Errorf("ps in the ephemeral container: %v\n%s", err, out)
		}
	})

	t.Run("attach", func(t *testing.T) {
		actx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(actx, "kubectl", "--kubeconfig", e.ts.Kubeconfig, "-n", "default", "attach", "target", "-c", "debugger")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cancel(); _ = cmd.Wait() }()
		sc := bufio.NewScanner(stdout)
		var seen []string
		for sc.Scan() {
			seen = append(seen, sc.Text())
			if strings.Contains(sc.Text(), "polo") {
				return
			}
		}
		t.Errorf("kubectl attach -c debugger ended without a polo line: %q", seen)
	})

	t.Run("kubectl debug -i with a target", func(t *testing.T) {
		dctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(dctx, "kubectl", "--kubeconfig", e.ts.Kubeconfig, "-n", "default", "debug", "-i", "target",
			"--image=busybox", "--target=app", "-c", "interactive", "--profile=legacy", "--", "sh")
		cmd.Stdin = strings.NewReader("busybox ps\nexit 0\n")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "sleep 3601") {
			t.Errorf("kubectl debug -i --target=app: %v\n%s", err, out)
		}
	})

	t.Run("kubectl debug without a target", func(t *testing.T) {
		if out, err := kubectl("debug", "target", "--image=busybox", "-c", "loner", "--profile=legacy", "--", "busybox", "ps"); err != nil {
			t.Fatalf("kubectl debug: %v\n%s", err, out)
		}
		poll(t, 60*time.Second, "kubectl debug's container to finish", func() (bool, string) {
			p := e.getPod(t, "target")
			es := ephemeralStatus(p, "loner")
			return es != nil && es.State.Terminated != nil, fmt.Sprintf("%+v", p.Status.EphemeralContainerStatuses)
		})
		p := e.getPod(t, "target")
		if es := ephemeralStatus(p, "loner"); es.State.Terminated.ExitCode != 0 || es.RestartCount != 0 {
			t.Errorf("loner's status %+v", es)
		}
		out, err := kubectl("logs", "target", "-c", "loner")
		if err != nil || !strings.Contains(out, "busybox ps") || strings.Contains(out, "sleep 3601") {
			t.Errorf("ps without a target should list its own processes only: %v\n%s", err, out)
		}
		// Never restarted, though the pod's policy is Always: once the
		// kubelet has started (and so synced the pod after) one more, each
		// has still one container.
		if out, err := kubectl("debug", "target", "--image=busybox", "-c", "later", "--profile=legacy", "--", "true"); err != nil {
			t.Fatalf("kubectl debug: %v\n%s", err, out)
		}
		poll(t, 60*time.Second, "the later container to finish", func() (bool, string) {
			q := e.getPod(t, "target")
			es := ephemeralStatus(q, "later")
			return es != nil && es.State.Terminated != nil, fmt.Sprintf("%+v", q.Status.EphemeralContainerStatuses)
		})
		if n := len(e.podContainers(t, p.UID)); n != 5 {
			t.Errorf("containers %d, want 5 (app, debugger, interactive, loner, later)", n)
		}
		p = e.getPod(t, "target")
		if es := ephemeralStatus(p, "loner"); es.State.Terminated == nil || es.RestartCount != 0 {
			t.Errorf("loner after a later sync: %+v", es)
		}
		if p.Status.Phase != corev1.PodRunning || condition(p, corev1.PodReady) != corev1.ConditionTrue {
			t.Errorf("pod %s, Ready %s after an ephemeral container's exit", p.Status.Phase, condition(p, corev1.PodReady))
		}
	})
}
