package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/portforward"
	"k8s.io/klog/v2"
)

// streamCreationTimeout is how long a client may take to create the
// streams of an exec or attach, or the second stream of a port-forward
// pair after the first, as upstream's.
const streamCreationTimeout = 30 * time.Second

// spdyPingPeriod keeps idle SPDY connections (and proxies on the way)
// alive, as upstream's kubelet.
const spdyPingPeriod = 5 * time.Minute

// portForwardSPDY serves upstream's SPDY port-forward protocol over a
// plain "Upgrade: SPDY/3.1" connection.
func (s *Server) portForwardSPDY(w http.ResponseWriter, r *http.Request, p *corev1.Pod, netns string) {
	if r.Header.Get(httpstream.HeaderProtocolVersion) == "" {
		http.Error(w, fmt.Sprintf("unable to upgrade: %s is required", httpstream.HeaderProtocolVersion), http.StatusBadRequest)
		return
	}
	if _, err := httpstream.Handshake(r, w, []string{portforward.PortForwardV1Name}); err != nil {
		return // Handshake answered 403 with the protocols it accepts.
	}
	streams := make(chan httpstream.Stream, 1)
	conn := spdy.NewResponseUpgraderWithPings(spdyPingPeriod).UpgradeResponse(w, r, queueStream(streams))
	if conn == nil {
		return // UpgradeResponse answered the client.
	}
	s.serveStreamPairs(r.Context(), conn, streams, p, netns)
}

// portForwardTunnel serves the SPDY port-forward protocol tunnelled in a
// WebSocket (subprotocol SPDY/3.1+portforward.k8s.io).
func (s *Server) portForwardTunnel(w http.ResponseWriter, r *http.Request, p *corev1.Pod, netns string) {
	tunnel, err := upgradeTunnel(w, r, TunnelingPortForwardProtocol)
	if err != nil {
		klog.FromContext(r.Context()).V(2).Info("Upgrading a tunnelled port-forward request failed", "pod", klog.KObj(p), "err", err)
		return
	}
	streams := make(chan httpstream.Stream, 1)
	conn, err := spdy.NewServerConnectionWithPings(tunnel, queueStream(streams), spdyPingPeriod)
	if err != nil {
		klog.FromContext(r.Context()).Error(err, "Starting SPDY in a WebSocket tunnel", "pod", klog.KObj(p))
		_ = tunnel.Close()
		return
	}
	s.serveStreamPairs(r.Context(), conn, streams, p, netns)
}

// queueStream is the SPDY connection's new-stream handler: it accepts
// every stream and hands it to serveStreamPairs.
func queueStream(streams chan<- httpstream.Stream) httpstream.NewStreamHandler {
	return func(stream httpstream.Stream, _ <-chan struct{}) error {
		streams <- stream
		return nil
	}
}

// streamPair is a data stream and an error stream of one forwarded
// connection, named by the client's requestID header.
type streamPair struct {
	requestID   string
	data, errs  httpstream.Stream
	complete    chan struct{}
	completeSet sync.Once
}

// add files stream as the pair's data or error stream.
func (sp *streamPair) add(stream httpstream.Stream) error {
	switch typ := stream.Headers().Get(corev1.StreamType); typ {
	case corev1.StreamTypeData:
		if sp.data != nil {
			return fmt.Errorf("request %s: a data stream exists already", sp.requestID)
		}
		sp.data = stream
	case corev1.StreamTypeError:
		if sp.errs != nil {
			return fmt.Errorf("request %s: an error stream exists already", sp.requestID)
		}
		sp.errs = stream
	default:
		return fmt.Errorf("request %s: unknown stream type %q", sp.requestID, typ)
	}
	if sp.data != nil && sp.errs != nil {
		sp.completeSet.Do(func() { close(sp.complete) })
	}
	return nil
}

// pairForwarder runs the forwards of one SPDY connection.
type pairForwarder struct {
	s     *Server
	conn  httpstream.Connection
	pod   *corev1.Pod
	netns string

	mu    sync.Mutex
	pairs map[string]*streamPair
}

