package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/client-go/util/exec"

	"skiff.dev/kubelet/pkg/pod"
)

// scriptedExec runs the commands of these tests:
//
//	greet      "out" on stdout, "err" on stderr
//	cat        stdin to stdout
//	exit N     exits with N
//	broken     fails to start
//	sizes N    the first N terminal sizes as "WxH" lines on stdout
func scriptedExec(_ context.Context, o pod.ExecOptions) (int32, error) {
	switch o.Cmd[0] {
	case "greet":
		fmt.Fprint(o.Stdout, "out")
		fmt.Fprint(o.Stderr, "err")
	case "cat":
		_, err := io.Copy(o.Stdout, o.Stdin)
		return 0, err
	case "exit":
		var code int32
		_, _ = fmt.Sscan(o.Cmd[1], &code)
		return code, nil
	case "broken":
		return 0, errors.New("no such binary")
	case "sizes":
		var n int
		_, _ = fmt.Sscan(o.Cmd[1], &n)
		for size := range o.Resize {
			fmt.Fprintf(o.Stdout, "%dx%d\n", size.Width, size.Height)
			if n--; n == 0 {
				break
			}
		}
	}
	return 0, nil
}

// spdyStream runs an exec (or attach) at path with query over SPDY,
// offering protocols (client-go's default list when none).
func spdyStream(t *testing.T, base, path, query string, protocols []string, opts remotecommand.StreamOptions) error {
	t.Helper()
	u, err := url.Parse(base + path + "?" + query)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: base}
	var ex remotecommand.Executor
	if len(protocols) == 0 {
		ex, err = remotecommand.NewSPDYExecutor(cfg, http.MethodPost, u)
	} else {
		transport, upgrader, terr := spdy.RoundTripperFor(cfg)
		if terr != nil {
			t.Fatal(terr)
		}
		ex, err = remotecommand.NewSPDYExecutorForProtocols(transport, upgrader, http.MethodPost, u, protocols...)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return ex.StreamWithContext(ctx, opts)
}

// sizeQueue hands out its sizes, then ends the resize stream.
type sizeQueue struct {
	sizes chan remotecommand.TerminalSize
}

func (q sizeQueue) Next() *remotecommand.TerminalSize {
	s, ok := <-q.sizes
	if !ok {
		return nil
	}
	return &s
}

func TestExecOverSPDY(t *testing.T) {
	f := startAttachServer(t, corev1.Container{Name: "main"})
	f.runtime.exec = scriptedExec
	const path = "/exec/default/app/main"
	for _, proto := range []string{"", remotecommandconsts.StreamProtocolV4Name, remotecommandconsts.StreamProtocolV3Name,
		remotecommandconsts.StreamProtocolV2Name, remotecommandconsts.StreamProtocolV1Name} {
		var protocols []string
		name := "client-go's default protocols"
		if proto != "" {
			protocols, name = []string{proto}, proto
		}
		// v1 clients never end stdin and miss a failure that comes after
		// the output; v1 and v2 have no resize stream.
		old := proto == remotecommandconsts.StreamProtocolV1Name
		resize := proto != remotecommandconsts.StreamProtocolV1Name && proto != remotecommandconsts.StreamProtocolV2Name
		t.Run(name, func(t *testing.T) {
			t.Run("stdout and stderr", func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				err := spdyStream(t, f.url, path, "command=greet&stdout=1&stderr=1", protocols, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
				if err != nil || stdout.String() != "out" || stderr.String() != "err" {
					t.Errorf("err %v, stdout %q, stderr %q; want out and err", err, stdout.String(), stderr.String())
				}
			})
			if old {
				return
			}
			t.Run("stdin", func(t *testing.T) {
				var stdout bytes.Buffer
				err := spdyStream(t, f.url, path, "command=cat&stdin=true&stdout=true", protocols,
					remotecommand.StreamOptions{Stdin: strings.NewReader("hello stdin"), Stdout: &stdout})
				if err != nil || stdout.String() != "hello stdin" {
					t.Errorf("err %v, stdout %q; want stdin echoed", err, stdout.String())
				}
			})
			t.Run("non-zero exit code", func(t *testing.T) {
				err := spdyStream(t, f.url, path, "command=exit&command=3&stdout=true", protocols, remotecommand.StreamOptions{Stdout: io.Discard})
				var exitErr exec.CodeExitError
				switch {
				case proto == "" || proto == remotecommandconsts.StreamProtocolV4Name:
					if !errors.As(err, &exitErr) || exitErr.Code != 3 {
						t.Errorf("err %#v, want a CodeExitError with code 3", err)
					}
				case err == nil || !strings.Contains(err.Error(), "exit code 3"):
					t.Errorf("err %v, want the exit code in its text", err)
				}
			})
			t.Run("a command that does not start", func(t *testing.T) {
				err := spdyStream(t, f.url, path, "command=broken&stdout=true", protocols, remotecommand.StreamOptions{Stdout: io.Discard})
				if err == nil || !strings.Contains(err.Error(), "no such binary") {
					t.Errorf("err %v, want the runtime's error", err)
				}
			})
			if !resize {
				return
			}
			t.Run("tty with resize", func(t *testing.T) {
				q := sizeQueue{sizes: make(chan remotecommand.TerminalSize, 2)}
				q.sizes <- remotecommand.TerminalSize{Width: 80, Height: 24}
				q.sizes <- remotecommand.TerminalSize{Width: 120, Height: 40}
				var stdout bytes.Buffer
				err := spdyStream(t, f.url, path, "command=sizes&command=2&stdout=true&tty=true", protocols,
					remotecommand.StreamOptions{Stdout: &stdout, Tty: true, TerminalSizeQueue: q})
				if err != nil || stdout.String() != "80x24\n120x40\n" {
					t.Errorf("err %v, stdout %q; want both sizes", err, stdout.String())
				}
			})
		})
	}
}

