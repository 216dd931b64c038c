package serving

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type fakeAuthz struct{ allow map[string]bool }

func (f fakeAuthz) Authorize(_ context.Context, user string, _ []string, path string) (bool, string, error) {
	if user == "broken" {
		return false, "", errors.New("api server unreachable")
	}
	return f.allow[user+" "+path], "no RBAC policy matched", nil
}

// pki is a CA and the certificates it signs, for the client side.
type pki struct {
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
	caPEM []byte
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	return &pki{ca: ca, caKey: key, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (p *pki) client(t *testing.T, cn string, orgs ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func startServer(t *testing.T, o *Options, authz Authorizer) *Server {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "skiff_test_total", Help: "A test counter."}))
	s, err := New(o, reg, authz)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	return s
}

func get(t *testing.T, s *Server, path string, certs ...tls.Certificate) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: certs}, // the server's certificate is self-signed
	}}
	resp, err := c.Get("https://" + s.Addr() + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestHealthReadinessAndMetrics(t *testing.T) {
	o := NewOptions(0)
	o.BindAddress = "127.0.0.1"
	s := startServer(t, o, nil)
	var synced bool
	s.AddReadyzCheck(Check{Name: "informer-sync", Fn: func() error {
		if !synced {
			return errors.New("informers not synced")
		}
		return nil
	}})
	s.AddReadyzCheck(Check{Name: "alpha", Fn: func() error { return nil }})

	for _, p := range []string{"/healthz", "/livez"} {
		if code, body := get(t, s, p); code != 200 || body != "ok" {
			t.Errorf("%s = %d %q, want 200 ok", p, code, body)
		}
	}
	code, body := get(t, s, "/readyz")
	if code != http.StatusServiceUnavailable || body != "[+]alpha ok\n[-]informer-sync failed: informers not synced\nreadyz check failed\n" {
		t.Errorf("/readyz before sync = %d %q", code, body)
	}
	synced = true
	if code, body := get(t, s, "/readyz"); code != 200 || body != "ok" {
		t.Errorf("/readyz = %d %q, want 200 ok", code, body)
	}
	if code, body := get(t, s, "/readyz?verbose"); code != 200 || !strings.HasSuffix(body, "[+]informer-sync ok\nreadyz check passed\n") {
		t.Errorf("/readyz?verbose = %d %q", code, body)
	}
	if code, body := get(t, s, "/metrics"); code != 200 || !strings.Contains(body, "skiff_test_total 0") {
		t.Errorf("/metrics = %d %q", code, body)
	}
}

func TestMetricsNeedAnAuthorizedClientCertificate(t *testing.T) {
	p := newPKI(t)
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, p.caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions(0)
	o.BindAddress = "127.0.0.1"
	o.ClientCAFile = caFile
	s := startServer(t, o, fakeAuthz{allow: map[string]bool{"prometheus /metrics": true}})
	stranger := newPKI(t)

	tests := []struct {
		name     string
		path     string
		certs    []tls.Certificate
		wantCode int
		wantBody string
	}{
		{"health needs no certificate", "/healthz", nil, 200, "ok"},
		{"no certificate", "/metrics", nil, 401, "a client certificate signed by the cluster CA is required"},
		{"allowed user", "/metrics", []tls.Certificate{p.client(t, "prometheus", "system:monitoring")}, 200, "skiff_test_total"},
		{"user without the grant", "/metrics", []tls.Certificate{p.client(t, "mallory")}, 403, `user "mallory" cannot get path "/metrics": no RBAC policy matched`},
		{"authorizer failing", "/metrics", []tls.Certificate{p.client(t, "broken")}, 500, "api server unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := get(t, s, tt.path, tt.certs...)
			if code != tt.wantCode || !strings.Contains(body, tt.wantBody) {
				t.Errorf("GET %s = %d %q, want %d containing %q", tt.path, code, body, tt.wantCode, tt.wantBody)
			}
		})
	}
	// A certificate from another CA fails the TLS handshake.
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, Certificates: []tls.Certificate{stranger.client(t, "prometheus")}}}}
	if resp, err := c.Get("https://" + s.Addr() + "/metrics"); err == nil {
		resp.Body.Close()
		t.Errorf("a certificate from an unknown CA was accepted: %d", resp.StatusCode)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Options)
		want int
	}{
		{"defaults", func(*Options) {}, 0},
		{"bad port", func(o *Options) { o.Port = 70000 }, 1},
		{"bad address", func(o *Options) { o.BindAddress = "localhost" }, 1},
		{"cert without key", func(o *Options) { o.CertFile = "x.crt" }, 1},
		{"negative authorized ttl", func(o *Options) { o.AuthorizedTTL = -time.Second }, 1},
		{"negative unauthorized ttl", func(o *Options) { o.UnauthorizedTTL = -time.Second }, 1},
		{"no caching", func(o *Options) { o.AuthorizedTTL, o.UnauthorizedTTL = 0, 0 }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions(10259)
			tt.edit(o)
			if got := o.Validate(); len(got) != tt.want {
				t.Errorf("Validate() = %v, want %d errors", got, tt.want)
			}
		})
	}
	o := NewOptions(0)
	o.ClientCAFile = "/nonexistent/ca.crt"
	if _, err := New(o, prometheus.NewRegistry(), fakeAuthz{}); err == nil || !strings.Contains(err.Error(), "--client-ca-file") {
		t.Errorf("New with a missing CA file: %v", err)
	}
}
