package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/remotecommand"
)

// spdyStreamProtocols are the remotecommand protocols exec and attach
// speak over SPDY, newest first, as upstream's kubelet
// (remotecommand.SupportedStreamingProtocols): v5 is WebSocket-only.
var spdyStreamProtocols = remotecommand.SupportedStreamingProtocols

// spdyResizeProtocols are the SPDY protocols with a resize stream.
var spdyResizeProtocols = map[string]bool{
	remotecommand.StreamProtocolV4Name: true, remotecommand.StreamProtocolV3Name: true,
}

// newSPDYStream is a stream the client created, and the signal that the
// kubelet's reply to it has gone out (data may follow only then).
type newSPDYStream struct {
	stream    httpstream.Stream
	replySent <-chan struct{}
}

// openSPDYStreams answers an "Upgrade: SPDY/3.1" exec or attach as
// upstream's kubelet does: it agrees on a protocol from the client's
// X-Stream-Protocol-Version headers, upgrades, and waits for the client
// to create one stream for each of the streams q asks for plus the error
// stream (and, with a tty from v3 on, the resize stream), each named by
// its streamType header.
func (s *Server) openSPDYStreams(w http.ResponseWriter, r *http.Request, q execQuery) (*clientStreams, error) {
	if r.Header.Get(httpstream.HeaderProtocolVersion) == "" {
		err := fmt.Errorf("unable to upgrade: %s is required", httpstream.HeaderProtocolVersion)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, err
	}
	protocol, err := httpstream.Handshake(r, w, spdyStreamProtocols)
	if err != nil {
		return nil, err // Handshake answered 403 with the protocols it accepts.
	}
	want := wantedStreams(q, spdyResizeProtocols[protocol])
	created := make(chan newSPDYStream)
	stop := make(chan struct{})
	conn := spdy.NewResponseUpgraderWithPings(spdyPingPeriod).UpgradeResponse(w, r,
		func(stream httpstream.Stream, replySent <-chan struct{}) error {
			if typ := stream.Headers().Get(corev1.StreamType); !want[typ] {
				return fmt.Errorf("unexpected stream type %q", typ)
			}
			select {
			case created <- newSPDYStream{stream, replySent}:
				return nil
			case <-stop:
				return fmt.Errorf("stream %q created after the exec started", stream.Headers().Get(corev1.StreamType))
			}
		})
	if conn == nil {
		return nil, errors.New("the SPDY upgrade failed") // UpgradeResponse answered the client.
	}
	conn.SetIdleTimeout(s.o.StreamIdleTimeout)
	streams, err := waitForSPDYStreams(conn, created, want)
	close(stop)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	gone := make(chan struct{})
	go func() {
		<-conn.CloseChan()
		close(gone)
	}()
	cs := &clientStreams{gone: gone, close: func() { _ = conn.Close() }}
	// Each stream is set only when present: a nil Stream in an
	// interface would not read as absent.
	if st := streams[corev1.StreamTypeStdin]; st != nil {
		cs.stdin = st
	}
	outputs := []httpstream.Stream{}
	if st := streams[corev1.StreamTypeStdout]; st != nil {
		cs.stdout = st
		outputs = append(outputs, st)
	}
	if st := streams[corev1.StreamTypeStderr]; st != nil {
		cs.stderr = st
		outputs = append(outputs, st)
	}
	if st := streams[corev1.StreamTypeResize]; st != nil {
		cs.resize, _ = pumpResizes(st, true, gone)
	}
	errs := streams[corev1.StreamTypeError]
	cs.writeStatus = func(st metav1.Status) {
		// The output ends first, so the client has all of it when the
		// status arrives.
		for _, o := range outputs {
			_ = o.Close()
		}
		writeStatus(errs, protocol == remotecommand.StreamProtocolV4Name, st)
		_ = errs.Close()
	}
	return cs, nil
}

// wantedStreams are the stream types a client creates for q: the error
// stream, the streams it asked for, and the resize stream for a tty when
// the protocol has one.
func wantedStreams(q execQuery, resize bool) map[string]bool {
	want := map[string]bool{corev1.StreamTypeError: true}
	want[corev1.StreamTypeStdin] = q.stdin
	want[corev1.StreamTypeStdout] = q.stdout
	want[corev1.StreamTypeStderr] = q.stderr
	want[corev1.StreamTypeResize] = q.tty && resize
	return want
}

// waitForSPDYStreams collects the streams of want, each once its reply is
// sent, within streamCreationTimeout. A second stream of a type fails
// the exec.
func waitForSPDYStreams(conn httpstream.Connection, created <-chan newSPDYStream, want map[string]bool) (map[string]httpstream.Stream, error) {
	missing := 0
	for _, w := range want {
		if w {
			missing++
		}
	}
	timeout := time.NewTimer(streamCreationTimeout)
	defer timeout.Stop()
	got := map[string]httpstream.Stream{}
	for missing > 0 {
		select {
		case ns := <-created:
			typ := ns.stream.Headers().Get(corev1.StreamType)
			if got[typ] != nil {
				return nil, fmt.Errorf("a second %s stream", typ)
			}
			select {
			case <-ns.replySent:
			case <-timeout.C:
				return nil, errors.New("timed out waiting for client to create streams")
			}
			got[typ] = ns.stream
			missing--
		case <-timeout.C:
			return nil, errors.New("timed out waiting for client to create streams")
		case <-conn.CloseChan():
			return nil, errors.New("the client closed the connection before creating its streams")
		}
	}
	return got, nil
}
