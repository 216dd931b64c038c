package webhook

import (
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPost(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path == "/fail":
			http.Error(w, "no", http.StatusInternalServerError)
		case r.Header.Get("Content-Type") != "application/json":
			http.Error(w, "content type", http.StatusBadRequest)
		default:
			_, _ = w.Write(append([]byte("echo:"+r.Host+":"), body...))
		}
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	url := func(p string) *string { s := srv.URL + p; return &s }
	c := &Clients{Resolve: func(_ context.Context, ns, name string, port int32, path string) (string, string, error) {
		if ns != "n" || name != "s" || port != 443 || path != "/p" {
			t.Errorf("resolve(%s, %s, %d, %s)", ns, name, port, path)
		}
		return srv.URL + path, "s.n.svc", nil
	}}
	ctx := context.Background()

	out, err := c.Post(ctx, Endpoint{URL: url("/x"), CABundle: ca}, []byte(`{}`), time.Second)
	if err != nil || !strings.HasSuffix(string(out), ":{}") {
		t.Errorf("post by URL: %q %v", out, err)
	}
	path := "/p"
	out, err = c.Post(ctx, Endpoint{Namespace: "n", Name: "s", Path: &path, CABundle: ca}, []byte(`{}`), time.Second)
	if err != nil || !strings.HasPrefix(string(out), "echo:s.n.svc:") {
		t.Errorf("post to a service (Host is the service's name): %q %v", out, err)
	}
	if _, err := c.Post(ctx, Endpoint{URL: url("/fail"), CABundle: ca}, nil, time.Second); err == nil || !strings.Contains(err.Error(), "answered 500") {
		t.Errorf("a 500: %v", err)
	}
	if _, err := c.Post(ctx, Endpoint{URL: url("/x")}, nil, time.Second); err == nil {
		t.Error("a certificate no CA bundle signs was accepted")
	}
	if _, err := c.Post(ctx, Endpoint{URL: url("/x"), CABundle: []byte("junk")}, nil, time.Second); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a junk CA bundle: %v", err)
	}
	if _, err := (&Clients{}).Post(ctx, Endpoint{Namespace: "n", Name: "s"}, nil, time.Second); err == nil {
		t.Error("a service reference without a resolver was posted")
	}
	if _, err := c.Post(ctx, Endpoint{}, nil, time.Second); err == nil || !strings.Contains(err.Error(), "no url or service") {
		t.Errorf("no endpoint: %v", err)
	}
}