// serveStreamPairs forwards every complete stream pair of conn until conn
// closes, then waits for the forwards to end.
func (s *Server) serveStreamPairs(ctx context.Context, conn httpstream.Connection, streams <-chan httpstream.Stream, p *corev1.Pod, netns string) {
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(p))
	ctx, cancel := context.WithCancel(klog.NewContext(ctx, logger))
	defer cancel()
	defer conn.Close()
	conn.SetIdleTimeout(s.o.StreamIdleTimeout)
	f := &pairForwarder{s: s, conn: conn, pod: p, netns: netns, pairs: map[string]*streamPair{}}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-conn.CloseChan():
			logger.V(4).Info("Port-forward connection closed")
			cancel()
			return
		case stream := <-streams:
			sp, isNew, err := f.pairFor(stream)
			if err != nil {
				logger.V(2).Info("Refused a port-forward stream", "err", err)
				_ = stream.Reset()
				continue
			}
			if isNew {
				wg.Add(1)
				go func() {
					defer wg.Done()
					f.run(ctx, sp)
				}()
			}
		}
	}
}

// pairFor adds stream to its pair, creating the pair for a new requestID.
func (f *pairForwarder) pairFor(stream httpstream.Stream) (*streamPair, bool, error) {
	id := stream.Headers().Get(corev1.PortForwardRequestIDHeader)
	if id == "" {
		return nil, false, fmt.Errorf("the %s header is missing", corev1.PortForwardRequestIDHeader)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	sp, ok := f.pairs[id]
	if !ok {
		sp = &streamPair{requestID: id, complete: make(chan struct{})}
		f.pairs[id] = sp
	}
	return sp, !ok, sp.add(stream)
}

// run waits for the pair to be complete, forwards it, and forgets it.
func (f *pairForwarder) run(ctx context.Context, sp *streamPair) {
	defer f.remove(sp)
	timer := time.NewTimer(streamCreationTimeout)
	defer timer.Stop()
	select {
	case <-sp.complete:
	case <-timer.C:
		if errs := f.errorStream(sp); errs != nil {
			_, _ = fmt.Fprintf(errs, "timed out waiting for the data and error streams of request %s", sp.requestID)
		}
		return
	case <-ctx.Done():
		return
	}
	if err := f.forwardPair(ctx, sp); err != nil {
		klog.FromContext(ctx).V(2).Info("Port forward failed", "requestID", sp.requestID, "err", err)
		_, _ = io.WriteString(sp.errs, err.Error())
	}
}

func (f *pairForwarder) errorStream(sp *streamPair) httpstream.Stream {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sp.errs
}

// remove closes the pair's streams and forgets them.
func (f *pairForwarder) remove(sp *streamPair) {
	f.mu.Lock()
	delete(f.pairs, sp.requestID)
	streams := []httpstream.Stream{}
	for _, s := range []httpstream.Stream{sp.data, sp.errs} {
		if s != nil {
			_ = s.Close()
			streams = append(streams, s)
		}
	}
	f.mu.Unlock()
	f.conn.RemoveStreams(streams...)
}

// forwardPair connects the pair's data stream to the port its headers
// name, inside the pod's network namespace.
func (f *pairForwarder) forwardPair(ctx context.Context, sp *streamPair) error {
	portText := sp.data.Headers().Get(corev1.PortHeader)
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return fmt.Errorf("unable to parse %q as a port: the %s header must be a port number", portText, corev1.PortHeader)
	}
	klog.FromContext(ctx).V(4).Info("Forwarding a port", "port", port, "requestID", sp.requestID)
	conn, err := dialIn(ctx, f.netns, hostPort(int32(port)))
	if err != nil {
		return fmt.Errorf("error forwarding port %d to pod %s, uid %v: %w", port, f.pod.Name, f.pod.UID, err)
	}
	defer conn.Close()
	proxyStream(ctx, sp.data, conn)
	return nil
}

// proxyStream copies between a client stream and a connection to the
// pod as a TCP proxy does: when the client finishes sending, the pod's
// side is half-closed and its answer still flows back; when the pod's
// side ends, or ctx does, the forward ends.
func proxyStream(ctx context.Context, stream io.ReadWriter, conn net.Conn) {
	podDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(conn, stream)
		if tc, ok := conn.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		}
	}()
	go func() {
		defer close(podDone)
		_, _ = io.Copy(stream, conn)
	}()
	select {
	case <-podDone:
	case <-ctx.Done():
		// Closing the connection ends both copies.
		_ = conn.Close()
		<-podDone
	}
}
