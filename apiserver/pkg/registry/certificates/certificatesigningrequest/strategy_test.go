package certificatesigningrequest

import (
	"context"
	"reflect"
	"sort"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	"skiff.dev/apiserver/pkg/registry/rest"
)

func pathStrings(ps []fieldpath.Path) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	sort.Strings(out)
	return out
}

// The reset fields of each endpoint are upstream's (v1.32 strategy.go):
// main spec and status, /status spec and status.conditions, /approval spec
// and status.certificate.
func TestResetFields(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    rest.ResetFieldsStrategy
		want []string
	}{
		{"main", Strategy, []string{".spec", ".status"}},
		{"status", StatusStrategy, []string{".spec", ".status.conditions"}},
		{"approval", ApprovalStrategy, []string{".spec", ".status.certificate"}},
	} {
		if got := pathStrings(tc.s.GetResetFields()); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: reset fields %v, want %v", tc.name, got, tc.want)
		}
	}
}

func csrWith(signer string, cert string, conds ...certificatesv1.CertificateSigningRequestCondition) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "1"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: signer, Username: "u"},
		Status:     certificatesv1.CertificateSigningRequestStatus{Certificate: []byte(cert), Conditions: conds},
	}
}

func cond(t certificatesv1.RequestConditionType, reason string) certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason}
}

// What each endpoint's PrepareForUpdate keeps from the stored object, as
// upstream's: the main endpoint spec and status; /status the spec and the
// Approved and Denied conditions (other conditions and the certificate are
// the writer's); /approval the spec and the certificate (the conditions are
// the writer's).
func TestPrepareForUpdateKeeps(t *testing.T) {
	ctx := context.Background()
	old := csrWith("example.com/signer", "old-cert", cond(certificatesv1.CertificateApproved, "ByAdmin"))

	n := csrWith("example.com/other", "new-cert", cond(certificatesv1.CertificateApproved, "Changed"))
	Strategy.PrepareForUpdate(ctx, n, old.DeepCopy())
	if n.Spec.SignerName != "example.com/signer" || string(n.Status.Certificate) != "old-cert" || n.Status.Conditions[0].Reason != "ByAdmin" {
		t.Errorf("main: %+v", n)
	}

	n = csrWith("example.com/other", "new-cert",
		cond(certificatesv1.CertificateFailed, "SignerFailed"), cond(certificatesv1.CertificateApproved, "Changed"))
	StatusStrategy.PrepareForUpdate(ctx, n, old.DeepCopy())
	if n.Spec.SignerName != "example.com/signer" || string(n.Status.Certificate) != "new-cert" ||
		len(n.Status.Conditions) != 2 || n.Status.Conditions[0].Reason != "SignerFailed" || n.Status.Conditions[1].Reason != "ByAdmin" ||
		n.Status.Conditions[0].LastUpdateTime.IsZero() || n.Status.Conditions[0].LastTransitionTime.IsZero() {
		t.Errorf("status: %+v", n)
	}
	// A Denied condition added through /status is not turned into
	// anything else: validation refuses it.
	n = csrWith("example.com/signer", "old-cert", cond(certificatesv1.CertificateApproved, "ByAdmin"), cond(certificatesv1.CertificateDenied, "Sneaky"))
	StatusStrategy.PrepareForUpdate(ctx, n, old.DeepCopy())
	if len(n.Status.Conditions) != 2 || n.Status.Conditions[1].Reason != "Sneaky" {
		t.Errorf("status adding Denied: %+v", n.Status.Conditions)
	}
	if errs := StatusStrategy.ValidateUpdate(ctx, n, old.DeepCopy()); len(errs) == 0 {
		t.Errorf("status adding Denied: no error")
	}

	n = csrWith("example.com/other", "new-cert", cond(certificatesv1.CertificateApproved, "Changed"))
	ApprovalStrategy.PrepareForUpdate(ctx, n, old.DeepCopy())
	if n.Spec.SignerName != "example.com/signer" || string(n.Status.Certificate) != "old-cert" ||
		len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Reason != "Changed" {
		t.Errorf("approval: %+v", n)
	}
	// Nor can /approval clear the certificate.
	n = csrWith("example.com/signer", "", cond(certificatesv1.CertificateApproved, "ByAdmin"))
	ApprovalStrategy.PrepareForUpdate(ctx, n, old.DeepCopy())
	if string(n.Status.Certificate) != "old-cert" {
		t.Errorf("approval clearing the certificate: %q", n.Status.Certificate)
	}
}
