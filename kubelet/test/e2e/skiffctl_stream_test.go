package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ctlapp "skiff.dev/ctl/app"
)

// skiffctlIn runs skiffctl in-process against the test's API server.
func (e *env) skiffctlIn(ctx context.Context, stdin string, stdout, stderr *syncBuffer, args ...string) error {
	cmd := ctlapp.NewSkiffctlCommand()
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(append([]string{"--kubeconfig", e.ts.Kubeconfig}, args...))
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		ctlapp.PrintError(stderr, err)
	}
	return err
}

// skiffctl exec and port-forward reach a real container through the API
// server and the kubelet: exec passes stdin, stdout and stderr and ends
// with the command's exit code, as the real kubectl does; port-forward
// resolves a named container port and carries an HTTP exchange.
func TestSkiffctlExecAndPortForward(t *testing.T) {
	e := setup(t)
	e.tlsCert = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".crt")
	e.tlsKey = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".key")
	e.startKubelet(t)
	e.makeReady(t)
	e.createPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sk"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers: []corev1.Container{{
				Name: "web", Image: "busybox",
				Command: []string{"sh", "-c", "mkdir -p /www && echo skiffctl-page > /www/index.html && exec httpd -f -p 80 -h /www"},
				Ports:   []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
			}},
		},
	})
	e.waitRunning(t, "sk")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	args := []string{"exec", "-i", "sk", "--", "sh", "-c", "tr a-z A-Z; echo to-stderr >&2; exit 3"}
	var out, errOut syncBuffer
	err := e.skiffctlIn(ctx, "through stdin\n", &out, &errOut, args...)
	var status interface{ ExitStatus() int }
	if !errors.As(err, &status) || status.ExitStatus() != 3 {
		t.Fatalf("skiffctl exec = %v, want exit code 3; stdout %q stderr %q", err, out.String(), errOut.String())
	}
	if out.String() != "THROUGH STDIN\n" || errOut.String() != "to-stderr\ncommand terminated with exit code 3\n" {
		t.Errorf("skiffctl exec: stdout %q stderr %q", out.String(), errOut.String())
	}
	if _, lookErr := exec.LookPath("kubectl"); lookErr == nil {
		cmd := exec.Command("kubectl", append([]string{"--kubeconfig", e.ts.Kubeconfig}, args...)...)
		cmd.Stdin = strings.NewReader("through stdin\n")
		var kout, kerr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &kout, &kerr
		err := cmd.Run()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 || kout.String() != out.String() || kerr.String() != errOut.String() {
			t.Errorf("kubectl exec differs: %v stdout %q stderr %q", err, kout.String(), kerr.String())
		}
	}

	// httpd may not listen yet when the pod is Running.
	poll(t, 15*time.Second, "httpd in pod sk", func() (bool, string) {
		var o, eo syncBuffer
		err := e.skiffctlIn(ctx, "", &o, &eo, "exec", "sk", "--", "wget", "-q", "-O", "-", "http://127.0.0.1/index.html")
		return err == nil && o.String() == "skiffctl-page\n", fmt.Sprintf("%v: %s %s", err, o.String(), eo.String())
	})

	pfCtx, stop := context.WithCancel(ctx)
	var pfOut, pfErr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- e.skiffctlIn(pfCtx, "", &pfOut, &pfErr, "port-forward", "--address", "127.0.0.1", "pod/sk", ":http")
	}()
	var local string
	poll(t, 15*time.Second, "skiffctl port-forward to listen", func() (bool, string) {
		if m := forwardingFrom.FindStringSubmatch(pfOut.String()); m != nil {
			local = m[1]
			return true, ""
		}
		return false, pfOut.String() + pfErr.String()
	})
	if !strings.HasSuffix(strings.TrimSpace(pfOut.String()), "-> 80") {
		t.Errorf("port-forward printed %q, want the named port resolved to 80", pfOut.String())
	}
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+local, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := httpGetRaw(conn, "/index.html")
	conn.Close()
	if err != nil || !strings.Contains(answer, "200 OK") || !strings.Contains(answer, "skiffctl-page") {
		t.Errorf("GET through skiffctl port-forward: %v\n%s", err, answer)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("port-forward ended with %v; stderr %s", err, pfErr.String())
		}
	case <-time.After(10 * time.Second):
		t.Error("port-forward did not end when its context did")
	}
	wantLine := "Handling connection for " + local
	if !strings.Contains(pfOut.String(), wantLine) {
		t.Errorf("port-forward output %q lacks %q", pfOut.String(), wantLine)
	}
}
