package validation

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// validCSR is a CertificateSigningRequest with a real PEM request and the
// given conditions.
func validCSR(t *testing.T, conds ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-1", ResourceVersion: "7"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: "example.com/signer",
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		},
	}
	csr.Status.Conditions = csrConditions(conds...)
	return csr
}

// csrConditions are true conditions of the given types.
func csrConditions(types ...certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range types {
		out = append(out, certificatesv1.CertificateSigningRequestCondition{Type: c, Status: corev1.ConditionTrue})
	}
	return out
}

// An update may not remove an Approved, Denied or Failed condition (as
// upstream's ValidateCertificateSigningRequestUpdate); other conditions may
// come and go.
func TestCSRUpdateKeepsTerminalConditions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new []certificatesv1.RequestConditionType
		want     string // "" for no error
	}{
		{name: "approved removed", old: []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved}, want: `may not remove a condition of type "Approved"`},
		{name: "denied removed", old: []certificatesv1.RequestConditionType{certificatesv1.CertificateDenied}, want: `may not remove a condition of type "Denied"`},
		{
			name: "failed removed",
			old:  []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateFailed},
			new:  []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved},
			want: `may not remove a condition of type "Failed"`,
		},
		{name: "failed kept", old: []certificatesv1.RequestConditionType{certificatesv1.CertificateFailed}, new: []certificatesv1.RequestConditionType{certificatesv1.CertificateFailed}},
		{name: "failed added", new: []certificatesv1.RequestConditionType{certificatesv1.CertificateFailed}},
		{name: "other condition removed", old: []certificatesv1.RequestConditionType{"Pending"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := validCSR(t, tc.old...)
			csr := old.DeepCopy()
			csr.Status.Conditions = csrConditions(tc.new...)
			errs := ValidateCertificateSigningRequestUpdate(csr, old)
			if tc.want == "" {
				if len(errs) != 0 {
					t.Fatalf("errors %v, want none", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != "status.conditions" || !strings.Contains(errs[0].Detail, tc.want) {
				t.Fatalf("errors %v, want one on status.conditions saying %s", errs, tc.want)
			}
		})
	}
}
