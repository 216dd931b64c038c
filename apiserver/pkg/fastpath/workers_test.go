package fastpath

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestRequestWorkersAreReused(t *testing.T) {
	p := NewRequestWorkers(100)
	served := 0
	h := p.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served++
		w.WriteHeader(http.StatusCreated)
	}))
	for range 100 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/a/pods", nil))
		if rec.Code != http.StatusCreated {
			t.Fatalf("code %d", rec.Code)
		}
	}
	if served != 100 {
		t.Errorf("served %d of 100", served)
	}
	// One request at a time: the workers are reused. (A request may come
	// before the worker that finished the last one is back waiting, and
	// start another; without reuse there would be 100.)
	if n := p.started.Load(); n > 10 {
		t.Errorf("%d workers started for 100 sequential requests", n)
	}
}

func TestRequestWorkersBoundedThenInline(t *testing.T) {
	p := NewRequestWorkers(2)
	// All five are served at once: two on workers, three on their own
	// goroutines.
	release := serveAtOnce(t, p, 5, http.MethodPut)
	release()
	if got := p.started.Load(); got != 2 {
		t.Errorf("%d workers started, want the limit 2", got)
	}
}

// serveAtOnce starts n requests through p, each held in the handler until
// release, and returns once all n are being served; release lets them
// finish and waits for them.
func serveAtOnce(t *testing.T, p *RequestWorkers, n int, method string) (release func()) {
	t.Helper()
	held := make(chan struct{})
	var inHandler, done sync.WaitGroup
	h := p.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inHandler.Done()
		<-held
	}))
	inHandler.Add(n)
	for range n {
		done.Add(1)
		go func() {
			defer done.Done()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/api/v1/namespaces/a/pods", nil))
		}()
	}
	waitGroupWithin(t, &inHandler, 10*time.Second)
	return func() {
		close(held)
		done.Wait()
	}
}

func TestRequestWorkersPanicReachesTheRequestsGoroutine(t *testing.T) {
	p := NewRequestWorkers(1)
	h := p.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	for range 2 {
		func() {
			defer func() {
				if v := recover(); v != http.ErrAbortHandler {
					t.Errorf("recovered %v, want http.ErrAbortHandler", v)
				}
			}()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodDelete, "/api/v1/namespaces/a/pods/p", nil))
		}()
	}
	// The worker survived the first panic: with a limit of 1, the second
	// request could only have been served by it or inline.
	if n := p.started.Load(); n != 1 {
		t.Errorf("%d workers started, want 1", n)
	}
}

func TestRequestWorkersLeaveLongRunningRequests(t *testing.T) {
	p := NewRequestWorkers(4)
	h := p.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, target := range []string{
		"/api/v1/namespaces/a/pods?watch=true",
		"/api/v1/watch/namespaces/a/pods",
		"/api/v1/namespaces/a/pods/p/exec?command=sh",
		"/api/v1/namespaces/a/pods/p/log?follow=true",
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil))
	}
	if n := p.started.Load(); n != 0 {
		t.Errorf("%d workers started for long-running requests, want 0", n)
	}
}

func TestLongRunning(t *testing.T) {
	for target, want := range map[string]bool{
		"/api/v1/namespaces/a/pods?watch=true":                true,
		"/api/v1/namespaces/a/pods?watch=1&resourceVersion=5": true,
		"/api/v1/namespaces/a/pods?watch=false":               false,
		"/api/v1/watch/namespaces/a/pods":                     true,
		"/apis/apps/v1/namespaces/a/deployments?limit=500":    false,
		"/api/v1/namespaces/a/pods/p/attach":                  true,
		"/api/v1/namespaces/a/pods/p/exec":                    true,
		"/api/v1/namespaces/a/pods/p/portforward":             true,
		"/api/v1/namespaces/a/pods/p/log":                     true,
		"/api/v1/namespaces/a/services/s/proxy/metrics":       true,
		"/api/v1/nodes/n/proxy/stats/summary":                 true,
		"/api/v1/namespaces/a/pods/p/status":                  false,
		"/api/v1/namespaces/a/pods":                           false,
		"/apis/coordination.k8s.io/v1/namespaces/a/leases/l":  false,
	} {
		if got := longRunning(httptest.NewRequest(http.MethodGet, target, nil)); got != want {
			t.Errorf("longRunning(%s) = %v, want %v", target, got, want)
		}
	}
}

func waitGroupWithin(t *testing.T, wg *sync.WaitGroup, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("not all requests were being served after %s", d)
	}
}

func TestRequestWorkersEndWhenStopped(t *testing.T) {
	p := NewRequestWorkers(4)
	release := serveAtOnce(t, p, 3, http.MethodPost)
	// Stopped while its workers are busy: they finish their requests,
	// then end, freeing every slot.
	p.Stop()
	release()
	if n := p.started.Load(); n != 3 {
		t.Fatalf("%d workers started, want 3", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(p.slots) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d workers still running 10s after stop", len(p.slots))
		}
		runtime.Gosched()
	}
}

// TestRequestWorkersAnswerAsThePlainHandler: the differential test of the
// pool. Requests served through it, on a worker or (long-running ones) on
// their own goroutine, are answered exactly as by the handler alone: the
// same status, headers and body, and a panic reaches the request's
// goroutine as it would.
func TestRequestWorkersAnswerAsThePlainHandler(t *testing.T) {
	plain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("panic") != "" {
			panic(http.ErrAbortHandler)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Path", r.URL.Path)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"method":"` + r.Method + `","query":"` + r.URL.RawQuery + `"}`))
	})
	p := NewRequestWorkers(2)
	defer p.Stop()
	pooled := p.Wrap(plain)
	serve := func(h http.Handler, method, target string) (rec *httptest.ResponseRecorder, panicked any) {
		defer func() { panicked = recover() }()
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		return rec, nil
	}
	for _, c := range []struct{ method, target string }{
		{http.MethodPost, "/api/v1/namespaces/a/pods"},
		{http.MethodGet, "/api/v1/namespaces/a/pods/p"},
		{http.MethodGet, "/api/v1/namespaces/a/pods?watch=true"},
		{http.MethodPost, "/api/v1/namespaces/a/pods/p/exec?command=sh"},
		{http.MethodDelete, "/api/v1/namespaces/a/pods/p?panic=1"},
	} {
		want, wantPanic := serve(plain, c.method, c.target)
		got, gotPanic := serve(pooled, c.method, c.target)
		if gotPanic != wantPanic {
			t.Errorf("%s %s: panic %v, want %v", c.method, c.target, gotPanic, wantPanic)
		}
		if wantPanic != nil {
			continue
		}
		if got.Code != want.Code || got.Body.String() != want.Body.String() || !reflect.DeepEqual(got.Header(), want.Header()) {
			t.Errorf("%s %s: answered %d %v %q, the plain handler %d %v %q", c.method, c.target,
				got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
	}
	if n := p.started.Load(); n == 0 {
		t.Error("no worker served a request: the pool was not taken")
	}
}
