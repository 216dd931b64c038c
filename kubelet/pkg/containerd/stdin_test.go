package containerd

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/containerd/cio"
)

// streamsOf registers id's stdin as StartContainer does and returns the
// task's side of the streams.
func streamsOf(t *testing.T, r *Runtime, id, mode, logPath string) (*cio.Streams, func()) {
	t.Helper()
	opt, finish, ok, err := r.stdinIO(id, map[string]string{labelStdin: mode, labelLogPath: logPath})
	if err != nil || !ok {
		t.Fatalf("stdinIO: %v %v", ok, err)
	}
	var st cio.Streams
	opt(&st)
	return &st, finish
}

func TestStdinOnceEndsWithTheFirstAttach(t *testing.T) {
	r := &Runtime{}
	log := filepath.Join(t.TempDir(), "0.log")
	st, finish := streamsOf(t, r, "c1", "once", log)
	if _, _, ok, _ := r.stdinIO("c1", map[string]string{labelStdin: "once"}); ok {
		t.Fatal("a second registration of the same container was accepted")
	}
	got := make(chan string, 1)
	go func() { b, _ := io.ReadAll(st.Stdin); got <- string(b) }()
	w, err := r.AttachStdin(context.Background(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, "hello\n"); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if s := <-got; s != "hello\n" {
		t.Errorf("the container read %q", s)
	}
	// Its output goes to the log file in the log driver's format.
	if _, err := io.WriteString(st.Stdout, "got hello\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(st.Stderr, "no newline"); err != nil {
		t.Fatal(err)
	}
	finish()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], " stdout F got hello") || !strings.HasSuffix(lines[1], " stderr P no newline") {
		t.Errorf("log file:\n%s", b)
	}
	if _, err := r.AttachStdin(context.Background(), "c1"); err == nil {
		t.Error("a finished container still has a stdin")
	}
}

func TestOpenStdinOutlivesAttachesUntilTheKubeletStops(t *testing.T) {
	r := &Runtime{}
	st, finish := streamsOf(t, r, "c2", "open", "")
	defer finish()
	got := make(chan string, 1)
	go func() { b, _ := io.ReadAll(st.Stdin); got <- string(b) }()
	for _, line := range []string{"one\n", "two\n"} {
		w, err := r.AttachStdin(context.Background(), "c2")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, line); err != nil {
			t.Fatalf("attach writing %q: %v", line, err)
		}
		_ = w.Close()
	}
	select {
	case s := <-got:
		t.Fatalf("the stdin ended after the attaches (read %q)", s)
	default:
	}
	r.closeStdins()
	if s := <-got; s != "one\ntwo\n" {
		t.Errorf("the container read %q", s)
	}
	if _, err := r.AttachStdin(context.Background(), "nope"); err == nil || !strings.Contains(err.Error(), "no open stdin") {
		t.Errorf("unknown container: %v", err)
	}
}

// A container with tty: true gets a terminal whose one output, stdout,
// goes to the log; without stdin: true it has no stdin to attach to.
func TestTerminalStreams(t *testing.T) {
	r := &Runtime{}
	log := filepath.Join(t.TempDir(), "0.log")
	opt, finish, ok, err := r.stdinIO("c1", map[string]string{labelTTY: "true", labelLogPath: log})
	if err != nil || !ok {
		t.Fatalf("stdinIO: %v %v", ok, err)
	}
	var st cio.Streams
	opt(&st)
	if !st.Terminal || st.Stdin != nil || st.Stderr != nil || st.Stdout == nil {
		t.Errorf("streams %+v; want a terminal with stdout only", st)
	}
	if _, err := r.AttachStdin(context.Background(), "c1"); err == nil || !strings.Contains(err.Error(), "no open stdin") {
		t.Errorf("AttachStdin to a tty without stdin: %v, want an error", err)
	}
	if _, err := io.WriteString(st.Stdout, "prompt\r\n"); err != nil {
		t.Fatal(err)
	}
	finish()
	if b, err := os.ReadFile(log); err != nil || !strings.HasSuffix(string(b), " stdout F prompt\r\n") {
		t.Errorf("log %q (%v); want the terminal's output as stdout", b, err)
	}

	opt, finish, _, _ = r.stdinIO("c2", map[string]string{labelTTY: "true", labelStdin: "open", labelLogPath: log})
	defer finish()
	st = cio.Streams{}
	opt(&st)
	if !st.Terminal || st.Stdin == nil || st.Stderr != nil {
		t.Errorf("streams %+v; want a terminal with stdin and stdout", st)
	}
	if _, err := r.AttachStdin(context.Background(), "c2"); err != nil {
		t.Errorf("AttachStdin to a tty with stdin: %v", err)
	}
}
