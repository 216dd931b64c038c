package fakekubelet

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"

	"skiff.dev/component-base/certs"
)

// ClientCommonName is the only client the fake accepts: the API server.
const ClientCommonName = certs.APIServerKubeletClientCommonName

// Channels of the streaming protocols (channel.k8s.io).
const (
	stdinChannel = iota
	stdoutChannel
	stderrChannel
	errorChannel
	resizeChannel
)

// Kubelet is a running fake kubelet.
type Kubelet struct {
	// URL is https://127.0.0.1:<Port>.
	URL  string
	Port int
	// Lines are what /containerLogs answers, one per line.
	Lines []string
	// FollowNext releases the next line of a follow=true log stream: the
	// fake writes Lines[0], then one further line per value received.
	FollowNext chan string
	// FollowDone is closed when a follow=true stream ends because the
	// client went away.
	FollowDone chan struct{}

	srv      *httptest.Server
	mu       sync.Mutex
	requests []*url.URL
	ports    []string
	once     sync.Once
}

// Start starts a fake kubelet whose serving certificate is issued by the
// CA in pkiDir; it stops at the end of the test.
func Start(t testing.TB, pkiDir string) *Kubelet {
	t.Helper()
	ca, err := certs.LoadCA(pkiDir)
	if err != nil {
		t.Fatalf("fake kubelet: loading the CA: %v", err)
	}
	kp, err := certs.IssueServingCert(ca, "fake-kubelet", nil, []string{"127.0.0.1"})
	if err != nil {
		t.Fatalf("fake kubelet: issuing the serving certificate: %v", err)
	}
	k := &Kubelet{Lines: []string{"line 1", "line 2", "line 3"}, FollowNext: make(chan string), FollowDone: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", k.containerLogs)
	mux.HandleFunc("/exec/{namespace}/{pod}/{container}", k.exec)
	mux.HandleFunc("/portForward/{namespace}/{pod}", k.portForward)
	k.srv = httptest.NewUnstartedServer(k.authorized(mux))
	k.srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    ca.Pool(),
		MinVersion:   tls.VersionTLS12,
	}
	k.srv.StartTLS()
	t.Cleanup(k.srv.Close)
	k.URL = k.srv.URL
	k.Port = k.srv.Listener.Addr().(*net.TCPAddr).Port
	return k
}

// Node is a Node object that points at the fake: InternalIP 127.0.0.1 and
// the fake's port as the kubelet endpoint.
func (k *Kubelet) Node(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: name}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(k.Port)}},
		},
	}
}

// Requests are the URLs (path and query) the fake has received.
func (k *Kubelet) Requests() []*url.URL {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]*url.URL(nil), k.requests...)
}

// LastRequest is the last URL received, or nil.
func (k *Kubelet) LastRequest() *url.URL {
	r := k.Requests()
	if len(r) == 0 {
		return nil
	}
	return r[len(r)-1]
}

