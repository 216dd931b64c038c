package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/exec"
	"k8s.io/utils/ptr"
)

// spdyExecutor is client-go's SPDY executor (what upstream's e2e
// framework uses) for the pod's subresource with query, through the API
// server.
func (e *env) spdyExecutor(t *testing.T, pod, sub string, query url.Values) remotecommand.Executor {
	t.Helper()
	u, err := url.Parse(e.ts.AdminConfig.Host + "/api/v1/namespaces/default/pods/" + pod + "/" + sub + "?" + query.Encode())
	if err != nil {
		t.Fatal(err)
	}
	ex, err := remotecommand.NewSPDYExecutor(e.ts.AdminConfig, http.MethodPost, u)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// oneSize is a terminal size queue with one size.
type oneSize chan remotecommand.TerminalSize

func (q oneSize) Next() *remotecommand.TerminalSize {
	s, ok := <-q
	if !ok {
		return nil
	}
	return &s
}

// client-go's SPDY executor, as upstream's conformance tests use it, runs
// commands in real containers through the API server and the kubelet,
// and attaches to them, as does the real kubectl told to speak SPDY; and
// pods/log is read over a WebSocket, as upstream's conformance test does.
func TestExecAndAttachOverSPDY(t *testing.T) {
	e := setup(t)
	e.tlsCert = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".crt")
	e.tlsKey = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".key")
	e.startKubelet(t)
	e.makeReady(t)
	e.createPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "spdy"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers: []corev1.Container{{
				Name: "main", Image: "busybox",
				Command: []string{"sh", "-c", `i=0; while true; do echo "tick-$i"; i=$((i+1)); sleep 0.2; done`},
			}},
		},
	})
	e.waitRunning(t, "spdy")

	run := func(t *testing.T, q url.Values, opts remotecommand.StreamOptions) error {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return e.spdyExecutor(t, "spdy", "exec", q).StreamWithContext(ctx, opts)
	}
	shell := func(script string, streams ...string) url.Values {
		q := url.Values{"container": {"main"}, "command": {"sh", "-c", script}}
		for _, s := range streams {
			q.Set(s, "true")
		}
		return q
	}

	t.Run("stdout and stderr", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		err := run(t, shell("echo to-stdout; echo to-stderr >&2", "stdout", "stderr"), remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
		if err != nil || stdout.String() != "to-stdout\n" || stderr.String() != "to-stderr\n" {
			t.Errorf("err %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
		}
	})
	t.Run("stdin", func(t *testing.T) {
		var stdout bytes.Buffer
		err := run(t, shell("tr a-z A-Z", "stdin", "stdout"), remotecommand.StreamOptions{Stdin: strings.NewReader("through stdin\n"), Stdout: &stdout})
		if err != nil || stdout.String() != "THROUGH STDIN\n" {
			t.Errorf("err %v, stdout %q", err, stdout.String())
		}
	})
	t.Run("exit code", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		err := run(t, shell("echo before-exit; exit 7", "stdout", "stderr"), remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
		var exitErr exec.CodeExitError
		if !errors.As(err, &exitErr) || exitErr.Code != 7 || stdout.String() != "before-exit\n" {
			t.Errorf("err %#v, stdout %q; want a CodeExitError with code 7 after the output", err, stdout.String())
		}
	})
	t.Run("tty with resize", func(t *testing.T) {
		sizes := make(oneSize, 1)
		sizes <- remotecommand.TerminalSize{Width: 123, Height: 45}
		var stdout bytes.Buffer
		// The size may reach the terminal after the shell starts: it
		// looks for it for up to 10 s.
		script := `echo "tty:$(tty)"; for i in $(seq 100); do s=$(stty size); if [ "$s" = "45 123" ]; then echo "size:$s"; exit 0; fi; sleep 0.1; done; echo "last:$s"; exit 1`
		err := run(t, shell(script, "stdout", "tty"), remotecommand.StreamOptions{Stdout: &stdout, Tty: true, TerminalSizeQueue: sizes})
		if err != nil || !strings.Contains(stdout.String(), "size:45 123") {
			t.Errorf("err %v, output %q; want the terminal size the client sent", err, stdout.String())
		}
		// A pseudo-terminal: its output ends lines with CR LF.
		if !regexp.MustCompile(`tty:/dev/pts/\d+\r\n`).MatchString(stdout.String()) {
			t.Errorf("output %q; want tty to name a /dev/pts terminal", stdout.String())
		}
	})
	t.Run("kubectl exec over SPDY", func(t *testing.T) {
		if _, err := osexec.LookPath("kubectl"); err != nil {
			t.Skip("needs kubectl in PATH")
		}
		// kubectl 1.32 speaks WebSocket unless told not to; then SPDY only.
		cmd := osexec.Command("kubectl", "--kubeconfig", e.ts.Kubeconfig, "exec", "-i", "spdy", "--", "sh", "-c", "tr a-z A-Z; exit 5")
		cmd.Env = append(os.Environ(), "KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false")
		cmd.Stdin = strings.NewReader("kubectl stdin\n")
		out, err := cmd.Output()
		var exitErr *osexec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 5 || string(out) != "KUBECTL STDIN\n" {
			t.Errorf("kubectl exec: %v, output %q; want exit code 5 and the upper-cased input", err, out)
		}
	})
	t.Run("pods/log over a WebSocket", func(t *testing.T) {
		tlsConfig, err := rest.TLSConfigFor(e.ts.AdminConfig)
		if err != nil {
			t.Fatal(err)
		}
		d := websocket.Dialer{TLSClientConfig: tlsConfig, Subprotocols: []string{"base64.binary.k8s.io"}, HandshakeTimeout: 30 * time.Second}
		u := "wss" + strings.TrimPrefix(e.ts.AdminConfig.Host, "https") + "/api/v1/namespaces/default/pods/spdy/log?container=main"
		ws, resp, err := d.Dial(u, nil)
		if err != nil {
			t.Fatalf("dial: %v (%v)", err, resp)
		}
		defer ws.Close()
		_ = ws.SetReadDeadline(time.Now().Add(30 * time.Second))
		var log strings.Builder
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				break // the server closes the connection after the log
			}
			b, err := base64.StdEncoding.DecodeString(string(msg))
			if err != nil {
				t.Fatalf("message %q is not base64: %v", msg, err)
			}
			log.Write(b)
		}
		if !strings.HasPrefix(log.String(), "tick-0\ntick-1\n") {
			t.Errorf("log %q, want the container's ticks from the first", log.String())
		}
	})
	t.Run("container with a tty", func(t *testing.T) {
		// As kubectl run -it makes it: stdin and tty.
		e.createPod(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "spdy-tty"},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				AutomountServiceAccountToken:  ptr.To(false),
				Containers: []corev1.Container{{
					Name: "main", Image: "busybox", Stdin: true, TTY: true,
					Command: []string{"sh", "-c", `if [ -t 0 ]; then echo "stdin is $(tty)"; fi; while true; do echo "size:$(stty size)"; sleep 0.2; done`},
				}, {
					// A terminal without stdin, as upstream's: the
					// process's stdin is the terminal still.
					Name: "tty-only", Image: "busybox", TTY: true,
					Command: []string{"sh", "-c", `if [ -t 0 ]; then echo "stdin is $(tty)"; fi; exec sleep 3600`},
				}},
			},
		})
		e.waitRunning(t, "spdy-tty")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		// The attach's size resizes the container's terminal.
		sizes := make(oneSize, 1)
		sizes <- remotecommand.TerminalSize{Width: 97, Height: 31}
		out := &syncBuffer{}
		done := make(chan error, 1)
		q := url.Values{"container": {"main"}, "stdout": {"true"}, "tty": {"true"}}
		ex := e.spdyExecutor(t, "spdy-tty", "attach", q)
		go func() {
			done <- ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: out, Tty: true, TerminalSizeQueue: sizes})
		}()
		poll(t, 30*time.Second, "the attach's terminal size in the container", func() (bool, string) {
			select {
			case err := <-done:
				t.Fatalf("the attach ended: %v; output %q", err, out.String())
			default:
			}
			return strings.Contains(out.String(), "size:31 97\r\n"), out.String()
		})
		cancel()
		<-done
		for _, c := range []string{"main", "tty-only"} {
			poll(t, 30*time.Second, "container "+c+"'s terminal in its log", func() (bool, string) {
				logs, err := e.client.CoreV1().Pods("default").GetLogs("spdy-tty", &corev1.PodLogOptions{Container: c}).DoRaw(context.Background())
				return err == nil && regexp.MustCompile(`^stdin is /dev/pts/\d+\r\n`).Match(logs), fmt.Sprintf("log %q (err %v)", logs, err)
			})
		}
	})
	t.Run("attach", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := &syncBuffer{}
		done := make(chan error, 1)
		q := url.Values{"container": {"main"}, "stdout": {"true"}, "stderr": {"true"}}
		ex := e.spdyExecutor(t, "spdy", "attach", q)
		go func() { done <- ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: out, Stderr: out}) }()
		ticks := regexp.MustCompile(`tick-\d+\n`)
		poll(t, 30*time.Second, "tick lines through the attach", func() (bool, string) {
			select {
			case err := <-done:
				t.Fatalf("the attach ended: %v; output %q", err, out.String())
			default:
			}
			return len(ticks.FindAllString(out.String(), -1)) >= 3, out.String()
		})
		if first := strings.SplitN(out.String(), "\n", 2)[0]; !strings.HasPrefix(first, "tick-") {
			t.Errorf("first line %q, want a bare tick line", first)
		}
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the attach did not end when its client did")
		}
	})
}
