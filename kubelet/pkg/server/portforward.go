package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/klog/v2"
)

// parsePorts reads the port query parameters (each may list several,
// comma-separated, as upstream).
func parsePorts(r *http.Request) ([]uint16, error) {
	var ports []uint16
	for _, v := range r.URL.Query()["port"] {
		for _, s := range strings.Split(v, ",") {
			n, err := strconv.ParseUint(s, 10, 16)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("unable to parse %q as a port", s)
			}
			ports = append(ports, uint16(n))
		}
	}
	if len(ports) == 0 {
		return nil, fmt.Errorf("query parameter \"port\" is required")
	}
	return ports, nil
}

// portForward forwards the pod's ports in one of three protocols, as
// upstream's kubelet: SPDY tunnelled in a WebSocket (kubectl's default
// since 1.31), plain SPDY (older clients, and kubectl's fallback), and the
// WebSocket channel protocol.
func (s *Server) portForward(w http.ResponseWriter, r *http.Request) {
	websocket := wsstream.IsWebSocketRequest(r)
	tunnel := websocket && wsstream.IsWebSocketRequestWithTunnelingProtocol(r)
	spdyUpgrade := !websocket && isSPDYUpgrade(r)
	var ports []uint16
	switch {
	case !websocket && !spdyUpgrade:
		http.Error(w, "port forwarding needs an upgrade: SPDY/3.1, or a WebSocket ("+TunnelingPortForwardProtocol+" or v4.channel.k8s.io)", http.StatusBadRequest)
		return
	case websocket && !tunnel:
		// The channel protocol takes its ports from the query; SPDY
		// clients name a port in each stream's headers.
		var err error
		if ports, err = parsePorts(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	p, err := s.lookupPod(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	netns := ""
	if !p.Spec.HostNetwork {
		netns = s.o.NetNSPath(p.UID)
	}
	switch {
	case tunnel:
		s.portForwardTunnel(w, r, p, netns)
	case spdyUpgrade:
		s.portForwardSPDY(w, r, p, netns)
	default:
		s.portForwardChannels(w, r, p, netns, ports)
	}
}

// isSPDYUpgrade says whether r asks to upgrade to SPDY/3.1.
func isSPDYUpgrade(r *http.Request) bool {
	return httpstream.IsUpgradeRequest(r) && strings.EqualFold(r.Header.Get(httpstream.HeaderUpgrade), spdy.HeaderSpdy31)
}

// portForwardChannels forwards ports over the WebSocket channel
// protocol: for port i, channel 2i carries data and 2i+1 errors.
func (s *Server) portForwardChannels(w http.ResponseWriter, r *http.Request, p *corev1.Pod, netns string, ports []uint16) {
	channels := make([]wsstream.ChannelType, 2*len(ports))
	for i := range channels {
		channels[i] = wsstream.ReadWriteChannel
	}
	conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		"":                         {Binary: true, Channels: channels},
		"v4.channel.k8s.io":        {Binary: true, Channels: channels},
		"v4.base64.channel.k8s.io": {Binary: false, Channels: channels},
	})
	conn.SetIdleTimeout(s.o.StreamIdleTimeout)
	_, streams, err := conn.Open(w, r)
	if err != nil {
		klog.FromContext(r.Context()).Error(err, "Upgrading a port-forward request", "pod", klog.KObj(p))
		return
	}
	defer conn.Close()
	var wg sync.WaitGroup
	for i, port := range ports {
		data, errs := streams[2*i], streams[2*i+1]
		prefix := binary.LittleEndian.AppendUint16(nil, port)
		if _, err := data.Write(prefix); err != nil {
			return
		}
		if _, err := errs.Write(prefix); err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := forward(r.Context(), netns, port, data); err != nil {
				msg := fmt.Sprintf("error forwarding port %d to pod %s: %v", port, p.Name, err)
				_, _ = errs.Write([]byte(msg))
			}
			_ = errs.Close()
		}()
	}
	wg.Wait()
}

// forward connects stream to 127.0.0.1:port in the network namespace
// (the host's when empty) until either side ends.
func forward(ctx context.Context, netns string, port uint16, stream io.ReadWriteCloser) error {
	conn, err := dialIn(ctx, netns, hostPort(int32(port)))
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(conn, stream)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(stream, conn)
		done <- struct{}{}
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}

// dialIn dials addr over TCP from inside the network namespace at path:
// the socket is created on an OS thread switched into the namespace,
// which keeps the socket there; the thread switches back afterwards, or
// is thrown away when it cannot.
func dialIn(ctx context.Context, path, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if path == "" {
		return d.DialContext(ctx, "tcp", addr)
	}
	type result struct {
		conn net.Conn
		err  error
	}
	res := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		restored := false
		defer func() {
			if restored {
				runtime.UnlockOSThread()
			}
		}()
		conn, err := dialInLocked(ctx, &d, path, addr, &restored)
		res <- result{conn, err}
	}()
	r := <-res
	return r.conn, r.err
}

func dialInLocked(ctx context.Context, d *net.Dialer, path, addr string, restored *bool) (net.Conn, error) {
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, err
	}
	defer orig.Close()
	target, err := os.Open(path)
	if err != nil {
		*restored = true
		return nil, fmt.Errorf("opening the pod's network namespace: %w", err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		*restored = true
		return nil, fmt.Errorf("entering the pod's network namespace: %w", err)
	}
	conn, dialErr := d.DialContext(ctx, "tcp", addr)
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err == nil {
		*restored = true
	}
	return conn, dialErr
}