// authorized records the request and lets only the API server's kubelet
// client certificate through (the TLS layer has verified its chain).
func (k *Kubelet) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || r.TLS.VerifiedChains[0][0].Subject.CommonName != ClientCommonName {
			http.Error(w, "Forbidden: not the API server", http.StatusForbidden)
			return
		}
		u := *r.URL
		k.mu.Lock()
		k.requests = append(k.requests, &u)
		k.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (k *Kubelet) containerLogs(w http.ResponseWriter, r *http.Request) {
	switch r.PathValue("pod") {
	case "missing":
		http.Error(w, "pod not found", http.StatusNotFound)
		return
	case "waiting":
		http.Error(w, fmt.Sprintf("container %q in pod %q is waiting to start: ContainerCreating", r.PathValue("container"), r.PathValue("pod")), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	if r.URL.Query().Get("follow") != "true" {
		for _, l := range k.Lines {
			fmt.Fprintln(w, l)
		}
		return
	}
	rc := http.NewResponseController(w)
	fmt.Fprintln(w, k.Lines[0])
	_ = rc.Flush()
	for {
		select {
		case l := <-k.FollowNext:
			fmt.Fprintln(w, l)
			_ = rc.Flush()
		case <-r.Context().Done():
			k.once.Do(func() { close(k.FollowDone) })
			return
		}
	}
}

// exec answers a WebSocket exec. With stdin attached it acts as cat: what
// the client sends on stdin comes back on stdout until the client closes
// stdin. Without stdin, the command's arguments after the first, joined by
// spaces, go to stdout at once (as echo would). Then a Success status goes
// on the error channel.
//
// Only the first is certain to reach a client-go (and kubectl) client:
// client-go reads the connection before it has set up its streams, and
// drops a message for a stream it has not set up yet ("Unknown stream id
// 1, discarding message"), which stdout written the moment the connection
// opens sometimes is. A client sends stdin only once its streams are set
// up, so output that answers stdin is never dropped. A real kubelet starts
// a process first, which in practice leaves the client the time it needs.
func (k *Kubelet) exec(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cmd := q["command"]
	if len(cmd) == 0 {
		http.Error(w, "command is required", http.StatusBadRequest)
		return
	}
	if !wsstream.IsWebSocketRequest(r) {
		http.Error(w, "exec needs a WebSocket upgrade", http.StatusBadRequest)
		return
	}
	channels := []wsstream.ChannelType{wsstream.IgnoreChannel, wsstream.WriteChannel, wsstream.WriteChannel, wsstream.WriteChannel, wsstream.ReadChannel}
	if q.Get("input") == "1" {
		channels[stdinChannel] = wsstream.ReadChannel
	}
	binary := wsstream.ChannelProtocolConfig{Binary: true, Channels: channels}
	conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		"":                  binary,
		"v5.channel.k8s.io": binary,
		"v4.channel.k8s.io": binary,
		"channel.k8s.io":    binary,
	})
	protocol, streams, err := conn.Open(w, r)
	if err != nil {
		return
	}
	defer conn.Close()
	if q.Get("input") == "1" {
		_, _ = io.Copy(streams[stdoutChannel], streams[stdinChannel])
	} else {
		_, _ = streams[stdoutChannel].Write([]byte(strings.Join(cmd[1:], " ") + "\n"))
	}
	st := metav1.Status{Status: metav1.StatusSuccess}
	if strings.HasPrefix(protocol, "v4") || strings.HasPrefix(protocol, "v5") {
		b, _ := json.Marshal(st)
		_, _ = streams[errorChannel].Write(b)
	}
}

// ForwardedPorts are the port headers of the port-forward data streams
// the fake has served.
func (k *Kubelet) ForwardedPorts() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.ports...)
}

// portForward serves upstream's SPDY port-forward protocol
// (portforward.k8s.io): every data stream echoes what it receives, as if
// the pod's port ran an echo server. A WebSocket request is refused with
// 400, so that a client falls back to SPDY, as kubectl does.
func (k *Kubelet) portForward(w http.ResponseWriter, r *http.Request) {
	if wsstream.IsWebSocketRequest(r) {
		http.Error(w, "port forwarding over WebSocket is not served; use SPDY", http.StatusBadRequest)
		return
	}
	if _, err := httpstream.Handshake(r, w, []string{"portforward.k8s.io"}); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, replySent <-chan struct{}) error {
		if s.Headers().Get(corev1.StreamType) != corev1.StreamTypeData {
			return nil
		}
		k.mu.Lock()
		k.ports = append(k.ports, s.Headers().Get(corev1.PortHeader))
		k.mu.Unlock()
		go func() {
			<-replySent
			_, _ = io.Copy(s, s)
			_ = s.Close()
		}()
		return nil
	})
	if conn == nil {
		return
	}
	defer conn.Close()
	<-conn.CloseChan()
}
