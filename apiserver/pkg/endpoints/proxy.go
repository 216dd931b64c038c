package endpoints

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
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
	optsPath, err := proxyPath(opts)
	if err != nil {
		h.writeError(w, r, err, gr, id)
		return
	}
	var (
		loc *url.URL
		rt  http.RoundTripper
	)
	switch s.R.Kind {
	case "Pod":
		loc, err = h.podProxyLocation(r.Context(), s, ns, id)
		rt = h.proxyTransport()
	case "Service":
		loc, err = h.serviceProxyLocation(r.Context(), ns, id)
		rt = h.proxyTransport()
	case "Node":
		loc, rt, err = h.nodeProxyLocation(r.Context(), s, id)
	default:
		err = apierrors.NewNotFound(gr, id)
	}
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

// podProxyLocation is upstream's pod ResourceLocation: the pod's IP, on the
// port asked for or the first container port, refused when the address is
// not a global unicast one (a pod on the host's loopback).
func (h *Handler) podProxyLocation(ctx context.Context, s *registry.Store, ns, id string) (*url.URL, error) {
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", id))
	}
	obj, err := s.Get(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	pod := obj.(*corev1.Pod)
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	podIP := pod.Status.PodIP
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	if ip := net.ParseIP(podIP); ip == nil || !ip.IsGlobalUnicast() {
		return nil, apierrors.NewBadRequest("address not allowed")
	}
	loc := &url.URL{Scheme: scheme, Host: podIP}
	if strings.Contains(podIP, ":") {
		loc.Host = "[" + podIP + "]"
	}
	if port != "" {
		loc.Host = net.JoinHostPort(podIP, port)
	}
	return loc, nil
}

// serviceProxyLocation is upstream's service ResourceLocation: a random
// address of the service's Endpoints that serves the port asked for (by
// name, or by number through the service's port of that number), whose
// pod still has that IP.
func (h *Handler) serviceProxyLocation(ctx context.Context, ns, id string) (*url.URL, error) {
	scheme, name, portStr, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", id))
	}
	services := h.stores[corev1.SchemeGroupVersion.WithResource("services")]
	endpoints := h.stores[corev1.SchemeGroupVersion.WithResource("endpoints")]
	pods := h.stores[corev1.SchemeGroupVersion.WithResource("pods")]
	if services == nil || endpoints == nil || pods == nil {
		return nil, apierrors.NewServiceUnavailable("no service storage")
	}
	if portNum, err := strconv.ParseInt(portStr, 10, 64); err == nil {
		obj, err := services.Get(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		found := false
		for _, p := range obj.(*corev1.Service).Spec.Ports {
			if int64(p.Port) == portNum {
				portStr, found = p.Name, true
				break
			}
		}
		if !found {
			return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", portNum, name))
		}
	}
	obj, err := endpoints.Get(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	eps := obj.(*corev1.Endpoints)
	if len(eps.Subsets) == 0 {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	ssSeed := rand.IntN(len(eps.Subsets))
	for ssi := range eps.Subsets {
		ss := &eps.Subsets[(ssSeed+ssi)%len(eps.Subsets)]
		if len(ss.Addresses) == 0 {
			continue
		}
		for _, p := range ss.Ports {
			if p.Name != portStr {
				continue
			}
			addrSeed := rand.IntN(len(ss.Addresses))
			for try := range ss.Addresses {
				addr := ss.Addresses[(addrSeed+try)%len(ss.Addresses)]
				if !validEndpointAddress(ctx, pods, &addr) {
					continue
				}
				return &url.URL{Scheme: scheme, Host: net.JoinHostPort(addr.IP, strconv.Itoa(int(p.Port)))}, nil
			}
		}
	}
	return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", id))
}

// validEndpointAddress: the address names a pod that still has its IP.
func validEndpointAddress(ctx context.Context, pods *registry.Store, addr *corev1.EndpointAddress) bool {
	if addr.TargetRef == nil || addr.TargetRef.Kind != "Pod" {
		return false
	}
	obj, err := pods.Get(ctx, addr.TargetRef.Namespace, addr.TargetRef.Name)
	if err != nil {
		return false
	}
	pod := obj.(*corev1.Pod)
	for _, ip := range pod.Status.PodIPs {
		if ip.IP == addr.IP {
			return true
		}
	}
	return pod.Status.PodIP == addr.IP
}

// nodeProxyLocation is upstream's node ResourceLocation: the kubelet (its
// port, HTTPS, the API server's kubelet client certificate) unless another
// port is asked for, which is reached with the proxy transport. Nodes
// whose address is loopback or link-local are refused.
func (h *Handler) nodeProxyLocation(ctx context.Context, s *registry.Store, id string) (*url.URL, http.RoundTripper, error) {
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid node request %q", id))
	}
	kc, err := h.kubelet()
	if err != nil {
		return nil, nil, err
	}
	obj, err := s.Get(ctx, "", name)
	if err != nil {
		return nil, nil, err
	}
	kubelet, err := kc.Location(obj.(*corev1.Node), "", nil)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	host, kubeletPort, _ := net.SplitHostPort(kubelet.Host)
	if err := proxyableHost(ctx, host); err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if port == "" || port == kubeletPort {
		return kubelet, kc.Transport(false), nil
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}, h.proxyTransport(), nil
}

// proxyableHost is upstream's IsProxyableHostname: no loopback or
// link-local address, for a name every address it resolves to.
func proxyableHost(ctx context.Context, host string) error {
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return err
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() {
			return fmt.Errorf("address not allowed")
		}
	}
	return nil
}
