package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/kubelet/pkg/pod"
)

func TestParseAttachQuery(t *testing.T) {
	for _, tc := range []struct {
		query   string
		wantErr bool
	}{
		{"stdout=true&stderr=true", false},
		{"stdout=1&tty=1", false},
		{"stdin=true", false},
		{"", true},
		{"tty=true&stdout=true&stderr=true", true},
	} {
		t.Run(tc.query, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/attach/a/b/c?"+tc.query, nil)
			if _, err := parseAttachQuery(r); (err != nil) != tc.wantErr {
				t.Errorf("err = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestFollowOutput(t *testing.T) {
	records := "2026-01-01T00:00:00Z stdout F out 1\n" +
		"2026-01-01T00:00:00Z stderr F err 1\n" +
		"2026-01-01T00:00:00Z stdout P part-\n" +
		"2026-01-01T00:00:00Z stdout F ial\n" +
		"not a record\n" +
		"2026-01-01T00:00:00Z stdout F unterminated"
	for _, tc := range []struct {
		name                   string
		stdout, stderr, tty    bool
		wantStdout, wantStderr string
	}{
		{"stdout and stderr", true, true, false, "out 1\npart-ial\nnot a record\n", "err 1\n"},
		{"stdout only", true, false, false, "out 1\npart-ial\nnot a record\n", ""},
		{"a tty merges stderr into stdout", true, false, true, "out 1\nerr 1\npart-ial\nnot a record\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			out := attachOutput{tty: tc.tty}
			if tc.stdout {
				out.stdout = &stdout
			}
			if tc.stderr {
				out.stderr = &stderr
			}
			err := followOutput(context.Background(), bufio.NewReader(strings.NewReader(records)), out, func() bool { return false }, time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if stdout.String() != tc.wantStdout || stderr.String() != tc.wantStderr {
				t.Errorf("stdout %q stderr %q, want %q and %q", stdout.String(), stderr.String(), tc.wantStdout, tc.wantStderr)
			}
		})
	}
}

// fakeRuntime lists one container whose state the test sets; exec, when
// set, runs its execs.
type fakeRuntime struct {
	mu   sync.Mutex
	c    pod.Container
	exec func(context.Context, pod.ExecOptions) (int32, error)
	// stdin, when set, is the container's open stdin.
	stdin *fakeStdin
	// resized receives the sizes given to the container's terminal.
	resized chan pod.TerminalSize
}

func (f *fakeRuntime) ResizeContainer(_ context.Context, id string, size pod.TerminalSize) error {
	if f.resized == nil || id != f.c.ID {
		return fmt.Errorf("container %s has no terminal", id)
	}
	f.resized <- size
	return nil
}

func (f *fakeRuntime) AttachStdin(_ context.Context, id string) (io.WriteCloser, error) {
	if f.stdin == nil || id != f.c.ID {
		return nil, fmt.Errorf("container %s has no open stdin", id)
	}
	return f.stdin, nil
}

// fakeStdin records what an attach writes and when it closes.
type fakeStdin struct {
	mu     sync.Mutex
	buf    strings.Builder
	closed chan struct{}
}

func (s *fakeStdin) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *fakeStdin) Close() error { close(s.closed); return nil }

func (s *fakeStdin) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (f *fakeRuntime) ListContainers(context.Context, types.UID) ([]pod.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []pod.Container{f.c}, nil
}

func (f *fakeRuntime) ExecStream(ctx context.Context, _ string, o pod.ExecOptions) (int32, error) {
	if f.exec == nil {
		return 0, errors.New("this test runs no exec")
	}
	return f.exec(ctx, o)
}

func (f *fakeRuntime) setState(s pod.ContainerState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.c.State = s
}

// attachFixture is a kubelet API with one running container, default/app
// container "main" (attempt 2), whose log file the test appends to.
type attachFixture struct {
	url     string
	runtime *fakeRuntime
	log     *os.File
}

func startAttachServer(t *testing.T, spec corev1.Container) *attachFixture {
	t.Helper()
	dir := t.TempDir()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app", UID: "uid-a"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{spec}}}
	rt := &fakeRuntime{c: pod.Container{ID: "c1", State: pod.StateRunning, Labels: map[string]string{
		pod.LabelPodUID: "uid-a", pod.LabelContainerName: spec.Name, pod.LabelAttempt: "2"}}}
	path := filepath.Join(dir, "uid-a", spec.Name, "2.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close() })
	// Written before the attach: not shown.
	if _, err := log.WriteString("2026-01-01T00:00:00Z stdout F before\n"); err != nil {
		t.Fatal(err)
	}
	s := New(Options{Pods: fakePods{"default/app": p}, Runtime: rt, LogDir: dir})
	mux := http.NewServeMux()
	mux.HandleFunc("/attach/{namespace}/{pod}/{container}", s.attach)
	mux.HandleFunc("/exec/{namespace}/{pod}/{container}", s.exec)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &attachFixture{url: srv.URL, runtime: rt, log: log}
}

func (f *attachFixture) dial(t *testing.T, query string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"v5.channel.k8s.io"}, HandshakeTimeout: 5 * time.Second}
	ws, resp, err := d.Dial("ws"+strings.TrimPrefix(f.url, "http")+"/attach/default/app/main?"+query, nil)
	if err == nil {
		t.Cleanup(func() { _ = ws.Close() })
	}
	return ws, resp, err
}

func TestAttachStreamsNewOutputUntilExit(t *testing.T) {
	f := startAttachServer(t, corev1.Container{Name: "main"})
	ws, _, err := f.dial(t, "stdout=true&stderr=true")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.log.WriteString("2026-01-01T00:00:01Z stdout F hello\n2026-01-01T00:00:01Z stderr F oops\n"); err != nil {
		t.Fatal(err)
	}
	_ = ws.SetReadDeadline(time.Now().Add(20 * time.Second))
	got := map[byte]string{}
	for got[stdoutChannel] != "hello\n" || got[stderrChannel] != "oops\n" {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("reading: %v; so far %q", err, got)
		}
		if len(msg) > 1 {
			got[msg[0]] += string(msg[1:])
		}
		if len(got[stdoutChannel]) > len("hello\n") {
			t.Fatalf("stdout %q, want only what was written after the attach", got[stdoutChannel])
		}
	}
	// The container exits: its last line arrives, then a success status.
	if _, err := f.log.WriteString("2026-01-01T00:00:02Z stdout F bye\n"); err != nil {
		t.Fatal(err)
	}
	f.runtime.setState(pod.StateExited)
	var status metav1.Status
	for status.Status == "" {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("reading: %v; so far %q", err, got)
		}
		switch {
		case len(msg) > 1 && msg[0] == errorChannel:
			if err := json.Unmarshal(msg[1:], &status); err != nil {
				t.Fatalf("status %q: %v", msg[1:], err)
			}
		case len(msg) > 1:
			got[msg[0]] += string(msg[1:])
		}
	}
	if status.Status != metav1.StatusSuccess || got[stdoutChannel] != "hello\nbye\n" {
		t.Errorf("status %+v, stdout %q; want Success after hello and bye", status, got[stdoutChannel])
	}
}

func TestAttachRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  corev1.Container
		query string
		want  string
	}{
		{"stdin of a container with stdin the runtime has not open", corev1.Container{Name: "main", Stdin: true}, "stdin=true&stdout=true", "has no open stdin"},
		{"only stdin of a container without stdin", corev1.Container{Name: "main"}, "stdin=true", "no output was asked for"},
		{"no streams", corev1.Container{Name: "main"}, "", "at least one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startAttachServer(t, tc.spec)
			_, resp, err := f.dial(t, tc.query)
			if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("dial: %v, response %v; want 400", err, resp)
			}
			var body strings.Builder
			_, _ = bufio.NewReader(resp.Body).WriteTo(&body)
			if !strings.Contains(body.String(), tc.want) {
				t.Errorf("body %q, want %q", body.String(), tc.want)
			}
		})
	}
	t.Run("stdin of a container without stdin is ignored", func(t *testing.T) {
		f := startAttachServer(t, corev1.Container{Name: "main"})
		if _, _, err := f.dial(t, "stdin=true&stdout=true"); err != nil {
			t.Errorf("dial: %v", err)
		}
	})
}

// TestAttachStdin: what the client sends on stdin reaches the container's
// stdin, which is closed (for the runtime to end it with stdinOnce) when
// the client closes its stdin, while the output keeps coming.
func TestAttachStdin(t *testing.T) {
	f := startAttachServer(t, corev1.Container{Name: "main", Stdin: true, StdinOnce: true})
	f.runtime.stdin = &fakeStdin{closed: make(chan struct{})}
	ws, _, err := f.dial(t, "stdin=true&stdout=true")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteMessage(websocket.BinaryMessage, append([]byte{stdinChannel}, "hello\n"...)); err != nil {
		t.Fatal(err)
	}
	// v5's close of the stdin channel.
	if err := ws.WriteMessage(websocket.BinaryMessage, []byte{255, stdinChannel}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.runtime.stdin.closed:
	case <-time.After(20 * time.Second):
		t.Fatalf("the container's stdin was not closed; got %q", f.runtime.stdin.String())
	}
	if got := f.runtime.stdin.String(); got != "hello\n" {
		t.Errorf("stdin got %q", got)
	}
	if _, err := f.log.WriteString("2026-01-01T00:00:01Z stdout F got hello\n"); err != nil {
		t.Fatal(err)
	}
	_ = ws.SetReadDeadline(time.Now().Add(20 * time.Second))
	var out string
	for out != "got hello\n" {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("reading: %v; so far %q", err, out)
		}
		if len(msg) > 1 && msg[0] == stdoutChannel {
			out += string(msg[1:])
		}
	}
}

// TestAttachResizesTheTerminal: with a tty, the sizes the client sends on
// the resize channel resize the container's terminal.
func TestAttachResizesTheTerminal(t *testing.T) {
	f := startAttachServer(t, corev1.Container{Name: "main", Stdin: true, TTY: true})
	f.runtime.resized = make(chan pod.TerminalSize, 2)
	ws, _, err := f.dial(t, "stdout=true&tty=true")
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []string{`{"Width":80,"Height":24}`, `{"Width":120,"Height":40}`} {
		if err := ws.WriteMessage(websocket.BinaryMessage, append([]byte{resizeChannel}, size...)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []pod.TerminalSize{{Width: 80, Height: 24}, {Width: 120, Height: 40}} {
		select {
		case got := <-f.runtime.resized:
			if got != want {
				t.Errorf("resized to %+v, want %+v", got, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("the terminal was not resized to %+v", want)
		}
	}
}
