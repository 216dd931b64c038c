package certs

import (
	"crypto/x509"
	"errors"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func newTestCA(t *testing.T) *CA {
	t.Helper()
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	return ca
}

func TestNewCA(t *testing.T) {
	ca := newTestCA(t)
	c := ca.Cert
	if !c.IsCA || !c.BasicConstraintsValid {
		t.Errorf("IsCA=%v BasicConstraintsValid=%v, want both true", c.IsCA, c.BasicConstraintsValid)
	}
	if c.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("KeyUsage %v lacks CertSign", c.KeyUsage)
	}
	if err := c.CheckSignatureFrom(c); err != nil {
		t.Errorf("CA is not self-signed: %v", err)
	}
	if got := c.NotAfter.Sub(c.NotBefore); got < CAValidity || got > CAValidity+time.Hour {
		t.Errorf("CA validity %v, want about %v", got, CAValidity)
	}
	if c.Subject.CommonName != "test-ca" {
		t.Errorf("CN %q, want test-ca", c.Subject.CommonName)
	}
}

func TestIssueClientCert(t *testing.T) {
	ca := newTestCA(t)
	tests := []struct {
		name string
		cn   string
		orgs []string
	}{
		{name: "admin", cn: "kubernetes-admin", orgs: []string{"system:masters"}},
		{name: "node", cn: "system:node:n1", orgs: []string{"system:nodes"}},
		{name: "no groups", cn: "system:kube-scheduler"},
		{name: "several groups", cn: "alice", orgs: []string{"dev", "ops"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := IssueClientCert(ca, tt.cn, tt.orgs)
			if err != nil {
				t.Fatalf("IssueClientCert: %v", err)
			}
			if _, err := kp.Cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Errorf("does not verify as a client certificate: %v", err)
			}
			if _, err := kp.Cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
				t.Errorf("verifies as a serving certificate, want client only")
			}
			if kp.Cert.Subject.CommonName != tt.cn || !slices.Equal(kp.Cert.Subject.Organization, tt.orgs) {
				t.Errorf("subject CN=%q O=%v, want CN=%q O=%v", kp.Cert.Subject.CommonName, kp.Cert.Subject.Organization, tt.cn, tt.orgs)
			}
			if kp.Cert.IsCA {
				t.Errorf("leaf is a CA")
			}
			if got := kp.Cert.NotAfter.Sub(kp.Cert.NotBefore); got < LeafValidity || got > LeafValidity+time.Hour {
				t.Errorf("validity %v, want about %v", got, LeafValidity)
			}
			if !publicKeysEqual(kp.Cert, kp.Key) {
				t.Errorf("certificate does not match key")
			}
		})
	}
}

func TestIssueClientCertErrors(t *testing.T) {
	ca := newTestCA(t)
	if _, err := IssueClientCert(ca, "", nil); err == nil {
		t.Errorf("empty CN: want error")
	}
	if _, err := IssueClientCert(nil, "x", nil); err == nil {
		t.Errorf("nil CA: want error")
	}
}

func TestIssueServingCert(t *testing.T) {
	ca := newTestCA(t)
	tests := []struct {
		name    string
		hosts   []string
		wantDNS []string
		wantIPs []string
		wantErr bool
	}{
		{
			name:    "mixed",
			hosts:   []string{"localhost", "127.0.0.1", "::1", "Example.COM", "10.96.0.1"},
			wantDNS: []string{"localhost", "example.com"},
			wantIPs: []string{"127.0.0.1", "::1", "10.96.0.1"},
		},
		{
			name:    "duplicates and brackets",
			hosts:   []string{"a.b", "a.b", "[fd00::1]", "fd00::1", " "},
			wantDNS: []string{"a.b"},
			wantIPs: []string{"fd00::1"},
		},
		{name: "wildcard", hosts: []string{"*.example.com"}, wantDNS: []string{"*.example.com"}},
		{name: "invalid name", hosts: []string{"not_a_name"}, wantErr: true},
		{name: "url is not a host", hosts: []string{"https://x"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := IssueServingCert(ca, "server", nil, tt.hosts)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want error")
				}
				return
			}
			if err != nil {
				t.Fatalf("IssueServingCert: %v", err)
			}
			if !slices.Equal(kp.Cert.DNSNames, tt.wantDNS) {
				t.Errorf("DNS SANs %v, want %v", kp.Cert.DNSNames, tt.wantDNS)
			}
			var ips []string
			for _, ip := range kp.Cert.IPAddresses {
				ips = append(ips, ip.String())
			}
			if !slices.Equal(ips, tt.wantIPs) {
				t.Errorf("IP SANs %v, want %v", ips, tt.wantIPs)
			}
			for _, h := range append(slices.Clone(tt.wantDNS), tt.wantIPs...) {
				if strings.HasPrefix(h, "*.") {
					h = "x" + h[1:]
				}
				if _, err := kp.Cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: h, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
					t.Errorf("does not verify for %s: %v", h, err)
				}
			}
		})
	}
}