func TestAttachOverSPDY(t *testing.T) {
	f := startAttachServer(t, corev1.Container{Name: "main"})
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- spdyStream(t, f.url, "/attach/default/app/main", "stdin=true&stdout=true&stderr=true", nil,
			remotecommand.StreamOptions{Stdin: strings.NewReader("ignored"), Stdout: &stdout, Stderr: &stderr})
	}()
	// What the container writes from now on reaches the client; keep
	// writing until it does, as the attach may not have started yet.
	for i := 0; !strings.Contains(stdout.String(), "hello") || !strings.Contains(stderr.String(), "oops"); i++ {
		if i == 400 {
			t.Fatalf("no output after %d writes: stdout %q, stderr %q", i, stdout.String(), stderr.String())
		}
		if _, err := f.log.WriteString("2026-01-01T00:00:01Z stdout F hello\n2026-01-01T00:00:01Z stderr F oops\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("attach ended early: %v", err)
		case <-time.After(attachPollInterval):
		}
	}
	if _, err := f.log.WriteString("2026-01-01T00:00:02Z stdout F bye\n"); err != nil {
		t.Fatal(err)
	}
	f.runtime.setState(pod.StateExited)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("attach: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the attach did not end when the container exited")
	}
	if !strings.HasSuffix(stdout.String(), "hello\nbye\n") || strings.Contains(stdout.String(), "before") || strings.Contains(stdout.String(), "oops") {
		t.Errorf("stdout %q, want hello lines then bye, without earlier output or stderr", stdout.String())
	}
}

func TestSPDYRefusals(t *testing.T) {
	f := startAttachServer(t, corev1.Container{Name: "main"})
	f.runtime.exec = scriptedExec
	for _, tc := range []struct {
		name     string
		path     string
		protocol string
		want     int
	}{
		{"no protocol header", "/exec/default/app/main?command=greet&stdout=1", "", http.StatusBadRequest},
		{"an unknown protocol", "/exec/default/app/main?command=greet&stdout=1", "v9.channel.k8s.io", http.StatusForbidden},
		{"v5 is WebSocket-only", "/exec/default/app/main?command=greet&stdout=1", remotecommandconsts.StreamProtocolV5Name, http.StatusForbidden},
		{"no command", "/exec/default/app/main?stdout=1", remotecommandconsts.StreamProtocolV4Name, http.StatusBadRequest},
		{"an unknown container", "/exec/default/app/other?command=greet&stdout=1", remotecommandconsts.StreamProtocolV4Name, http.StatusNotFound},
		{"attach without streams", "/attach/default/app/main", remotecommandconsts.StreamProtocolV4Name, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, f.url+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set(httpstream.HeaderConnection, httpstream.HeaderUpgrade)
			req.Header.Set(httpstream.HeaderUpgrade, "SPDY/3.1")
			if tc.protocol != "" {
				req.Header.Set(httpstream.HeaderProtocolVersion, tc.protocol)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, body, tc.want)
			}
		})
	}
}
