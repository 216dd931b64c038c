package certificate

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
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key}
}

// issue returns a client certificate and key (PEM) for cn.
func (ca *testCA) issue(t *testing.T, cn string, serial int64, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: notAfter, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// fakeManager is a certificate.Manager whose current certificate the test
// sets.
type fakeManager struct {
	mu   sync.Mutex
	cert *tls.Certificate
}

var _ certificate.Manager = (*fakeManager)(nil)

func (m *fakeManager) Start()              {}
func (m *fakeManager) Stop()               {}
func (m *fakeManager) ServerHealthy() bool { return true }
func (m *fakeManager) Current() *tls.Certificate {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cert
}
func (m *fakeManager) set(c *tls.Certificate) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cert = c
}

func TestUpdateTransportFollowsRotation(t *testing.T) {
	ca := newCA(t)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.TLS.PeerCertificates[0].Subject.CommonName))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	serverCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	pair := func(cn string, serial int64) *tls.Certificate {
		c, k := ca.issue(t, cn, serial, time.Now().Add(time.Hour))
		cert, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		return &cert
	}
	m := &fakeManager{cert: pair("first", 2)}
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: serverCA}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := UpdateTransport(ctx, cfg, m, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	get := func() string {
		resp, err := client.Get(srv.URL)
		if err != nil {
			return "error: " + err.Error()
		}
		defer resp.Body.Close()
		b := make([]byte, 64)
		n, _ := resp.Body.Read(b)
		return string(b[:n])
	}
	if got := get(); got != "first" {
		t.Fatalf("first request as %q", got)
	}
	m.set(pair("second", 3))
	// The open connection is closed once the rotation is seen; the next
	// one presents the new certificate.
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return get() == "second", nil
	})
	if err != nil {
		t.Fatalf("requests still as %q after the rotation", get())
	}
	if err := UpdateTransport(ctx, cfg, m, 0); err == nil {
		t.Error("a second UpdateTransport on the same config was accepted")
	}
}

func TestKubeconfigStillValid(t *testing.T) {
	ca := newCA(t)
	dir := t.TempDir()
	write := func(name string, notAfter time.Time) string {
		c, k := ca.issue(t, "system:node:n1", 5, notAfter)
		pemPath := filepath.Join(dir, name+".pem")
		if err := os.WriteFile(pemPath, append(c, k...), 0o600); err != nil {
			t.Fatal(err)
		}
		kc := filepath.Join(dir, name+".kubeconfig")
		if err := writeKubeconfig(&rest.Config{Host: "https://127.0.0.1:1"}, kc, pemPath); err != nil {
			t.Fatal(err)
		}
		return kc
	}
	now := time.Now()
	tests := []struct {
		name string
		path string
		want bool
	}{
		{name: "good", path: write("good", now.Add(time.Hour)), want: true},
		{name: "expired", path: write("expired", now.Add(-time.Minute))},
		{name: "missing", path: filepath.Join(dir, "none")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := kubeconfigStillValid(tt.path, now)
			if got != tt.want {
				t.Errorf("valid = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDigestedNameIsStable(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	a, _ := digestedName(key.Public(), NodeSubject("n1"), clientUsages(key))
	b, _ := digestedName(key.Public(), NodeSubject("n1"), clientUsages(key))
	c, _ := digestedName(other.Public(), NodeSubject("n1"), clientUsages(key))
	d, _ := digestedName(key.Public(), NodeSubject("n2"), clientUsages(key))
	if a != b || a == c || a == d || len(a) < len("node-csr-")+10 {
		t.Errorf("names: %s %s %s %s", a, b, c, d)
	}
}

func TestClientManagerStartsFromTheKubeconfigsCertificate(t *testing.T) {
	ca := newCA(t)
	dir := t.TempDir()
	c, k := ca.issue(t, "system:node:n1", 9, time.Now().Add(time.Hour))
	certFile, keyFile := filepath.Join(dir, "given.crt"), filepath.Join(dir, "given.key")
	if err := os.WriteFile(certFile, c, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, k, 0o600); err != nil {
		t.Fatal(err)
	}
	noClient := func(*tls.Certificate) (kubernetes.Interface, error) {
		return nil, errors.New("no API server in this test")
	}
	tests := []struct {
		name   string
		source ClientSource
		want   bool
	}{
		{name: "files", source: ClientSource{CertFile: certFile, KeyFile: keyFile}, want: true},
		{name: "data", source: ClientSource{CertData: c, KeyData: k}, want: true},
		{name: "nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewClientManager(filepath.Join(t.TempDir(), "pki"), "n1", tt.source, noClient)
			if err != nil {
				t.Fatal(err)
			}
			cur := m.Current()
			if (cur != nil) != tt.want {
				t.Fatalf("current = %v, want one: %v", cur != nil, tt.want)
			}
			if cur != nil && cur.Leaf.SerialNumber.Int64() != 9 {
				t.Errorf("current serial = %v", cur.Leaf.SerialNumber)
			}
		})
	}
}

func TestServingTemplateFollowsTheReportedAddresses(t *testing.T) {
	var addrs []corev1.NodeAddress
	tmpl := servingTemplate("n1", func() []corev1.NodeAddress { return addrs })
	if got := tmpl(); got != nil {
		t.Fatalf("template before any address = %+v, want none (no CSR yet)", got)
	}
	// A host name alone is not enough: upstream asks for an IP address.
	addrs = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "n1"}}
	if got := tmpl(); got != nil {
		t.Fatalf("template with only a host name = %+v, want none", got)
	}
	addrs = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "192.0.2.1"},
		{Type: corev1.NodeHostName, Address: "n1"},
		{Type: corev1.NodeExternalIP, Address: "not-an-ip"},
		{Type: corev1.NodeInternalDNS, Address: "n1.example"},
		{Type: corev1.NodeHostName, Address: "192.0.2.1"},
		{Type: corev1.NodeExternalIP, Address: "2001:db8::1"},
	}
	got := tmpl()
	if got == nil {
		t.Fatal("no template with an IP address")
	}
	if got.Subject.CommonName != "system:node:n1" || len(got.Subject.Organization) != 1 || got.Subject.Organization[0] != "system:nodes" {
		t.Errorf("subject = %+v", got.Subject)
	}
	if fmt.Sprint(got.DNSNames) != "[n1 n1.example]" || fmt.Sprint(got.IPAddresses) != "[192.0.2.1 2001:db8::1]" {
		t.Errorf("names %v, IPs %v", got.DNSNames, got.IPAddresses)
	}
}
