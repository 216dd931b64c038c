package server

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"skiff.dev/kubelet/pkg/pod"
)

// Identities allowed to use the API.
const (
	// APIServerKubeletClientCN is the common name of the API server's
	// client certificate for kubelets (component-base/certs).
	APIServerKubeletClientCN = "kube-apiserver-kubelet-client"
	// MastersGroup is the cluster administrators' group.
	MastersGroup = "system:masters"
)

// Pods finds a pod bound to this node.
type Pods interface {
	GetPod(namespace, name string) (*corev1.Pod, bool)
}

// Runtime is what the API needs of the container runtime.
type Runtime interface {
	ListContainers(ctx context.Context, podUID types.UID) ([]pod.Container, error)
	ExecStream(ctx context.Context, id string, o pod.ExecOptions) (int32, error)
	// AttachStdin writes to the stdin of a running container started
	// with stdin: true; Close ends one attach's input.
	AttachStdin(ctx context.Context, id string) (io.WriteCloser, error)
}

// Options configure a Server.
type Options struct {
	Pods    Pods
	Runtime Runtime
	// LogDir is the ContainersHook's: <LogDir>/<pod uid>/<name>/<attempt>.log.
	LogDir string
	// NetNSPath is where a pod's network namespace is pinned.
	NetNSPath func(uid types.UID) string
	// StreamIdleTimeout closes an exec or port-forward that carried no
	// data for this long (default 4 h, as upstream).
	StreamIdleTimeout time.Duration
	// Stats serves /stats/summary, /metrics/resource and /metrics/cadvisor
	// (package stats); nil: not served.
	Stats Stats
	// Metrics serves the kubelet's own /metrics (nodes/metrics, as
	// upstream's); nil: not served.
	Metrics http.Handler
	// NodeName and Authorizer: a client other than the API server and the
	// cluster admins is let through when Authorizer allows it the request
	// on this node (nodes/metrics, nodes/stats, nodes/log, nodes/proxy);
	// nil Authorizer: refused.
	NodeName   string
	Authorizer Authorizer
	// Authenticator, when set, lets in a request without a client
	// certificate that carries a bearer token it knows, as that user (then
	// authorized by Authorizer); nil: only client certificates.
	Authenticator Authenticator
}

// Stats is what the API needs of the stats provider.
type Stats interface {
	SummaryHandler() http.Handler
	ResourceMetricsHandler() http.Handler
	CadvisorMetricsHandler() http.Handler
}

// Server serves the kubelet API.
type Server struct {
	o Options
}

// New returns a Server.
func New(o Options) *Server {
	if o.StreamIdleTimeout <= 0 {
		o.StreamIdleTimeout = 4 * time.Hour
	}
	return &Server{o: o}
}

// Register adds the API's routes to mux, behind authentication.
func (s *Server) Register(mux *http.ServeMux) {
	mux.Handle("GET /containerLogs/{namespace}/{pod}/{container}", s.authorized(http.HandlerFunc(s.containerLogs)))
	for _, m := range []string{"GET", "POST"} {
		mux.Handle(m+" /exec/{namespace}/{pod}/{container}", s.authorized(http.HandlerFunc(s.exec)))
		mux.Handle(m+" /attach/{namespace}/{pod}/{container}", s.authorized(http.HandlerFunc(s.attach)))
		mux.Handle(m+" /portForward/{namespace}/{pod}", s.authorized(http.HandlerFunc(s.portForward)))
	}
	if s.o.Stats != nil {
		mux.Handle("GET /stats/summary", s.authorized(s.o.Stats.SummaryHandler()))
		mux.Handle("GET /metrics/resource", s.authorized(s.o.Stats.ResourceMetricsHandler()))
		mux.Handle("GET /metrics/cadvisor", s.authorized(s.o.Stats.CadvisorMetricsHandler()))
	}
	if s.o.Metrics != nil {
		mux.Handle("GET /metrics", s.authorized(s.o.Metrics))
	}
}

