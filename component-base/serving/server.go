package serving

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
)

// Check is a named readiness check: nil means ready.
type Check struct {
	Name string
	Fn   func() error
}

// Authorizer decides whether user may get path.
type Authorizer interface {
	Authorize(ctx context.Context, user string, groups []string, path string) (allowed bool, reason string, err error)
}

// Server serves health and metrics over HTTPS.
type Server struct {
	ln        net.Listener
	tlsConfig *tls.Config
	mux       *http.ServeMux
	authz     Authorizer

	mu     sync.Mutex
	checks []Check
}

// New opens the listener described by o and serves reg's metrics. authz
// decides /metrics when o.ClientCAFile is set (it may be nil otherwise).
func New(o *Options, reg prometheus.Gatherer, authz Authorizer) (*Server, error) {
	if o.ClientCAFile != "" && authz == nil {
		return nil, fmt.Errorf("--client-ca-file needs an authorizer")
	}
	ln, cfg, err := o.Listen()
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, tlsConfig: cfg, mux: http.NewServeMux()}
	if o.ClientCAFile != "" {
		s.authz = authz
	}
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }
	s.mux.HandleFunc("/healthz", ok)
	s.mux.HandleFunc("/livez", ok)
	s.mux.HandleFunc("/readyz", s.readyz)
	s.mux.Handle("/metrics", s.protect(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	return s, nil
}

// AddReadyzCheck adds a readiness check.
func (s *Server) AddReadyzCheck(c Check) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks = append(s.checks, c)
	sort.Slice(s.checks, func(i, j int) bool { return s.checks[i].Name < s.checks[j].Name })
}

// Handle adds a handler (debug endpoints a daemon wants beside health).
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, s.protect(h)) }

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// readyz answers "ok" when every check passes, 503 otherwise; ?verbose
// lists each check as upstream's does.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	checks := append([]Check(nil), s.checks...)
	s.mu.Unlock()
	var b strings.Builder
	failed := false
	for _, c := range checks {
		if err := c.Fn(); err != nil {
			failed = true
			fmt.Fprintf(&b, "[-]%s failed: %v\n", c.Name, err)
		} else {
			fmt.Fprintf(&b, "[+]%s ok\n", c.Name)
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if failed {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "%sreadyz check failed\n", b.String())
		return
	}
	if _, verbose := r.URL.Query()["verbose"]; verbose {
		fmt.Fprintf(w, "%sreadyz check passed\n", b.String())
		return
	}
	_, _ = w.Write([]byte("ok"))
}

// protect authenticates the client certificate and asks the authorizer,
// when the server was configured with a client CA.
func (s *Server) protect(h http.Handler) http.Handler {
	if s.authz == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			http.Error(w, "Unauthorized: a client certificate signed by the cluster CA is required", http.StatusUnauthorized)
			return
		}
		leaf := r.TLS.VerifiedChains[0][0]
		user, groups := leaf.Subject.CommonName, leaf.Subject.Organization
		allowed, reason, err := s.authz.Authorize(r.Context(), user, groups, r.URL.Path)
		if err != nil {
			klog.FromContext(r.Context()).Error(err, "Authorizing a metrics request", "user", user, "path", r.URL.Path)
			http.Error(w, "Internal Server Error: authorizing the request: "+err.Error(), http.StatusInternalServerError)
			return
		}
		if !allowed {
			msg := fmt.Sprintf("Forbidden: user %q cannot get path %q", user, r.URL.Path)
			if reason != "" {
				msg += ": " + reason
			}
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Start serves until ctx ends, then shuts down gracefully.
func (s *Server) Start(ctx context.Context) error {
	srv := &http.Server{
		Handler: s.mux, TLSConfig: s.tlsConfig, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(s.ln, "", "") }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	}
}
