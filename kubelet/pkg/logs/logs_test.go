package logs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// writeLog writes stdout and stderr chunks through the driver's writer,
// with a clock that ticks one second per record from t0.
func writeLog(t *testing.T, path string, chunks []struct{ stream, data string }) time.Time {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	var n int64
	file := NewFile(f)
	file.now = func() time.Time { return t0.Add(time.Duration(atomic.AddInt64(&n, 1)) * time.Second) }
	streams := map[string]interface {
		Write([]byte) (int, error)
		Close() error
	}{Stdout: file.Stream(Stdout), Stderr: file.Stream(Stderr)}
	for _, c := range chunks {
		if _, err := streams[c.stream].Write([]byte(c.data)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range streams {
		_ = s.Close()
	}
	return t0
}

func TestWriterFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	writeLog(t, path, []struct{ stream, data string }{{Stdout, "one\ntw"}, {Stdout, "o\n"}, {Stderr, "err\n"}, {Stdout, "tail"}})
	got, _ := os.ReadFile(path)
	want := "2026-01-02T03:04:06.0000006Z stdout F one\n" +
		"2026-01-02T03:04:07.0000006Z stdout F two\n" +
		"2026-01-02T03:04:08.0000006Z stderr F err\n" +
		"2026-01-02T03:04:09.0000006Z stdout P tail\n"
	if string(got) != want {
		t.Errorf("log file:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriterSplitsLongLines(t *testing.T) {
	var buf bytes.Buffer
	w := NewFile(&buf).Stream(Stdout)
	long := strings.Repeat("x", MaxLineSize+10)
	if _, err := w.Write([]byte(long + "\n")); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 || ParseRecord([]byte(lines[0])).Partial != true || len(ParseRecord([]byte(lines[0])).Content) != MaxLineSize ||
		ParseRecord([]byte(lines[1])).Partial || string(ParseRecord([]byte(lines[1])).Content) != "xxxxxxxxxx" {
		t.Errorf("long line records: %d lines", len(lines))
	}
}

func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	t0 := writeLog(t, path, []struct{ stream, data string }{
		{Stdout, "one\n"}, {Stderr, "two\n"}, {Stdout, "thr"}, {Stdout, strings.Repeat("e", MaxLineSize) + "\n"}, {Stdout, "four\n"},
	})
	long := "thr" + strings.Repeat("e", MaxLineSize) + "\n"
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"all", Options{TailLines: -1}, "one\ntwo\n" + long + "four\n"},
		{"tail 1", Options{TailLines: 1}, "four\n"},
		{"tail 2 keeps a split line whole", Options{TailLines: 2}, long + "four\n"},
		{"tail 0", Options{TailLines: 0}, ""},
		{"tail more than there is", Options{TailLines: 10}, "one\ntwo\n" + long + "four\n"},
		{"limit", Options{TailLines: -1, LimitBytes: 6}, "one\ntw"},
		{"since", Options{TailLines: -1, Since: t0.Add(2 * time.Second)}, "two\n" + long + "four\n"},
		{"timestamps", Options{TailLines: 2, Timestamps: true}, "2026-01-02T03:04:08.0000006Z " + long + "2026-01-02T03:04:10.0000006Z four\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Read(context.Background(), path, &out, tc.opts); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got %q\nwant %q", out.String(), tc.want)
			}
		})
	}
}

func TestReadFollowEndsWhenNotAlive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	writeLog(t, path, []struct{ stream, data string }{{Stdout, "one\n"}})
	var alive atomic.Bool
	alive.Store(true)
	pr, pw := newPipe()
	done := make(chan error, 1)
	go func() {
		done <- Read(context.Background(), path, pw, Options{TailLines: -1, Follow: true, PollInterval: 10 * time.Millisecond, Alive: alive.Load})
	}()
	if got := pr.next(t); got != "one\n" {
		t.Fatalf("first = %q", got)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	_ = NewFile(f).record(Stdout, 'F', []byte("two"))
	_ = f.Close()
	if got := pr.next(t); got != "two\n" {
		t.Fatalf("followed = %q", got)
	}
	alive.Store(false)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("follow did not end after the container stopped")
	}
}

func TestParseRecordNonCRI(t *testing.T) {
	r := ParseRecord([]byte("plain text line"))
	if r.Stream != Stdout || r.Partial || string(r.Content) != "plain text line" || !r.Time.IsZero() {
		t.Errorf("non-CRI line parsed as %+v", r)
	}
}

// pipe hands each write to the test.
type pipe struct{ c chan string }

func newPipe() (*pipe, *pipe) { p := &pipe{c: make(chan string, 16)}; return p, p }

func (p *pipe) Write(b []byte) (int, error) { p.c <- string(b); return len(b), nil }

func (p *pipe) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-p.c:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no output")
		return ""
	}
}