// authorized lets through requests with a verified client certificate of
// an allowed identity, or one the Authorizer allows the request: 401
// without one, 403 for another identity.
func (s *Server) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var user string
		var groups []string
		if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
			cert := r.TLS.VerifiedChains[0][0]
			if allowed(cert) {
				next.ServeHTTP(w, r)
				return
			}
			user, groups = cert.Subject.CommonName, cert.Subject.Organization
		} else if token, ok := bearerToken(r); ok && s.o.Authenticator != nil {
			name, gs, ok, err := s.o.Authenticator.AuthenticateToken(r.Context(), token)
			if err != nil {
				klog.FromContext(r.Context()).Error(err, "Authenticating a kubelet API request", "path", r.URL.Path)
				http.Error(w, "Internal Server Error: authenticating the request: "+err.Error(), http.StatusInternalServerError)
				return
			}
			if !ok {
				http.Error(w, "Unauthorized: the bearer token is not valid", http.StatusUnauthorized)
				return
			}
			user, groups = name, gs
		} else {
			msg := "Unauthorized: a client certificate signed by the cluster CA is required"
			if s.o.Authenticator != nil {
				msg = "Unauthorized: a client certificate signed by the cluster CA or a bearer token is required"
			}
			http.Error(w, msg, http.StatusUnauthorized)
			return
		}
		msg := fmt.Sprintf("Forbidden: user %q may not use the kubelet API", user)
		if s.o.Authorizer != nil {
			attrs := requestAttributes(s.o.NodeName, r)
			ok, reason, err := s.o.Authorizer.Authorize(r.Context(), user, groups, attrs)
			if err != nil {
				klog.FromContext(r.Context()).Error(err, "Authorizing a kubelet API request", "user", user, "path", r.URL.Path)
				http.Error(w, "Internal Server Error: authorizing the request: "+err.Error(), http.StatusInternalServerError)
				return
			}
			if ok {
				next.ServeHTTP(w, r)
				return
			}
			msg = fmt.Sprintf("Forbidden: user %q may not %s nodes/%s %q", user, attrs.Verb, attrs.Subresource, attrs.Name)
			if reason != "" {
				msg += ": " + reason
			}
		}
		klog.FromContext(r.Context()).V(2).Info("Refused kubelet API request", "user", user, "path", r.URL.Path)
		http.Error(w, msg, http.StatusForbidden)
	})
}

func allowed(cert *x509.Certificate) bool {
	return cert.Subject.CommonName == APIServerKubeletClientCN || slices.Contains(cert.Subject.Organization, MastersGroup)
}

// errStatus is an HTTP error before a stream is opened.
type errStatus struct {
	code int
	msg  string
}

func (e *errStatus) Error() string { return e.msg }

func writeErr(w http.ResponseWriter, err error) {
	if e, ok := err.(*errStatus); ok {
		http.Error(w, e.msg, e.code)
		return
	}
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// lookupPod returns the pod named in the request's path.
func (s *Server) lookupPod(r *http.Request) (*corev1.Pod, error) {
	ns, name := r.PathValue("namespace"), r.PathValue("pod")
	p, ok := s.o.Pods.GetPod(ns, name)
	if !ok {
		return nil, &errStatus{http.StatusNotFound, fmt.Sprintf("pod %s/%s not found on this node", ns, name)}
	}
	return p, nil
}

// containers returns the pod's containers named name, newest attempt
// first.
func (s *Server) containers(ctx context.Context, p *corev1.Pod, name string) ([]pod.Container, error) {
	all, err := s.o.Runtime.ListContainers(ctx, p.UID)
	if err != nil {
		return nil, err
	}
	var out []pod.Container
	for _, c := range all {
		if c.PodUID() == p.UID && c.Name() == name {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b pod.Container) int { return b.Attempt() - a.Attempt() })
	return out, nil
}

// specHas says whether the pod spec has a container (init, app or
// ephemeral) called name.
func specHas(p *corev1.Pod, name string) bool {
	return specContainer(p, name) != nil
}

// runningContainer is the running container name of the pod.
func (s *Server) runningContainer(r *http.Request) (*corev1.Pod, pod.Container, error) {
	p, err := s.lookupPod(r)
	if err != nil {
		return nil, pod.Container{}, err
	}
	name := r.PathValue("container")
	if !specHas(p, name) {
		return nil, pod.Container{}, &errStatus{http.StatusNotFound, fmt.Sprintf("container %s is not valid for pod %s", name, p.Name)}
	}
	cs, err := s.containers(r.Context(), p, name)
	if err != nil {
		return nil, pod.Container{}, err
	}
	if len(cs) == 0 || cs[0].State != pod.StateRunning {
		return nil, pod.Container{}, &errStatus{http.StatusBadRequest, fmt.Sprintf("container %s in pod %s is not running", name, p.Name)}
	}
	return p, cs[0], nil
}

// hostPort is 127.0.0.1:port.
func hostPort(port int32) string { return net.JoinHostPort("127.0.0.1", fmt.Sprint(port)) }
