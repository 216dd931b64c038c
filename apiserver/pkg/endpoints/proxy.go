package endpoints

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/gorilla/mux"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilproxy "k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/registry"
)

// NewProxyTransport is how the API server reaches pods and services for
// pods/proxy, services/proxy and nodes/proxy on a port other than the
// kubelet's, as upstream's proxy transport: no HTTP proxy from the
// environment, and no check of the backend's certificate (pods are
// reached by IP, their certificates cannot name it).
func NewProxyTransport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // upstream's proxy transport
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 10,
		IdleConnTimeout:     90 * time.Second,
	}
}

// proxy serves {pods,services,nodes}/{name}/proxy[/{path}]: the request,
// whatever its method, passed to the pod's IP, to a ready endpoint of the
// service, or to the node's kubelet, as upstream's ProxyREST. The name may
// carry a scheme and a port: "name", "name:port", "https:name:port".
func (h *Handler) proxy(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, id string) {
	gr := schema.GroupResource{Group: s.R.Group, Resource: s.R.Resource + "/proxy"}
	// The path after proxy/, as the client sent it (still escaped).
	rawPath, hasPath := mux.Vars(r)["path"]
	decoded, err := url.PathUnescape(rawPath)
	if err != nil {
		h.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("invalid path %q", rawPath)), gr, id)
		return
	}
	// The options (the path) pass admission before anything is looked up,
	// as upstream's ConnectResource.
	opts, err := h.admittedConnectOptions(r, s, registry.SubProxy, ns, id, decoded, hasPath)
	if err != nil {
		h.writeError(w, r, err, gr, id)
		return
	}
	optsPath, err := proxyPath(s, opts)
	if err != nil {
		h.writeError(w, r, err, gr, id)
		return
	}
	loc, rt, err := s.R.Proxy.Location(r.Context(), h.locationDeps(s), ns, id)
	if err != nil {
		h.writeError(w, r, err, s.R.GroupResource(), id)
		return
	}
	if loc.Scheme == "" {
		loc.Scheme = "http"
	}
	loc.Path = joinPreservingTrailingSlash(loc.Path, optsPath)
	if strings.HasSuffix(r.URL.Path, "/") && !strings.HasSuffix(loc.Path, "/") {
		loc.Path += "/"
	}
	if loc.Path == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// .../proxy itself: upstream redirects a GET or HEAD of the
		// backend's root to .../proxy/, so that relative links resolve.
		target := r.URL.EscapedPath() + "/"
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", target)
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	// Keep the client's escaping (%2F in a segment) where the path is
	// otherwise what it sent.
	if escaped := "/" + rawPath; escaped != loc.Path {
		if p, err := url.PathUnescape(escaped); err == nil && p == loc.Path {
			loc.RawPath = escaped
		}
	}
	loc.RawQuery = r.URL.RawQuery
	// As upstream's UpgradeAwareHandler wraps it: links in HTML answers and
	// redirects to the backend itself are rewritten to go through this
	// path (apimachinery's proxy.Transport), and the backend's CORS
	// headers are dropped.
	suffix := loc.Path
	if strings.HasSuffix(r.URL.Path, "/") && !strings.HasSuffix(suffix, "/") {
		suffix += "/"
	}
	rt = corsRemoving{&utilproxy.Transport{PathPrepend: strings.TrimSuffix(r.URL.Path, suffix), RoundTripper: rt}}
	logger := klog.FromContext(r.Context())
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = loc
			// The Host header stays the client's, as upstream's handler
			// leaves it (it does not use the location's host).
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			// The client's credentials are for the API server, which has
			// used them (upstream drops them once authenticated).
			pr.Out.Header.Del("Authorization")
			for k := range pr.Out.Header {
				if strings.HasPrefix(k, "Impersonate-") {
					pr.Out.Header.Del(k)
				}
			}
		},
		Transport:     rt,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			logger.V(2).Info("proxying failed", "resource", gr, "name", id, "namespace", ns, "err", err)
			var status apierrors.APIStatus
			if !errors.As(err, &status) {
				err = apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err))
			}
			h.writeError(w, req, err, gr, id)
		},
	}
	rp.ServeHTTP(w, r)
}

// corsRemoving drops the backend's CORS headers, as upstream's
// corsRemovingTransport: the API server's own CORS policy applies.
type corsRemoving struct{ http.RoundTripper }

func (t corsRemoving) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	for _, h := range []string{"Access-Control-Allow-Credentials", "Access-Control-Allow-Headers", "Access-Control-Allow-Methods", "Access-Control-Allow-Origin"} {
		resp.Header.Del(h)
	}
	return resp, nil
}

func (h *Handler) proxyTransport() http.RoundTripper {
	if h.ProxyTransport != nil {
		return h.ProxyTransport
	}
	return http.DefaultTransport
}

// joinPreservingTrailingSlash is upstream's: path.Join, keeping the last
// element's trailing slash.
func joinPreservingTrailingSlash(elem ...string) string {
	result := path.Join(elem...)
	for i := len(elem) - 1; i >= 0; i-- {
		if len(elem[i]) > 0 {
			if strings.HasSuffix(elem[i], "/") && !strings.HasSuffix(result, "/") {
				result += "/"
			}
			break
		}
	}
	return result
}
