package kubeapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestReadiness: not ready until checked, ready while the check passes,
// not ready with the check's error while it fails, ready again after.
func TestReadiness(t *testing.T) {
	var failing atomic.Bool
	k := New(func(context.Context) error {
		if failing.Load() {
			return errors.New("connection refused")
		}
		return nil
	}, time.Hour, time.Second)
	if k.Ready() || k.NotReadyReason() == "" {
		t.Fatalf("ready before any check: %v %q", k.Ready(), k.NotReadyReason())
	}
	ctx := context.Background()
	k.CheckOnce(ctx)
	if !k.Ready() || k.NotReadyReason() != "" {
		t.Fatalf("after a good check: %v %q", k.Ready(), k.NotReadyReason())
	}
	failing.Store(true)
	k.CheckOnce(ctx)
	if k.Ready() || k.NotReadyReason() != "connection refused" {
		t.Fatalf("after a failed check: %v %q", k.Ready(), k.NotReadyReason())
	}
	failing.Store(false)
	k.CheckOnce(ctx)
	if !k.Ready() {
		t.Fatalf("after a good check again: %q", k.NotReadyReason())
	}
}

// TestStartStop: the checks run every interval from Start until Stop.
func TestStartStop(t *testing.T) {
	var n atomic.Int64
	k := New(func(context.Context) error { n.Add(1); return nil }, 10*time.Millisecond, time.Second)
	if err := k.Start(); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return n.Load() >= 3 && k.Ready(), nil
	}); err != nil {
		t.Fatalf("%d checks", n.Load())
	}
	_ = k.Stop()
	after := n.Load()
	time.Sleep(50 * time.Millisecond) // nothing to wait for: no check may come
	if n.Load() != after {
		t.Errorf("checks went on after Stop")
	}
}

// TestReadyzCheck: the check asks /readyz and takes only 200.
func TestReadyzCheck(t *testing.T) {
	var code atomic.Int64
	code.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(code.Load()))
	}))
	defer srv.Close()
	check := ReadyzCheck(kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL}))
	if err := check(context.Background()); err != nil {
		t.Fatalf("200: %v", err)
	}
	code.Store(http.StatusInternalServerError)
	if err := check(context.Background()); err == nil {
		t.Fatal("500 taken as ready")
	}
	srv.Close()
	if err := check(context.Background()); err == nil {
		t.Fatal("a closed server taken as ready")
	}
}

// TestPassesQueriesOn: the plugin answers nothing itself.
func TestPassesQueriesOn(t *testing.T) {
	k := New(func(context.Context) error { return nil }, time.Hour, time.Second)
	k.Next = test.NextHandler(dns.RcodeNameError, nil)
	m := new(dns.Msg)
	m.SetQuestion("example.org.", dns.TypeA)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	rcode, err := k.ServeDNS(context.Background(), rec, m)
	if err != nil || rcode != dns.RcodeNameError {
		t.Fatalf("rcode %d %v, want the next plugin's NXDOMAIN", rcode, err)
	}
}

func TestParse(t *testing.T) {
	SetClientConfig(&rest.Config{Host: "https://127.0.0.1:6443"})
	for _, tt := range []struct {
		in       string
		interval time.Duration
		wantErr  bool
	}{
		{in: "kubeapi", interval: DefaultInterval},
		{in: "kubeapi {\n interval 2s\n timeout 1s\n}", interval: 2 * time.Second},
		{in: "kubeapi {\n interval 0s\n}", wantErr: true},
		{in: "kubeapi {\n interval soon\n}", wantErr: true},
		{in: "kubeapi {\n bogus 1\n}", wantErr: true},
		{in: "kubeapi extra", wantErr: true},
		{in: "kubeapi {\n kubeconfig /nonexistent/kubeconfig\n}", wantErr: true},
		{in: "kubeapi\nkubeapi", wantErr: true},
	} {
		k, err := parse(caddy.NewTestController("dns", tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if err == nil && k.interval != tt.interval {
			t.Errorf("%q: interval %v, want %v", tt.in, k.interval, tt.interval)
		}
	}
}
