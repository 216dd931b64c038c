package e2e

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"skiff.dev/apiserver/pkg/testserver"
)

// dialLog opens pods/web/log with query over a WebSocket offering
// protocols, as upstream's e2e framework (OpenWebSocketForURL) does.
func dialLog(t *testing.T, ts *testserver.TestServer, query string, protocols ...string) (*websocket.Conn, error) {
	t.Helper()
	tlsConfig, err := rest.TLSConfigFor(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	u := "wss" + strings.TrimPrefix(ts.AdminConfig.Host, "https") + "/api/v1/namespaces/default/pods/web/log?" + query
	cfg, err := websocket.NewConfig(u, "http://localhost")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TlsConfig = tlsConfig
	cfg.Protocol = protocols
	return websocket.DialConfig(cfg)
}

// readAll reads messages until the server closes the connection.
func readAll(t *testing.T, ws *websocket.Conn) []string {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(30 * time.Second))
	var msgs []string
	for {
		var msg []byte
		if err := websocket.Message.Receive(ws, &msg); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("reading: %v; so far %q", err, msgs)
			}
			return msgs
		}
		msgs = append(msgs, string(msg))
	}
}

// pods/log over a WebSocket, as upstream's conformance test "Pods should
// support retrieving logs from the container over websockets" reads it.
func TestPodLogOverWebSocket(t *testing.T) {
	ts := testserver.Start(t, nil)
	fake := podOnFakeKubelet(t, ts)
	const want = "line 1\nline 2\nline 3\n"

	t.Run("base64.binary.k8s.io", func(t *testing.T) {
		ws, err := dialLog(t, ts, "container=app", "base64.binary.k8s.io")
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		if got := ws.Config().Protocol; len(got) != 1 || got[0] != "base64.binary.k8s.io" {
			t.Errorf("subprotocol %v", got)
		}
		msgs := readAll(t, ws)
		if len(msgs) < 2 || msgs[0] != "" {
			t.Fatalf("messages %q, want an empty one first, then the log", msgs)
		}
		var log strings.Builder
		for _, m := range msgs[1:] {
			b, err := base64.StdEncoding.DecodeString(m)
			if err != nil {
				t.Fatalf("message %q is not base64: %v", m, err)
			}
			log.Write(b)
		}
		if log.String() != want {
			t.Errorf("log %q, want %q", log.String(), want)
		}
		if got := fake.LastRequest(); got.Path != "/containerLogs/default/web/app" {
			t.Errorf("kubelet got %s", got)
		}
	})

	for _, protocols := range [][]string{{"binary.k8s.io"}, nil} {
		t.Run("binary: "+strings.Join(protocols, ""), func(t *testing.T) {
			ws, err := dialLog(t, ts, "container=app&tailLines=2", protocols...)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			if got := strings.Join(readAll(t, ws), ""); got != want {
				t.Errorf("log %q, want %q", got, want)
			}
			if got := fake.LastRequest(); got.Query().Get("tailLines") != "2" {
				t.Errorf("kubelet got %s", got)
			}
		})
	}

	// Refusals come before the upgrade, as Status objects.
	for _, tc := range []struct {
		name, query, protocol, want string
	}{
		{"unknown subprotocol", "container=app", "v4.channel.k8s.io", "unsupported WebSocket subprotocols"},
		{"unknown container", "container=nope", "base64.binary.k8s.io", "container nope is not valid for pod web"},
		{"bad option", "container=app&tailLines=-1", "base64.binary.k8s.io", "tailLines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// HTTP/1.1, which has upgrades.
			tlsConfig, err := rest.TLSConfigFor(ts.AdminConfig)
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}, Timeout: 30 * time.Second}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.AdminConfig.Host+"/api/v1/namespaces/default/pods/web/log?"+tc.query, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "websocket")
			req.Header.Set("Sec-WebSocket-Version", "13")
			req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
			req.Header.Set("Sec-WebSocket-Protocol", tc.protocol)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var st metav1.Status
			if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
				t.Fatalf("status %d, body not a Status: %v", resp.StatusCode, err)
			}
			if resp.StatusCode/100 != 4 || st.Code != int32(resp.StatusCode) || !strings.Contains(st.Message, tc.want) {
				t.Errorf("status %d, %+v; want a 4xx Status saying %q", resp.StatusCode, st, tc.want)
			}
		})
	}
}
