package endpoints

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/kubeletclient"
	"skiff.dev/apiserver/pkg/registry"
)

// maxErrorBody bounds how much of a kubelet's error answer is quoted.
const maxErrorBody = 1024

func (h *Handler) kubelet() (*kubeletclient.Client, error) {
	if h.Kubelet == nil {
		return nil, apierrors.NewServiceUnavailable("the API server has no kubelet client configured")
	}
	return h.Kubelet, nil
}

// logWebSocketProtocols are the WebSocket subprotocols pods/log speaks,
// as upstream's wsstream.NewDefaultReaderProtocols.
var logWebSocketProtocols = []string{"binary.k8s.io", "base64.binary.k8s.io"}

// checkLogWebSocket refuses a WebSocket request for a log that offers
// subprotocols, none of them one pods/log speaks (offering none is
// binary.k8s.io).
func checkLogWebSocket(r *http.Request) error {
	var offered []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				offered = append(offered, p)
			}
		}
	}
	if len(offered) == 0 || slices.ContainsFunc(offered, func(p string) bool { return slices.Contains(logWebSocketProtocols, p) }) {
		return nil
	}
	return apierrors.NewBadRequest(fmt.Sprintf("unsupported WebSocket subprotocols %v: pods/log speaks %s", offered, strings.Join(logWebSocketProtocols, ", ")))
}

// podLog serves GET pods/{name}/log: the container's log, streamed from
// the kubelet of the pod's node (flushed as it comes when following),
// over plain HTTP or, when the client asks for one, a WebSocket.
func (h *Handler) podLog(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name string) {
	gr := schema.GroupResource{Resource: "pods/log"}
	opts, err := s.R.Kubelet.LogOptions(r.URL.Query())
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	websocket := wsstream.IsWebSocketRequest(r)
	if websocket {
		if err := checkLogWebSocket(r); err != nil {
			h.writeError(w, r, err, gr, name)
			return
		}
	}
	kc, err := h.kubelet()
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	target, err := s.R.Kubelet.Log(r.Context(), h.locationDeps(s), ns, name, opts)
	if err != nil {
		h.writeError(w, r, err, s.R.GroupResource(), name)
		return
	}
	loc, err := kc.Location(target.Node, target.Path, target.Query)
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err), gr, name)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, loc.String(), nil)
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err), gr, name)
		return
	}
	resp, err := kc.Transport(opts.InsecureSkipTLSVerifyBackend).RoundTrip(req)
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err), gr, name)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		h.writeError(w, r, kubeletError(resp.StatusCode, strings.TrimSpace(string(body)), gr, name), gr, name)
		return
	}
	if websocket {
		// Upstream's StreamObject: an empty message, then the log as
		// binary messages (binary.k8s.io, or no subprotocol) or base64
		// text messages (base64.binary.k8s.io).
		ws := wsstream.NewReader(&errorAfterData{r: resp.Body}, true, wsstream.NewDefaultReaderProtocols())
		if err := ws.Copy(w, r); err != nil {
			klog.FromContext(r.Context()).V(2).Info("log stream over WebSocket ended", "pod", klog.KRef(ns, name), "err", err)
		}
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	if err := copyStream(w, resp.Body, opts.Follow); err != nil && r.Context().Err() == nil {
		klog.FromContext(r.Context()).V(2).Info("log stream ended", "pod", klog.KRef(ns, name), "err", err)
	}
}

// errorAfterData is r, except that a read that returns data and an error
// returns the data alone, and the error on the next read: wsstream's
// Reader drops data that comes with io.EOF, as a kubelet's last read of
// a short log does.
type errorAfterData struct {
	r   io.Reader
	err error
}

func (e *errorAfterData) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.r.Read(p)
	if n > 0 && err != nil {
		e.err, err = err, nil
	}
	return n, err
}

// kubeletError is upstream's GenericHttpResponseChecker: a kubelet's 400
// and 500 carry its text; other codes keep their code and a generic message.
func kubeletError(code int, text string, gr schema.GroupResource, name string) error {
	switch code {
	case http.StatusBadRequest:
		return apierrors.NewBadRequest(text)
	case http.StatusInternalServerError:
		return apierrors.NewInternalError(errors.New(text))
	}
	return apierrors.NewGenericServerResponse(code, "", gr, name, text, 0, false)
}

// copyStream copies src to w, flushing after every read when flush is set.
func copyStream(w http.ResponseWriter, src io.Reader, flush bool) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if flush {
				_ = rc.Flush()
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// isUpgrade reports whether r asks to switch protocols.
func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return r.Header.Get("Upgrade") != ""
			}
		}
	}
	return false
}

// upgradeProxy proxies a request, and the connection it upgrades to, to
// loc. The upgrade passes through unchanged: its Connection and Upgrade
// headers (websocket, or SPDY/3.1), the WebSocket key, version and
// subprotocols (v5.channel.k8s.io, SPDY/3.1+portforward.k8s.io, ...) and
// X-Stream-Protocol-Version; after the kubelet's 101 and its headers,
// bytes are copied both ways. The client's credentials are dropped.
func upgradeProxy(loc *url.URL, rt http.RoundTripper, onError func(http.ResponseWriter, *http.Request, error)) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = loc
			pr.Out.Host = loc.Host
			// The client's credentials are for the API server, not the
			// kubelet, which trusts the API server's own certificate.
			pr.Out.Header.Del("Authorization")
			for k := range pr.Out.Header {
				if strings.HasPrefix(k, "Impersonate-") {
					pr.Out.Header.Del(k)
				}
			}
		},
		Transport:     rt,
		FlushInterval: -1,
		ErrorHandler:  onError,
	}
}

// podConnect serves pods/{name}/exec, attach and portforward: the options
// pass admission (operation CONNECT), then an upgraded connection is
// proxied, byte for byte after the 101, to the kubelet of the pod's node.
// The client's subprotocol negotiation passes through.
func (h *Handler) podConnect(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name, sub string) {
	gr := schema.GroupResource{Resource: "pods/" + sub}
	opts, err := h.admittedConnectOptions(r, s, sub, ns, name, "", false)
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	kc, err := h.kubelet()
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	target, err := s.R.Kubelet.Stream(r.Context(), h.locationDeps(s), ns, name, sub, opts)
	if err != nil {
		h.writeError(w, r, err, s.R.GroupResource(), name)
		return
	}
	if !isUpgrade(r) {
		h.writeError(w, r, apierrors.NewBadRequest("Upgrade request required"), gr, name)
		return
	}
	loc, err := kc.Location(target.Node, target.Path, target.Query)
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err), gr, name)
		return
	}
	logger := klog.FromContext(r.Context())
	proxy := upgradeProxy(loc, kc.Transport(false), func(w http.ResponseWriter, req *http.Request, err error) {
		logger.V(2).Info("proxying to the kubelet failed", "pod", klog.KRef(ns, name), "subresource", sub, "err", err)
		h.writeError(w, req, apierrors.NewInternalError(fmt.Errorf("error dialing backend: %w", err)), gr, name)
	})
	proxy.ServeHTTP(w, r)
}
