package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
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
		case r.URL.Query().Get("timeout") != "1s":
			http.Error(w, "timeout parameter "+r.URL.RawQuery, http.StatusBadRequest)
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
		// httptest's certificate names example.com.
		return srv.URL + path, "example.com", nil
	}}
	ctx := context.Background()

	out, err := c.Post(ctx, Endpoint{URL: url("/x"), CABundle: ca}, []byte(`{}`), time.Second)
	if err != nil || !strings.HasSuffix(string(out), ":{}") {
		t.Errorf("post by URL: %q %v", out, err)
	}
	path := "/p"
	out, err = c.Post(ctx, Endpoint{Namespace: "n", Name: "s", Path: &path, CABundle: ca}, []byte(`{}`), time.Second)
	if err != nil || !strings.HasPrefix(string(out), "echo:example.com:") {
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

// A service is dialled at its cluster IP but its certificate names the
// service's DNS name only (no IP SANs, as the conformance webhooks'
// certificates): the client checks the certificate for the resolver's
// server name, as upstream's does.
func TestPostServiceCertificateForServerName(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "e2e-test-webhook.ns.svc"},
		DNSNames:     []string{"e2e-test-webhook.ns.svc"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	c := &Clients{Resolve: func(_ context.Context, ns, name string, port int32, path string) (string, string, error) {
		return srv.URL + path, name + "." + ns + ".svc", nil
	}}
	ctx := context.Background()
	out, err := c.Post(ctx, Endpoint{Namespace: "ns", Name: "e2e-test-webhook", CABundle: ca}, []byte(`{}`), 5*time.Second)
	if err != nil || string(out) != "ok" {
		t.Errorf("post to the service: %q %v", out, err)
	}
	// By URL (the IP), the same certificate does not name the host.
	if _, err := c.Post(ctx, Endpoint{URL: &srv.URL, CABundle: ca}, nil, 5*time.Second); err == nil {
		t.Error("a certificate that does not name the URL's host was accepted")
	}
}
