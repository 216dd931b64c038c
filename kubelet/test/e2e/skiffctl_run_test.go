package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedapp "skiff.dev/scheduler/app"
)

// skiffctl run --rm -i --restart=Never: the pod is scheduled and run, the
// run attaches to it through the API server's pods/attach and the
// kubelet, what it reads on stdin reaches the container's stdin (closed
// after it, stdinOnce), its output comes back, skiffctl ends with the
// container's exit code, and the pod is deleted; the real kubectl does
// the same against this cluster and prints the same.
func TestSkiffctlRunAttached(t *testing.T) {
	e := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	schedOpts := schedapp.NewOptions()
	schedOpts.LeaderElection.LeaderElect = false
	schedOpts.Serving.BindAddress, schedOpts.Serving.Port = "127.0.0.1", 0
	sched, err := schedapp.SetupWithConfig(ctx, schedOpts, e.ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	startDaemon(t, "scheduler", func(ctx context.Context) error { return schedapp.Run(ctx, sched) })
	e.tlsCert = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".crt")
	e.tlsKey = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".key")
	e.startKubelet(t)
	e.makeReady(t)
	// The pods of a run mount the default service account's token.
	if _, err := e.client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	args := func(name string) []string {
		return []string{"run", "--rm", "-i", "--restart=Never", "--image=busybox", name, "--", "sh", "-c", "read x; echo got $x; exit 3"}
	}
	gone := func(name string) {
		poll(t, 60*time.Second, "pod "+name+" to be deleted", func() (bool, string) {
			p, err := e.client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, ""
			}
			if err != nil {
				return false, err.Error()
			}
			return false, "phase " + string(p.Status.Phase)
		})
	}

	start := time.Now()
	var out, errOut syncBuffer
	err = e.skiffctlIn(ctx, "through-stdin\n", &out, &errOut, args("sk-run")...)
	var status interface{ ExitStatus() int }
	if !errors.As(err, &status) || status.ExitStatus() != 3 {
		t.Fatalf("skiffctl run = %v, want exit code 3; stdout %q stderr %q", err, out.String(), errOut.String())
	}
	t.Logf("skiffctl run --rm -i: %v from create to exit code", time.Since(start).Round(time.Millisecond))
	if want := "got through-stdin\npod \"sk-run\" deleted\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if !strings.Contains(errOut.String(), "pod default/sk-run terminated (Error)\n") {
		t.Errorf("stderr %q lacks the pod's end", errOut.String())
	}
	gone("sk-run")

	if _, lookErr := exec.LookPath("kubectl"); lookErr != nil {
		return
	}
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", e.ts.Kubeconfig}, args("kc-run")...)...)
	cmd.Env = append(cmd.Environ(), "HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader("through-stdin\n")
	var kout, kerr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &kout, &kerr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
		t.Errorf("kubectl run = %v, want exit code 3; stdout %q stderr %q", err, kout.String(), kerr.String())
	}
	same := func(s string) string { return strings.ReplaceAll(s, "kc-run", "sk-run") }
	if same(kout.String()) != out.String() || same(kerr.String()) != errOut.String() {
		t.Errorf("kubectl differs:\nstdout %q\nstderr %q\nskiffctl:\nstdout %q\nstderr %q", kout.String(), kerr.String(), out.String(), errOut.String())
	}
	gone("kc-run")
}

// A container with stdin: true and no stdinOnce keeps its stdin across
// attaches; when the kubelet stops its stdin ends (the kubelet held it),
// and the next kubelet takes up what the container writes meanwhile.
func TestAttachStdinAcrossAttachesAndKubeletRestart(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("needs kubectl in PATH")
	}
	e := setup(t)
	e.tlsCert = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".crt")
	e.tlsKey = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".key")
	k := e.startKubelet(t)
	e.makeReady(t)
	e.createPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "keeper"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers: []corev1.Container{{
				Name: "c", Image: "busybox", Stdin: true,
				Command: []string{"sh", "-c", "while read l; do echo got $l; done; echo stdin-ended; sleep 2; echo taken-up; exec sleep 3600"},
			}},
		},
	})
	e.waitRunning(t, "keeper")
	attach := func(line string) {
		t.Helper()
		cmd := exec.Command("kubectl", "--kubeconfig", e.ts.Kubeconfig, "attach", "-i", "-q", "pod/keeper")
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var out syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		// Until the attach is up, a line may go nowhere: send it again.
		poll(t, 30*time.Second, "the container to answer "+line+" through kubectl attach -i", func() (bool, string) {
			if strings.Contains(out.String(), "got "+line) {
				return true, ""
			}
			_, _ = io.WriteString(in, line+"\n")
			return false, out.String()
		})
	}
	attach("one")
	attach("two") // the first attach's end did not close the stdin
	k.stop()
	e.startKubelet(t)
	poll(t, 60*time.Second, "the container's output after the kubelet's restart", func() (bool, string) {
		b, err := e.client.CoreV1().Pods("default").GetLogs("keeper", &corev1.PodLogOptions{}).Do(context.Background()).Raw()
		return err == nil && strings.Contains(string(b), "stdin-ended\ntaken-up\n"), fmt.Sprintf("%v: %s", err, b)
	})
}
