package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/apimachinery/pkg/util/portforward"
)

// TunnelingPortForwardProtocol is the WebSocket subprotocol with which
// kubectl (client-go's tunneling dialer; the default since 1.31) asks for SPDY
// port forwarding inside a WebSocket: every binary message carries bytes
// of one SPDY connection.
const TunnelingPortForwardProtocol = portforward.WebsocketsSPDYTunnelingPortForwardV1

// tunnelCloseTimeout bounds how long closing a tunnel waits to send its
// WebSocket close message.
const tunnelCloseTimeout = time.Second

// upgradeTunnel answers a WebSocket upgrade that asks for one of
// protocols and returns the connection as a byte stream. On failure the
// client has had its answer (an HTTP error) already.
func upgradeTunnel(w http.ResponseWriter, r *http.Request, protocols ...string) (*tunnelConn, error) {
	u := websocket.Upgrader{
		Subprotocols:    protocols,
		ReadBufferSize:  32 * 1024,
		WriteBufferSize: 32 * 1024,
		// Callers are authenticated by their client certificate, not
		// by a browser's origin.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	if !slices.ContainsFunc(websocket.Subprotocols(r), func(p string) bool { return slices.Contains(protocols, p) }) {
		err := fmt.Errorf("unable to upgrade: the client offered none of the subprotocols %v", protocols)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, err
	}
	ws, err := u.Upgrade(w, r, nil)
	if err != nil {
		return nil, err
	}
	return newTunnelConn(ws), nil
}

// tunnelConn is a net.Conn over a WebSocket: what is written goes out as
// one binary message per Write, and Read returns the bytes of the binary
// messages received, in order, regardless of how they were split. A
// normal close of the WebSocket reads as io.EOF. This is the server side
// of client-go's TunnelingConnection.
type tunnelConn struct {
	ws *websocket.Conn

	readMu sync.Mutex
	msg    io.Reader // the message being read, nil between messages

	writeMu   sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

var _ net.Conn = (*tunnelConn)(nil)

func newTunnelConn(ws *websocket.Conn) *tunnelConn { return &tunnelConn{ws: ws} }

// Read reads from the current binary message, moving on to the next one
// when it is used up.
func (c *tunnelConn) Read(p []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	for {
		if c.msg == nil {
			typ, r, err := c.ws.NextReader()
			if err != nil {
				if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
					return 0, io.EOF
				}
				return 0, err
			}
			if typ != websocket.BinaryMessage {
				return 0, fmt.Errorf("tunnel: received a WebSocket message of type %d, want binary", typ)
			}
			c.msg = r
		}
		n, err := c.msg.Read(p)
		if errors.Is(err, io.EOF) {
			c.msg = nil
			if n == 0 {
				continue
			}
			return n, nil
		}
		return n, err
	}
}

// Write sends p as one binary message. Writes are serialised: a
// WebSocket allows one writer at a time.
func (c *tunnelConn) Write(p []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close sends a normal-closure message and closes the connection, once.
func (c *tunnelConn) Close() error {
	c.closeOnce.Do(func() {
		msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
		werr := c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(tunnelCloseTimeout))
		c.closeErr = c.ws.Close()
		if c.closeErr == nil && werr != nil && !errors.Is(werr, websocket.ErrCloseSent) {
			c.closeErr = werr
		}
	})
	return c.closeErr
}

// Subprotocol is the WebSocket subprotocol agreed on.
func (c *tunnelConn) Subprotocol() string { return c.ws.Subprotocol() }

func (c *tunnelConn) LocalAddr() net.Addr  { return c.ws.LocalAddr() }
func (c *tunnelConn) RemoteAddr() net.Addr { return c.ws.RemoteAddr() }

func (c *tunnelConn) SetDeadline(t time.Time) error {
	return errors.Join(c.ws.SetReadDeadline(t), c.ws.SetWriteDeadline(t))
}
func (c *tunnelConn) SetReadDeadline(t time.Time) error  { return c.ws.SetReadDeadline(t) }
func (c *tunnelConn) SetWriteDeadline(t time.Time) error { return c.ws.SetWriteDeadline(t) }