func TestIssueValidityOverride(t *testing.T) {
	ca := newTestCA(t)
	now := time.Now()
	tests := []struct {
		name      string
		opts      []IssueOption
		wantValid bool
	}{
		{name: "default", wantValid: true},
		{name: "expired", opts: []IssueOption{WithNotBefore(now.Add(-2 * time.Hour)), WithValidity(time.Hour)}},
		{name: "not yet valid", opts: []IssueOption{WithNotBefore(now.Add(time.Hour)), WithValidity(time.Hour)}},
		{name: "short", opts: []IssueOption{WithValidity(time.Minute)}, wantValid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := IssueClientCert(ca, "user", nil, tt.opts...)
			if err != nil {
				t.Fatalf("IssueClientCert: %v", err)
			}
			_, err = kp.Cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
			if got := err == nil; got != tt.wantValid {
				t.Errorf("valid now = %v (%v), want %v", got, err, tt.wantValid)
			}
		})
	}
}

func TestLeafDoesNotOutliveCA(t *testing.T) {
	ca, err := NewCA("short-ca", WithValidity(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	kp, err := IssueClientCert(ca, "user", nil)
	if err != nil {
		t.Fatal(err)
	}
	if kp.Cert.NotAfter.After(ca.Cert.NotAfter) {
		t.Errorf("leaf NotAfter %v after CA NotAfter %v", kp.Cert.NotAfter, ca.Cert.NotAfter)
	}
}

func TestSerials(t *testing.T) {
	ca := newTestCA(t)
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	seen := map[string]bool{}
	for range 20 {
		kp, err := IssueClientCert(ca, "user", nil)
		if err != nil {
			t.Fatal(err)
		}
		s := kp.Cert.SerialNumber
		if s.Sign() <= 0 || s.Cmp(limit) >= 0 {
			t.Errorf("serial %v outside (0, 2^128)", s)
		}
		if seen[s.String()] {
			t.Errorf("serial %v repeated", s)
		}
		seen[s.String()] = true
	}
}

func TestWriteLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t)
	if err := WriteCA(dir, ca); err != nil {
		t.Fatalf("WriteCA: %v", err)
	}
	loaded, err := LoadCA(dir)
	if err != nil {
		t.Fatalf("LoadCA: %v", err)
	}
	if !loaded.Cert.Equal(ca.Cert) || !publicKeysEqual(loaded.Cert, loaded.Key) {
		t.Errorf("loaded CA differs from the written one")
	}
	kp, err := IssueClientCert(loaded, "user", []string{"g"})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyPair(dir, "user", kp); err != nil {
		t.Fatalf("WriteKeyPair: %v", err)
	}
	info, err := os.Stat(KeyFile(dir, "user"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v, want 0600", info.Mode().Perm())
	}
	got, err := LoadKeyPair(dir, "user")
	if err != nil {
		t.Fatalf("LoadKeyPair: %v", err)
	}
	if !got.Cert.Equal(kp.Cert) {
		t.Errorf("loaded certificate differs")
	}
	if _, err := LoadCA(filepath.Join(dir, "nothing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadCA of empty dir: %v, want ErrNotExist", err)
	}
}

func TestLoadErrors(t *testing.T) {
	ca := newTestCA(t)
	other := newTestCA(t)
	leaf, err := IssueClientCert(ca, "user", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{
			name: "key of another CA",
			setup: func(t *testing.T, dir string) {
				mustWriteKeyPair(t, dir, "ca", &KeyPair{Cert: ca.Cert, Key: other.Key})
			},
		},
		{
			name: "leaf as CA",
			setup: func(t *testing.T, dir string) {
				mustWriteKeyPair(t, dir, "ca", leaf)
			},
		},
		{
			name: "garbage",
			setup: func(t *testing.T, dir string) {
				mustWriteFile(t, filepath.Join(dir, "ca.crt"), []byte("not pem"))
				mustWriteFile(t, filepath.Join(dir, "ca.key"), []byte("not pem"))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			if _, err := LoadCA(dir); err == nil {
				t.Errorf("LoadCA: want error")
			}
		})
	}
}

func TestMissingSANs(t *testing.T) {
	ca := newTestCA(t)
	kp, err := IssueServingCert(ca, "s", nil, []string{"a.example", "10.0.0.1", "fd00::1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		hosts []string
		want  []string
	}{
		{name: "covered", hosts: []string{"A.example", "10.0.0.1", "fd00:0::1"}},
		{name: "subset", hosts: []string{"10.0.0.1"}},
		{name: "missing", hosts: []string{"a.example", "b.example", "10.0.0.2"}, want: []string{"b.example", "10.0.0.2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := missingSANs(kp.Cert, tt.hosts); !slices.Equal(got, tt.want) {
				t.Errorf("missingSANs = %v, want %v", got, tt.want)
			}
		})
	}
}

func mustWriteKeyPair(t *testing.T, dir, name string, kp *KeyPair) {
	t.Helper()
	if err := WriteKeyPair(dir, name, kp); err != nil {
		t.Fatalf("WriteKeyPair %s: %v", name, err)
	}
}

func mustWriteFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
