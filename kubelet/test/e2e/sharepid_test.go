package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/containerd/errdefs"
	"github.com/containerd/containerd/namespaces"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"skiff.dev/kubelet/app"
	"skiff.dev/kubelet/pkg/pod"
)

// buildPause builds skiff-pause, statically linked, into a directory of
// the test's.
func buildPause(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), app.PauseName)
	cmd := exec.Command("go", "build", "-o", out, "skiff.dev/kubelet/cmd/skiff-pause")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building skiff-pause: %v\n%s", err, b)
	}
	return out
}

// TestShareProcessNamespace runs pods on real containerd: with
// shareProcessNamespace the containers see each other's processes, PID 1
// is the sandbox's pause process, which reaps orphans, one container
// signals another and reaches its root through /proc, and an ephemeral
// container without a target joins them; without it a container sees its
// own processes only, and with hostPID the node's. A sandbox whose pause
// process dies is made again. The sandbox container is not among the pod's
// containers and goes with the pod.
func TestShareProcessNamespace(t *testing.T) {
	e := setup(t)
	pause := buildPause(t)
	e.customize = func(o *app.Options) { o.PauseProgram = pause }
	k := e.startKubelet(t)
	e.makeReady(t)
	ctx := context.Background()
	pods := e.client.CoreV1().Pods("default")
	mk := func(name string, share bool) {
		e.createPod(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{
				ShareProcessNamespace:         ptr.To(share),
				TerminationGracePeriodSeconds: ptr.To[int64](0),
				AutomountServiceAccountToken:  ptr.To(false),
				Containers: []corev1.Container{
					{Name: "a", Image: "busybox", Command: []string{"sleep", "3601"}},
					{Name: "b", Image: "busybox", Command: []string{"sleep", "3602"}},
				},
			},
		})
	}
	mk("shared", true)
	mk("own", false)
	// Pod Security: shareProcessNamespace passes baseline (the pods
	// above were admitted), hostPID does not; the namespace must allow
	// privileged pods for it.
	host := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "host", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:                      nodeName,
			HostPID:                       true,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers:                    []corev1.Container{{Name: "a", Image: "busybox", Command: []string{"sleep", "3604"}}},
		},
	}
	if _, err := pods.Create(ctx, host, metav1.CreateOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "hostPID=true") {
		t.Fatalf("a hostPID pod under baseline: %v, want forbidden by PodSecurity", err)
	}
	patch := `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}`
	if _, err := e.client.CoreV1().Namespaces().Patch(ctx, "default", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.createPod(t, host)
	for _, name := range []string{"shared", "own", "host"} {
		poll(t, 60*time.Second, "pod "+name+" to run", func() (bool, string) {
			p := e.getPod(t, name)
			return condition(p, corev1.ContainersReady) == corev1.ConditionTrue, fmt.Sprintf("%+v", p.Status.ContainerStatuses)
		})
	}
	// run runs cmd in the pod's container and returns its output.
	run := func(t *testing.T, podName, container string, cmd ...string) string {
		t.Helper()
		p := e.getPod(t, podName)
		var id string
		for _, cs := range append(p.Status.ContainerStatuses, p.Status.EphemeralContainerStatuses...) {
			if cs.Name == container {
				id = strings.TrimPrefix(cs.ContainerID, "containerd://")
			}
		}
		code, out, err := k.cfg.Runtime.Exec(ctx, id, cmd, 10*time.Second)
		if err != nil || code != 0 {
			t.Fatalf("%v in %s/%s: exit %d, %v\n%s", cmd, podName, container, code, err, out)
		}
		return string(out)
	}
	ps := []string{"busybox", "ps", "-o", "pid,ppid,stat,args"}
	// pid1 is the command of PID 1 in ps's output.
	pid1 := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= 4 && f[0] == "1" {
				return strings.Join(f[3:], " ")
			}
		}
		return ""
	}

	// pidOf and ppidOf are the PID and parent PID of the process running
	// args in ps's output.
	field := func(out, args string, i int) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= 4 && strings.Join(f[3:], " ") == args {
				return f[i]
			}
		}
		return ""
	}
	pidOf := func(out, args string) string { return field(out, args, 0) }
	ppidOf := func(out, args string) string { return field(out, args, 1) }

	shared := e.getPod(t, "shared")
	sandboxID := pod.SandboxID(shared.UID)
	t.Run("shared", func(t *testing.T) {
		out := run(t, "shared", "b", ps...)
		if !strings.Contains(out, "sleep 3601") || !strings.Contains(out, "sleep 3602") || pid1(out) != "/pause" {
			t.Errorf("ps in b should see a's sleep, and /pause as PID 1:\n%s", out)
		}
		if n := len(e.podContainers(t, shared.UID)); n != 2 || len(shared.Status.ContainerStatuses) != 2 {
			t.Errorf("the pod has %d containers and %d statuses, want 2: the sandbox is not one of them", n, len(shared.Status.ContainerStatuses))
		}
	})

	t.Run("the pause process reaps orphans", func(t *testing.T) {
		// The shell exits before its child, which PID 1 inherits; once it
		// has exited no zombie may stay.
		run(t, "shared", "a", "sh", "-c", "sleep 2 >/dev/null 2>&1 & exit 0")
		out := run(t, "shared", "b", ps...)
		if ppidOf(out, "sleep 2") != "1" {
			t.Fatalf("the orphaned sleep 2 is not a child of PID 1:\n%s", out)
		}
		poll(t, 15*time.Second, "the orphan to be reaped", func() (bool, string) {
			out := run(t, "shared", "b", ps...)
			for _, l := range strings.Split(out, "\n") {
				if f := strings.Fields(l); len(f) >= 3 && (strings.HasPrefix(f[2], "Z") || strings.Contains(l, "sleep 2")) {
					return false, out
				}
			}
			return true, ""
		})
	})

	t.Run("signals and /proc/<pid>/root", func(t *testing.T) {
		p := pidOf(run(t, "shared", "b", ps...), "sleep 3601")
		if p == "" {
			t.Fatal("no sleep 3601 in b's ps")
		}
		run(t, "shared", "b", "sh", "-c", fmt.Sprintf("busybox test -x /proc/%s/root/bin/busybox && busybox kill %s", p, p))
		poll(t, 30*time.Second, "a to restart after b killed it", func() (bool, string) {
			p := e.getPod(t, "shared")
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name == "a" {
					return cs.RestartCount == 1 && cs.State.Running != nil, fmt.Sprintf("%+v", cs)
				}
			}
			return false, "no status of a"
		})
		out := run(t, "shared", "b", ps...)
		if !strings.Contains(out, "sleep 3601") || pid1(out) != "/pause" {
			t.Errorf("the restarted a should be in the same namespace:\n%s", out)
		}
	})

	t.Run("own", func(t *testing.T) {
		out := run(t, "own", "b", ps...)
		if strings.Contains(out, "sleep 3601") || pid1(out) != "sleep 3602" {
			t.Errorf("without shareProcessNamespace b should see its own processes only:\n%s", out)
		}
	})

	t.Run("hostPID", func(t *testing.T) {
		// The node's processes: this test's own among them.
		out := run(t, "host", "a", ps...)
		self := false
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == fmt.Sprint(os.Getpid()) {
				self = true
			}
		}
		if !self || pid1(out) == "sleep 3604" {
			t.Errorf("with hostPID ps should list the node's processes (PID %d among them):\n%s", os.Getpid(), out)
		}
	})

	t.Run("ephemeral container without a target", func(t *testing.T) {
		p := e.getPod(t, "shared")
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox", Command: []string{"sleep", "3603"},
				ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			},
		})
		if _, err := pods.UpdateEphemeralContainers(ctx, "shared", p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, 60*time.Second, "the ephemeral container to run", func() (bool, string) {
			p := e.getPod(t, "shared")
			es := ephemeralStatus(p, "debug")
			return es != nil && es.State.Running != nil, fmt.Sprintf("%+v", p.Status.EphemeralContainerStatuses)
		})
		out := run(t, "shared", "debug", ps...)
		if !strings.Contains(out, "sleep 3601") || !strings.Contains(out, "sleep 3602") || pid1(out) != "/pause" {
			t.Errorf("ps in the ephemeral container should see a's and b's sleeps and /pause:\n%s", out)
		}
	})

	nsCtx := namespaces.WithNamespace(ctx, e.namespace)
	t.Run("a new sandbox when the pause process dies", func(t *testing.T) {
		// Its namespace's processes die with it; b (never restarted
		// before, so without back-off) starts again in a new sandbox.
		c, err := e.ctd.Client.LoadContainer(nsCtx, sandboxID)
		if err != nil {
			t.Fatal(err)
		}
		task, err := c.Task(nsCtx, nil)
		if err != nil {
			t.Fatal(err)
		}
		old := task.Pid()
		if err := task.Kill(nsCtx, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		poll(t, 30*time.Second, "b to restart", func() (bool, string) {
			p := e.getPod(t, "shared")
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name == "b" {
					return cs.RestartCount == 1 && cs.State.Running != nil, fmt.Sprintf("%+v", cs)
				}
			}
			return false, "no status of b"
		})
		if out := run(t, "shared", "b", ps...); pid1(out) != "/pause" {
			t.Errorf("b after the restart:\n%s", out)
		}
		if task, err = c.Task(nsCtx, nil); err != nil {
			t.Errorf("the new sandbox's task: %v", err)
		} else if task.Pid() == old {
			t.Errorf("the sandbox's pause process is still %d", old)
		}
	})

	t.Run("the sandbox goes with the pod", func(t *testing.T) {
		if _, err := e.ctd.Client.LoadContainer(nsCtx, sandboxID); err != nil {
			t.Fatalf("sandbox container %s: %v", sandboxID, err)
		}
		if err := pods.Delete(ctx, "shared", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, 30*time.Second, "the sandbox container to go", func() (bool, string) {
			_, err := e.ctd.Client.LoadContainer(nsCtx, sandboxID)
			return errdefs.IsNotFound(err), fmt.Sprint(err)
		})
	})
}
