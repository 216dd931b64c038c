package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

type fakePods map[string]*corev1.Pod

func (f fakePods) GetPod(ns, name string) (*corev1.Pod, bool) {
	p, ok := f[ns+"/"+name]
	return p, ok
}

// startPortForwardServer serves the port-forward endpoint (without
// client authentication) for one host-network pod, default/web.
func startPortForwardServer(t *testing.T) string {
	t.Helper()
	pods := fakePods{"default/web": {ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec: corev1.PodSpec{HostNetwork: true}}}
	s := New(Options{Pods: pods, NetNSPath: func(types.UID) string { return "" }})
	mux := http.NewServeMux()
	mux.HandleFunc("/portForward/{namespace}/{pod}", s.portForward)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// startBackend listens on loopback; each connection gets "echo:" and
// everything it sent, once it has finished sending.
func startBackend(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(c)
				_, _ = c.Write(append([]byte("echo:"), b...))
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// closedPort is a loopback port with nothing listening.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}

// spdyDialers are the two ways kubectl reaches the endpoint.
func spdyDialers(t *testing.T, base string) map[string]httpstream.Dialer {
	t.Helper()
	u, err := url.Parse(base + "/portForward/default/web")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: base}
	tunnel, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
	if err != nil {
		t.Fatal(err)
	}
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	plain := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	return map[string]httpstream.Dialer{"SPDY in a WebSocket": tunnel, "plain SPDY": plain}
}

// forwardResult is what came back on a pair's streams.
type forwardResult struct{ data, errs string }

// forwardOnce opens a stream pair for port, sends payload, half-closes
// and reads both streams to their end.
func forwardOnce(t *testing.T, conn httpstream.Connection, requestID int, port, payload string) forwardResult {
	t.Helper()
	h := http.Header{}
	h.Set(corev1.StreamType, corev1.StreamTypeError)
	h.Set(corev1.PortHeader, port)
	h.Set(corev1.PortForwardRequestIDHeader, strconv.Itoa(requestID))
	errStream, err := conn.CreateStream(h)
	if err != nil {
		t.Errorf("creating the error stream: %v", err)
		return forwardResult{}
	}
	_ = errStream.Close()
	errText := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(errStream)
		errText <- string(b)
	}()
	h.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := conn.CreateStream(h)
	if err != nil {
		t.Errorf("creating the data stream: %v", err)
		return forwardResult{}
	}
	if _, err := io.WriteString(data, payload); err != nil {
		t.Errorf("writing: %v", err)
	}
	_ = data.Close()
	got, _ := io.ReadAll(data)
	select {
	case e := <-errText:
		return forwardResult{data: string(got), errs: e}
	case <-time.After(20 * time.Second):
		t.Error("the error stream never ended")
		return forwardResult{data: string(got)}
	}
}

func TestPortForwardSPDY(t *testing.T) {
	base := startPortForwardServer(t)
	open, closed := strconv.Itoa(startBackend(t)), strconv.Itoa(closedPort(t))
	for name, dialer := range spdyDialers(t, base) {
		t.Run(name, func(t *testing.T) {
			conn, protocol, err := dialer.Dial("portforward.k8s.io")
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if protocol != "portforward.k8s.io" {
				t.Errorf("negotiated %q, want portforward.k8s.io", protocol)
			}
			t.Run("a forward carries data both ways", func(t *testing.T) {
				got := forwardOnce(t, conn, 1, open, "ping")
				if got.data != "echo:ping" || got.errs != "" {
					t.Errorf("got %+v, want data echo:ping and no error", got)
				}
			})
			t.Run("concurrent forwards on one connection", func(t *testing.T) {
				var wg sync.WaitGroup
				results := make([]forwardResult, 5)
				for i := range results {
					wg.Add(1)
					go func() {
						defer wg.Done()
						results[i] = forwardOnce(t, conn, 10+i, open, fmt.Sprint("request-", i))
					}()
				}
				wg.Wait()
				for i, got := range results {
					if want := fmt.Sprint("echo:request-", i); got.data != want || got.errs != "" {
						t.Errorf("request %d: got %+v, want data %q", i, got, want)
					}
				}
			})
			t.Run("a port with nothing listening", func(t *testing.T) {
				got := forwardOnce(t, conn, 20, closed, "ping")
				if got.data != "" || !strings.Contains(got.errs, "error forwarding port "+closed) || !strings.Contains(got.errs, "connection refused") {
					t.Errorf("got %+v, want a connection refused error", got)
				}
			})
			t.Run("a port that is not a number", func(t *testing.T) {
				got := forwardOnce(t, conn, 21, "http", "ping")
				if !strings.Contains(got.errs, `unable to parse "http" as a port`) {
					t.Errorf("got %+v, want a parse error", got)
				}
			})
			t.Run("the connection still works", func(t *testing.T) {
				if got := forwardOnce(t, conn, 30, open, "again"); got.data != "echo:again" {
					t.Errorf("got %+v", got)
				}
			})
		})
	}
}

// A stream without a request ID is reset; the connection goes on.
func TestPortForwardSPDYRefusesStreamWithoutRequestID(t *testing.T) {
	base := startPortForwardServer(t)
	open := strconv.Itoa(startBackend(t))
	conn, _, err := spdyDialers(t, base)["plain SPDY"].Dial("portforward.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h := http.Header{}
	h.Set(corev1.StreamType, corev1.StreamTypeData)
	h.Set(corev1.PortHeader, open)
	s, err := conn.CreateStream(h)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(bufio.NewReader(s))
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream without a request ID stayed open")
	}
	if got := forwardOnce(t, conn, 1, open, "ok"); got.data != "echo:ok" {
		t.Errorf("after a refused stream: %+v", got)
	}
}

func TestPortForwardRequests(t *testing.T) {
	base := startPortForwardServer(t)
	for _, tc := range []struct {
		name    string
		path    string
		headers map[string]string
		want    int
		body    string
	}{
		{"no upgrade", "/portForward/default/web", nil, http.StatusBadRequest, "needs an upgrade"},
		{"SPDY without a protocol version", "/portForward/default/web",
			map[string]string{"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}, http.StatusBadRequest, "X-Stream-Protocol-Version is required"},
		{"SPDY with an unknown protocol version", "/portForward/default/web",
			map[string]string{"Connection": "Upgrade", "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "v9.example"}, http.StatusForbidden, "unable to negotiate"},
		{"SPDY to a pod not on this node", "/portForward/default/nope",
			map[string]string{"Connection": "Upgrade", "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "portforward.k8s.io"}, http.StatusNotFound, "not found"},
		{"channel protocol without a port", "/portForward/default/web",
			map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}, http.StatusBadRequest, `"port" is required`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, base+tc.path, nil)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want || !strings.Contains(string(b), tc.body) {
				t.Errorf("got %d %q, want %d with %q", resp.StatusCode, b, tc.want, tc.body)
			}
		})
	}
}
