package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/utils/ptr"
)

// syncBuffer collects a process's output for polling.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// kubectlProcess is a long-running kubectl started by a test.
type kubectlProcess struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	err            error // set when done is closed
}

// startKubectl starts kubectl against the test's API server; it is
// killed at the end of the test if still running.
func (e *env) startKubectl(t *testing.T, env []string, args ...string) *kubectlProcess {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", e.ts.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	k := &kubectlProcess{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = k.stdout, k.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting kubectl %v: %v", args, err)
	}
	go func() {
		k.err = cmd.Wait()
		close(k.done)
	}()
	t.Cleanup(k.stop)
	return k
}

func (k *kubectlProcess) stop() {
	select {
	case <-k.done:
		return
	default:
	}
	_ = k.cmd.Process.Kill()
	<-k.done
}

func (k *kubectlProcess) exited() bool {
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

func (k *kubectlProcess) output() string {
	return fmt.Sprintf("stdout:\n%s\nstderr:\n%s", k.stdout, k.stderr)
}

var forwardingFrom = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)`)

// portForward runs kubectl port-forward to the pod's remote port on a
// local port kubectl picks, and returns kubectl and that port.
func (e *env) portForward(t *testing.T, env []string, pod string, remote int) (*kubectlProcess, string) {
	t.Helper()
	k := e.startKubectl(t, env, "port-forward", "-v=4", "--address", "127.0.0.1", "pod/"+pod, fmt.Sprintf(":%d", remote))
	var local string
	poll(t, 30*time.Second, "kubectl port-forward to listen", func() (bool, string) {
		if m := forwardingFrom.FindStringSubmatch(k.stdout.String()); m != nil {
			local = m[1]
			return true, ""
		}
		return false, k.output()
	})
	return k, local
}

// httpGetRaw sends an HTTP/1.0 GET on conn and returns the whole answer.
func httpGetRaw(conn net.Conn, path string) (string, error) {
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	return string(b), err
}

// waitRunning waits for the pod to be Running.
func (e *env) waitRunning(t *testing.T, name string) {
	t.Helper()
	poll(t, 90*time.Second, "pod "+name+" to run", func() (bool, string) {
		p := e.getPod(t, name)
		return p.Status.Phase == corev1.PodRunning, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
	})
}

// The real kubectl (1.32) streams to this kubelet through the API server:
// port-forward with SPDY tunnelled in a WebSocket (its default) and with
// plain SPDY (its fallback), and attach over the WebSocket v5 protocol.
func TestKubectlPortForwardAndAttach(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("needs kubectl in PATH")
	}
	e := setup(t)
	// The API server reaches the kubelet with its kubelet-client
	// certificate and checks the kubelet's serving certificate.
	e.tlsCert = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".crt")
	e.tlsKey = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".key")
	e.startKubelet(t)
	e.makeReady(t)
	ctx := context.Background()

	e.createPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pf"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers: []corev1.Container{{
				Name: "web", Image: "busybox",
				Command: []string{"sh", "-c", "mkdir -p /www && echo port-forward-page > /www/index.html && exec httpd -f -p 80 -h /www"},
				Ports:   []corev1.ContainerPort{{ContainerPort: 80}},
			}},
		},
	})
	// talker writes numbered lines to stdout and stderr until /tmp/stop
	// exists, then a last line, and exits.
	e.createPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "talker"},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers: []corev1.Container{{
				Name: "talk", Image: "busybox",
				Command: []string{"sh", "-c", `i=0; while [ ! -e /tmp/stop ]; do echo "tick-$i"; echo "err-$i" >&2; i=$((i+1)); sleep 0.2; done; echo final-line; exit 0`},
			}},
		},
	})
	e.waitRunning(t, "pf")
	e.waitRunning(t, "talker")
	// httpd may not listen yet when the pod is Running.
	poll(t, 30*time.Second, "httpd in pod pf", func() (bool, string) {
		out, err := exec.Command("kubectl", "--kubeconfig", e.ts.Kubeconfig, "exec", "pf", "--", "wget", "-q", "-O", "-", "http://127.0.0.1/index.html").CombinedOutput()
		return err == nil && strings.Contains(string(out), "port-forward-page"), fmt.Sprintf("%v: %s", err, out)
	})

	for _, tc := range []struct {
		name string
		env  []string
		// logged and notLogged are what kubectl -v=4 logs, and must not
		// log, for the protocol it should use.
		logged, notLogged string
	}{
		{"SPDY in a WebSocket", nil, "negotiated protocol: portforward.k8s.io", "fallback to secondary dialer"},
		{"plain SPDY", []string{"KUBECTL_PORT_FORWARD_WEBSOCKETS=false"}, "", "Before WebSocket Upgrade"},
	} {
		t.Run("kubectl port-forward with "+tc.name, func(t *testing.T) {
			k, local := e.portForward(t, tc.env, "pf", 80)
			// Two connections open at the same time, then both asked.
			var conns []net.Conn
			for range 2 {
				c, err := net.DialTimeout("tcp", "127.0.0.1:"+local, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				conns = append(conns, c)
			}
			answers := make([]string, len(conns))
			errs := make([]error, len(conns))
			var wg sync.WaitGroup
			for i, c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					answers[i], errs[i] = httpGetRaw(c, "/index.html")
				}()
			}
			wg.Wait()
			for i := range conns {
				if errs[i] != nil || !strings.HasPrefix(answers[i], "HTTP/1.") || !strings.Contains(answers[i], "port-forward-page") {
					t.Errorf("connection %d: %q, %v; want the pod's page\n%s", i, answers[i], errs[i], k.output())
				}
			}
			// And one more afterwards, on a fresh connection.
			body, err := httpGet("http://127.0.0.1:" + local + "/index.html")
			if err != nil || strings.TrimSpace(body) != "port-forward-page" {
				t.Errorf("a later GET: %q, %v\n%s", body, err, k.output())
			}
			if strings.Contains(k.stderr.String(), tc.notLogged) {
				t.Errorf("kubectl logged %q:\n%s", tc.notLogged, k.stderr)
			}
			if tc.logged != "" && !strings.Contains(k.stderr.String(), tc.logged) {
				t.Errorf("kubectl did not log %q:\n%s", tc.logged, k.stderr)
			}
			if k.exited() {
				t.Errorf("kubectl port-forward exited: %v\n%s", k.err, k.output())
			}
		})
	}

	t.Run("kubectl port-forward to a port with nothing listening", func(t *testing.T) {
		k, local := e.portForward(t, nil, "pf", 81)
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+local, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		answer, _ := httpGetRaw(c, "/")
		if answer != "" {
			t.Errorf("an answer from a port with nothing listening: %q", answer)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("the connection took %v to end", d)
		}
		poll(t, 20*time.Second, "kubectl to report the error and exit", func() (bool, string) {
			return k.exited() && strings.Contains(k.stderr.String(), "an error occurred forwarding") &&
				strings.Contains(k.stderr.String(), "connection refused"), k.output()
		})
		if k.err == nil {
			t.Errorf("kubectl exited successfully\n%s", k.output())
		}
		t.Logf("kubectl port-forward: %v\n%s", k.err, k.output())
	})

	t.Run("kubectl attach sees the container's output until it exits", func(t *testing.T) {
		// Two at once: a plain attach, and one with -i, whose stdin the
		// kubelet ignores for a container without stdin: true.
		attaches := map[string]*kubectlProcess{
			"attach":    e.startKubectl(t, nil, "attach", "pod/talker", "-c", "talk"),
			"attach -i": e.startKubectl(t, nil, "attach", "-i", "pod/talker", "-c", "talk"),
		}
		ticks := regexp.MustCompile(`tick-(\d+)\n`)
		for name, k := range attaches {
			poll(t, 30*time.Second, name+": tick lines on kubectl's stdout and err lines on its stderr", func() (bool, string) {
				return len(ticks.FindAllString(k.stdout.String(), -1)) >= 3 && strings.Contains(k.stderr.String(), "err-"), k.output()
			})
			// Lines come whole and in order, without log-file prefixes.
			last := -1
			for _, m := range ticks.FindAllStringSubmatch(k.stdout.String(), -1) {
				var n int
				_, _ = fmt.Sscan(m[1], &n)
				if last >= 0 && n != last+1 {
					t.Errorf("%s: tick-%d after tick-%d:\n%s", name, n, last, k.stdout)
				}
				last = n
			}
			if first := strings.SplitN(k.stdout.String(), "\n", 2)[0]; !strings.HasPrefix(first, "tick-") {
				t.Errorf("%s: first line %q, want a bare tick line", name, first)
			}
			if strings.Contains(k.stdout.String(), "err-") {
				t.Errorf("%s: stderr lines on stdout:\n%s", name, k.stdout)
			}
		}
		if out, err := exec.Command("kubectl", "--kubeconfig", e.ts.Kubeconfig, "exec", "talker", "--", "touch", "/tmp/stop").CombinedOutput(); err != nil {
			t.Fatalf("kubectl exec touch /tmp/stop: %v\n%s", err, out)
		}
		for name, k := range attaches {
			poll(t, 30*time.Second, name+": the last line, then kubectl exits", func() (bool, string) {
				return k.exited() && strings.Contains(k.stdout.String(), "final-line\n"), k.output()
			})
			if k.err != nil {
				t.Errorf("%s: %v\n%s", name, k.err, k.output())
			}
			t.Logf("kubectl %s:\n%s", name, k.stderr)
		}
	})

	t.Run("attach to a container that is not running", func(t *testing.T) {
		// The attaches above ended because the kubelet saw the container
		// exit; a new one, through the API server, is refused.
		u := fmt.Sprintf("%s/api/v1/namespaces/default/pods/talker/attach?container=talk&stdout=true", e.ts.AdminConfig.Host)
		ex, err := remotecommand.NewWebSocketExecutor(e.ts.AdminConfig, "GET", u)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard})
		if err == nil || !strings.Contains(err.Error(), "container talk in pod talker is not running") {
			t.Errorf("attach to the exited container: %v, want the kubelet's \"is not running\"", err)
		}
	})
}
