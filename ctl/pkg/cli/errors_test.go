package cli

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestExplain(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", fmt.Errorf(`User "alice" cannot list resource "secrets" in API group "" in the namespace "kube-system"`))
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, "web", field.ErrorList{
		field.Invalid(field.NewPath("spec", "replicas"), -1, "must be greater than or equal to 0"),
	})
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	expired := &url.Error{Op: "Get", URL: "https://x", Err: x509.CertificateInvalidError{Reason: x509.Expired, Detail: "current time 2026 is after 2025"}}
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"403", forbidden, []string{"Error from server (Forbidden)", `User "alice" cannot list resource "secrets"`, `who: alice; what: list resource "secrets"`}},
		{"422", invalid, []string{"Error from server (Invalid)", "spec.replicas: Invalid value: -1: must be greater than or equal to 0"}},
		{"404 wrapped", fmt.Errorf("reading x: %w", apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p")), []string{`reading x: Error from server (NotFound): pods "p" not found`}},
		{"401", apierrors.NewUnauthorized("Unauthorized"), []string{"Error from server (Unauthorized)", "did not accept the credentials"}},
		{"refused", refused, []string{"cannot reach the API server at https://127.0.0.1:6443: connection refused"}},
		{"server cert expired", expired, []string{"API server's certificate is not valid now", "skiffctl certs"}},
		{"stale update", apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "c", errors.New("the object has been modified")), []string{"Error from server (Conflict)", "run the command again"}},
		{"apply conflict", apierrors.NewApplyConflict([]metav1.StatusCause{{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl"`, Field: ".data.a"}}, `Apply failed with 1 conflict: conflict with "kubectl": .data.a`),
			[]string{`conflict with "kubectl": .data.a`, "--force-conflicts", "remove them from the manifest"}},
		{"unknown CA", &url.Error{Op: "Get", URL: "https://x", Err: x509.UnknownAuthorityError{}}, []string{"CA did not sign"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Explain(tt.err, "https://127.0.0.1:6443").Error()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Explain = %q, want it to contain %q", got, w)
				}
			}
		})
	}
	plain := errors.New("plain")
	if Explain(plain, "") != plain {
		t.Error("Explain changed an error it knows nothing about")
	}
}

func TestCheckClientCertificate(t *testing.T) {
	mk := func(notBefore, notAfter time.Time) []byte {
		key, _ := rsa.GenerateKey(rand.Reader, 1024)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "admin"}, NotBefore: notBefore, NotAfter: notAfter}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	now := time.Now()
	if err := CheckClientCertificate(mk(now.Add(-time.Hour), now.Add(time.Hour)), now); err != nil {
		t.Errorf("valid certificate: %v", err)
	}
	err := CheckClientCertificate(mk(now.Add(-2*time.Hour), now.Add(-time.Hour)), now)
	if err == nil || !strings.Contains(err.Error(), "CN=admin) expired at") {
		t.Errorf("expired certificate: %v", err)
	}
	err = CheckClientCertificate(mk(now.Add(time.Hour), now.Add(2*time.Hour)), now)
	if err == nil || !strings.Contains(err.Error(), "not valid before") {
		t.Errorf("future certificate: %v", err)
	}
	if err := CheckClientCertificate(nil, now); err != nil {
		t.Errorf("no certificate: %v", err)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"pods", "pods", 0}, {"podd", "pod", 1}, {"deploymnets", "deployments", 2}, {"", "abc", 3}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

var _ = metav1.Now
