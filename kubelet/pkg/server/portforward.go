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

// portForward forwards the pod's ports over a WebSocket: for port i,
// channel 2i carries data and 2i+1 errors.
func (s *Server) portForward(w http.ResponseWriter, r *http.Request) {
	ports, err := parsePorts(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !wsstream.IsWebSocketRequest(r) {
		http.Error(w, "port forwarding needs a WebSocket upgrade (v4.channel.k8s.io); SPDY is not served", http.StatusBadRequest)
		return
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
