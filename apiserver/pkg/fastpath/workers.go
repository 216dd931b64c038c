package fastpath

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// RequestWorkers runs short requests on goroutines that outlive one
// request: a fast path, kept because removing it cost 7.8% of the CPU per
// protobuf create end to end (docs/benchmarks.md, "Fast paths";
// TestRequestWorkersAnswerAsThePlainHandler compares it with the plain
// handler). net/http starts a new goroutine for every HTTP/2 stream, with
// the runtime's small starting stack; a create's decoding, admission,
// validation and storage then grow it several times over, copying it each
// time (runtime.newstack, about 7% of the server's CPU per create in the
// bench's profile). A worker keeps the stack it grew. grpc-go's
// NumStreamWorkers does the same for the same reason.
//
// At most max workers exist; when all are busy a request runs on its own
// goroutine, as without the pool. Long-running requests (watches, exec,
// attach, port-forward, proxy, logs) always do, so they never hold a
// worker.
type RequestWorkers struct {
	work     chan func()
	slots    chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
	started  atomic.Int64 // workers started, for tests
}

// NewRequestWorkers makes a pool of at most max workers.
func NewRequestWorkers(max int) *RequestWorkers {
	return &RequestWorkers{work: make(chan func()), slots: make(chan struct{}, max), stopped: make(chan struct{})}
}

// Stop ends the workers once they are idle (the server is shutting down).
func (p *RequestWorkers) Stop() { p.stopOnce.Do(func() { close(p.stopped) }) }

// Wrap serves next's short requests on the workers.
func (p *RequestWorkers) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if longRunning(r) {
			next.ServeHTTP(w, r)
			return
		}
		done := make(chan any, 1)
		f := func() {
			// A panic ends the request on its own goroutine, where
			// net/http expects it (http.ErrAbortHandler aborts the
			// stream), not on the worker.
			defer func() { done <- recover() }()
			next.ServeHTTP(w, r)
		}
		select {
		case p.work <- f:
		default:
			select {
			case p.slots <- struct{}{}:
				p.started.Add(1)
				go p.worker(f)
			default:
				next.ServeHTTP(w, r)
				return
			}
		}
		if v := <-done; v != nil {
			panic(v)
		}
	})
}

func (p *RequestWorkers) worker(f func()) {
	// A worker ends when the pool stops, or by a runtime.Goexit in a
	// handler; its slot is free again.
	defer func() { <-p.slots }()
	for {
		f()
		select {
		case f = <-p.work:
		case <-p.stopped:
			return
		}
	}
}

// longRunning reports a request that may stay open for long: upstream's
// long-running verbs (watch, proxy) and subresources (attach, exec, log,
// portforward, proxy).
func longRunning(r *http.Request) bool {
	if strings.Contains(r.URL.RawQuery, "watch") {
		if q := r.URL.Query().Get("watch"); q == "true" || q == "1" {
			return true
		}
	}
	path := strings.Trim(r.URL.Path, "/")
	for seg := range strings.SplitSeq(path, "/") {
		switch seg {
		case "watch", "proxy":
			return true
		}
	}
	last := path[strings.LastIndexByte(path, '/')+1:]
	switch last {
	case "attach", "exec", "log", "portforward":
		return true
	}
	return false
}
