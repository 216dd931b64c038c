package ready

import (
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/coredns/caddy"
)

type flag struct {
	ok     atomic.Bool
	reason string
}

func (f *flag) Ready() bool { return f.ok.Load() }

type explained struct{ flag }

func (e *explained) NotReadyReason() string { return e.reason }

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReadyAsksEveryTime: a plugin that was ready and is no longer makes
// /ready 503 again (CoreDNS's own plugin stops asking it), with its name
// and, where it gives one, its reason; then 200 once it is ready again.
func TestReadyAsksEveryTime(t *testing.T) {
	plugins.Reset()
	t.Cleanup(plugins.Reset)
	kube := &flag{}
	api := &explained{flag{reason: "the API server's /readyz: connection refused"}}
	plugins.Append(kube, "kubernetes")
	plugins.Append(api, "kubeapi")
	rd := &ready{Addr: "127.0.0.1:0"}
	if err := rd.onStartup(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rd.onFinalShutdown() })
	url := fmt.Sprintf("http://%s/ready", rd.ln.Addr())

	steps := []struct {
		kube, api bool
		code      int
		body      string
	}{
		{false, false, 503, "kubeapi: the API server's /readyz: connection refused\nkubernetes"},
		{true, false, 503, "kubeapi: the API server's /readyz: connection refused"},
		{true, true, 200, "OK"},
		{true, false, 503, "kubeapi: the API server's /readyz: connection refused"},
		{true, true, 200, "OK"},
		{false, true, 503, "kubernetes"},
	}
	for i, s := range steps {
		kube.ok.Store(s.kube)
		api.ok.Store(s.api)
		if code, body := get(t, url); code != s.code || body != s.body {
			t.Errorf("step %d: %d %q, want %d %q", i, code, body, s.code, s.body)
		}
	}

	_ = rd.onFinalShutdown()
	if _, err := http.Get(url); err == nil {
		t.Errorf("/ready still served after the shutdown")
	}
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "ready", want: ":8181"},
		{in: "ready 127.0.0.1:1234", want: "127.0.0.1:1234"},
		{in: "ready 127.0.0.1:1234 b", wantErr: true},
		{in: "ready bla", wantErr: true},
		{in: "ready\nready", wantErr: true},
	} {
		got, err := parse(caddy.NewTestController("dns", tt.in))
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("%q: %q %v", tt.in, got, err)
		}
	}
}
