package server

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/tools/portforward"
)

// startTunnelServer serves one WebSocket tunnel per request with handle.
func startTunnelServer(t *testing.T, handle func(*tunnelConn)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := upgradeTunnel(w, r, TunnelingPortForwardProtocol)
		if err != nil {
			return
		}
		defer c.Close()
		handle(c)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func dialTunnel(t *testing.T, url string, protocols ...string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 5 * time.Second}
	ws, resp, err := d.Dial(url, nil)
	if err == nil {
		t.Cleanup(func() { _ = ws.Close() })
	}
	return ws, resp, err
}

// The tunnel carries a byte stream both ways, whatever the message
// boundaries; client-go's TunnelingConnection is the client.
func TestTunnelConnEcho(t *testing.T) {
	url := startTunnelServer(t, func(c *tunnelConn) {
		_, _ = io.Copy(c, c)
	})
	ws, _, err := dialTunnel(t, url, TunnelingPortForwardProtocol)
	if err != nil {
		t.Fatal(err)
	}
	if got := ws.Subprotocol(); got != TunnelingPortForwardProtocol {
		t.Fatalf("subprotocol %q, want %q", got, TunnelingPortForwardProtocol)
	}
	client := portforward.NewTunnelingConnection("client", ws)
	_ = client.SetDeadline(time.Now().Add(10 * time.Second))
	for _, tc := range []struct {
		name   string
		writes []string
	}{
		{"one message", []string{"hello"}},
		{"several messages", []string{"a", "bc", "def"}},
		{"a large message", []string{strings.Repeat("x", 100_000)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := strings.Join(tc.writes, "")
			for _, w := range tc.writes {
				if _, err := client.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			got := make([]byte, len(want))
			if _, err := io.ReadFull(client, got); err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("echoed %d bytes %.20q..., want %d bytes %.20q...", len(got), got, len(want), want)
			}
		})
	}
}

// A normal close of the WebSocket reads as the end of the stream.
func TestTunnelConnCloseIsEOF(t *testing.T) {
	got := make(chan []byte, 1)
	errs := make(chan error, 1)
	url := startTunnelServer(t, func(c *tunnelConn) {
		b, err := io.ReadAll(c)
		got <- b
		errs <- err
	})
	ws, _, err := dialTunnel(t, url, TunnelingPortForwardProtocol)
	if err != nil {
		t.Fatal(err)
	}
	client := portforward.NewTunnelingConnection("client", ws)
	if _, err := client.Write([]byte("last words")); err != nil {
		t.Fatal(err)
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if err := <-errs; err != nil || string(b) != "last words" {
			t.Errorf("read %q, %v; want \"last words\" and io.EOF", b, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the end of the stream")
	}
}

// Text messages are not part of the protocol.
func TestTunnelConnRejectsText(t *testing.T) {
	errs := make(chan error, 1)
	url := startTunnelServer(t, func(c *tunnelConn) {
		_, err := c.Read(make([]byte, 10))
		errs <- err
	})
	ws, _, err := dialTunnel(t, url, TunnelingPortForwardProtocol)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteMessage(websocket.TextMessage, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if err == nil || errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "want binary") {
			t.Errorf("reading a text message: %v, want an error about the message type", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no read error")
	}
}

// A client that offers no tunnelling protocol is refused.
func TestTunnelNeedsProtocol(t *testing.T) {
	url := startTunnelServer(t, func(c *tunnelConn) { t.Error("a tunnel was opened without the protocol") })
	_, resp, err := dialTunnel(t, url, "v4.channel.k8s.io")
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("dialing without the protocol: %v, response %v; want 400", err, resp)
	}
}

func TestTunnelConnWritesAreMessages(t *testing.T) {
	url := startTunnelServer(t, func(c *tunnelConn) {
		_, _ = c.Write([]byte("one"))
		_, _ = c.Write([]byte("two"))
	})
	ws, _, err := dialTunnel(t, url, TunnelingPortForwardProtocol)
	if err != nil {
		t.Fatal(err)
	}
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got [][]byte
	for len(got) < 2 {
		typ, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if typ != websocket.BinaryMessage {
			t.Errorf("message type %d, want binary", typ)
		}
		got = append(got, msg)
	}
	if !bytes.Equal(got[0], []byte("one")) || !bytes.Equal(got[1], []byte("two")) {
		t.Errorf("messages %q, want [one two]", got)
	}
}
