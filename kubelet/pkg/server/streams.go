package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"

	"skiff.dev/kubelet/pkg/pod"
)

// clientStreams are the streams of an exec or attach to its client,
// whichever protocol carries them. A stream the client did not ask for
// is nil.
type clientStreams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// resize delivers the terminal sizes the client sends; nil without
	// a tty (or with a protocol that has no resize stream).
	resize <-chan pod.TerminalSize
	// gone is closed when the client's connection ends.
	gone <-chan struct{}
	// writeStatus sends the final status on the error stream, after the
	// output.
	writeStatus func(metav1.Status)
	// close ends the connection.
	close func()
}

// untilGone returns a context that ends with parent or when the client
// leaves, whichever comes first.
func (cs *clientStreams) untilGone(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-cs.gone:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// upgradeHelp says which upgrades exec and attach accept.
const upgradeHelp = "a WebSocket (v5.channel.k8s.io, v4.channel.k8s.io) or SPDY/3.1 (v4.channel.k8s.io, v3, v2, channel.k8s.io)"

// isStreamUpgrade says whether r asks for an upgrade that exec and attach
// speak.
func isStreamUpgrade(r *http.Request) bool {
	return wsstream.IsWebSocketRequest(r) || isSPDYUpgrade(r)
}

// openStreams upgrades r, an exec or attach with the streams q asks
// for, to a WebSocket or SPDY connection and returns its streams. On
// failure the client has had its answer already.
func (s *Server) openStreams(w http.ResponseWriter, r *http.Request, q execQuery) (*clientStreams, error) {
	if isSPDYUpgrade(r) {
		return s.openSPDYStreams(w, r, q)
	}
	return s.openWebSocketStreams(w, r, q)
}

// openWebSocketStreams opens the channels of the WebSocket protocols.
func (s *Server) openWebSocketStreams(w http.ResponseWriter, r *http.Request, q execQuery) (*clientStreams, error) {
	conn := wsstream.NewConn(execProtocols(q))
	conn.SetIdleTimeout(s.o.StreamIdleTimeout)
	protocol, streams, err := conn.Open(w, r)
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	cs := &clientStreams{
		writeStatus: func(st metav1.Status) { writeStatus(streams[errorChannel], statusProtocols[protocol], st) },
		close: func() {
			close(stop)
			_ = conn.Close()
		},
	}
	if q.stdin {
		cs.stdin = streams[stdinChannel]
	}
	if q.stdout {
		cs.stdout = streams[stdoutChannel]
	}
	if q.stderr {
		cs.stderr = streams[stderrChannel]
	}
	// Every channel ends when the WebSocket does: the end of the resize
	// channel says the client left.
	resize, gone := pumpResizes(streams[resizeChannel], q.tty, stop)
	if q.tty {
		cs.resize = resize
	}
	cs.gone = gone
	return cs, nil
}

// pumpResizes reads the resize stream r until it ends, and then closes
// gone. With decode, it delivers each JSON terminal size on the first
// channel (closed at the end) until stop is closed; else, and after a
// size it cannot read, it discards what comes.
func pumpResizes(r io.Reader, decode bool, stop <-chan struct{}) (<-chan pod.TerminalSize, <-chan struct{}) {
	sizes := make(chan pod.TerminalSize)
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		defer close(sizes)
		dec := json.NewDecoder(r)
		for decode {
			var size struct{ Width, Height uint16 }
			if err := dec.Decode(&size); err != nil {
				break
			}
			select {
			case sizes <- pod.TerminalSize{Width: size.Width, Height: size.Height}:
			case <-stop:
				decode = false
			}
		}
		_, _ = io.Copy(io.Discard, io.MultiReader(dec.Buffered(), r))
	}()
	return sizes, gone
}

// writeStatus sends the final status on the error channel: as JSON for
// v4 and later, as plain text (failures only) before.
func writeStatus(w io.Writer, asJSON bool, st metav1.Status) {
	st.TypeMeta = metav1.TypeMeta{}
	if asJSON {
		b, err := json.Marshal(st)
		if err == nil {
			_, _ = w.Write(b)
		}
		return
	}
	if st.Status != metav1.StatusSuccess {
		_, _ = w.Write([]byte(st.Message))
	}
}
