package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"skiff.dev/component-base/certs"
)

func TestAuthentication(t *testing.T) {
	ts := start(t, nil)
	caPEM, err := os.ReadFile(filepath.Join(ts.PKIDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	ca, err := certs.LoadCA(ts.PKIDir)
	if err != nil {
		t.Fatal(err)
	}
	foreignCA, err := certs.NewCA("foreign")
	if err != nil {
		t.Fatal(err)
	}
	clientWith := func(kp *certs.KeyPair) *http.Client {
		cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		if kp != nil {
			keyPEM, err := kp.KeyPEM()
			if err != nil {
				t.Fatal(err)
			}
			c, err := tls.X509KeyPair(kp.CertPEM(), keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{c}
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
	}
	valid, err := certs.IssueClientCert(ca, "alice", []string{"devs"})
	if err != nil {
		t.Fatal(err)
	}
	expired, err := certs.IssueClientCert(ca, "bob", nil, certs.WithNotBefore(time.Now().Add(-48*time.Hour)), certs.WithValidity(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := certs.IssueClientCert(foreignCA, "mallory", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		cert  *certs.KeyPair
		token string
		path  string
		want  int
	}{
		{name: "anonymous", path: "/api/v1/namespaces", want: 401},
		{name: "anonymous healthz", path: "/healthz", want: 200},
		{name: "anonymous livez", path: "/livez", want: 200},
		{name: "anonymous readyz", path: "/readyz", want: 200},
		{name: "client certificate", cert: valid, path: "/api", want: 200},
		{name: "client certificate without a role", cert: valid, path: "/api/v1/namespaces", want: 403},
		{name: "expired certificate", cert: expired, path: "/api/v1/namespaces", want: 401},
		{name: "foreign CA", cert: foreign, path: "/api/v1/namespaces", want: 401},
		{name: "bearer token", token: "test-user-token", path: "/version", want: 200},
		{name: "admin bearer token", token: "test-admin-token", path: "/api/v1/namespaces", want: 200},
		{name: "forged token", token: "test-user-tokem", path: "/api/v1/namespaces", want: 401},
		{name: "metrics need credentials", path: "/metrics", want: 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, ts.URL+tc.path, nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := clientWith(tc.cert).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s: %d, want %d", tc.path, resp.StatusCode, tc.want)
			}
		})
	}
}
