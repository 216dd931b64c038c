package healthcheck

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// ProxyHealth tracks whether syncs keep up with changes.
type ProxyHealth struct {
	clock   clock.Clock
	timeout time.Duration

	mu          sync.Mutex
	lastUpdated time.Time
	// oldestPending is when the oldest change not yet synced arrived;
	// zero when none waits.
	oldestPending time.Time
}

// New returns a ProxyHealth that turns unhealthy when a change waits
// longer than timeout.
func New(c clock.Clock, timeout time.Duration) *ProxyHealth {
	return &ProxyHealth{clock: c, timeout: timeout}
}

// QueueUpdate records that a change (or a periodic sync) waits.
func (h *ProxyHealth) QueueUpdate() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.oldestPending.IsZero() {
		h.oldestPending = h.clock.Now()
	}
}

// Updated records a successful sync of everything queued before it
// started.
func (h *ProxyHealth) Updated() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastUpdated = h.clock.Now()
	h.oldestPending = time.Time{}
}

// Status is the /healthz body.
type Status struct {
	LastUpdated time.Time `json:"lastUpdated"`
	CurrentTime time.Time `json:"currentTime"`
}

// Healthy reports the state and the body.
func (h *ProxyHealth) Healthy() (bool, Status) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	ok := h.oldestPending.IsZero() || now.Sub(h.oldestPending) < h.timeout
	return ok, Status{LastUpdated: h.lastUpdated, CurrentTime: now}
}

// ServeHTTP answers /healthz.
func (h *ProxyHealth) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	ok, st := h.Healthy()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	} else {
		w.WriteHeader(http.StatusOK)
	}
	_ = json.NewEncoder(w).Encode(st)
}

// Server is a plain HTTP server (the proxy's health and metrics ports
// are HTTP, as upstream's).
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Listen opens addr for handler.
func Listen(addr string, handler http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &Server{ln: ln, srv: &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}}, nil
}

// Addr is the address listened on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close closes the listener of a server that was never started.
func (s *Server) Close() error { return s.ln.Close() }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(sctx)
		return nil
	}
}
