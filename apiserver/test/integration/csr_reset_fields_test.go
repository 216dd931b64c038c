package integration

import (
	"encoding/base64"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/component-base/certs"
)

// What a CertificateSigningRequest's subresources keep, as upstream's
// strategies: /status issues the certificate once and cannot change it
// (422) nor the approval; /approval cannot set or clear the certificate; an
// apply through /approval owns the conditions but not status.certificate,
// and one through /status the certificate but not status.conditions
// (upstream's reset fields).
func TestCertificateSigningRequestSubresourcesKeep(t *testing.T) {
	ts := start(t, nil)
	csrs := ts.Client.CertificatesV1().CertificateSigningRequests()
	if _, err := csrs.Create(ctx(t), &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "keep"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t), SignerName: "example.com/signer",
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	issued := func(name string) []byte {
		ca, err := certs.NewCA(name)
		if err != nil {
			t.Fatal(err)
		}
		return ca.CertPEM()
	}
	first, second := issued("first"), issued("second")

	// Approved through an apply on /approval that also names a
	// certificate: the condition is taken, the certificate is not, and the
	// manager owns the conditions only.
	applyBody := func(cert []byte, condType, reason string) []byte {
		return []byte(`{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"keep"},` +
			`"status":{"certificate":"` + base64.StdEncoding.EncodeToString(cert) + `",` +
			`"conditions":[{"type":"` + condType + `","status":"True","reason":"` + reason + `"}]}}`)
	}
	out, err := csrs.Patch(ctx(t), "keep", types.ApplyPatchType, applyBody(first, "Approved", "ByApply"),
		metav1.PatchOptions{FieldManager: "approver"}, "approval")
	if err != nil {
		t.Fatalf("apply through /approval: %v", err)
	}
	if len(out.Status.Certificate) != 0 || len(out.Status.Conditions) != 1 || out.Status.Conditions[0].Reason != "ByApply" {
		t.Fatalf("after the apply through /approval: %+v", out.Status)
	}
	if e := managedEntry(out, "approver", "approval"); e == nil || !strings.Contains(string(e.FieldsV1.Raw), "f:conditions") ||
		strings.Contains(string(e.FieldsV1.Raw), "f:certificate") || strings.Contains(string(e.FieldsV1.Raw), "f:spec") {
		t.Errorf("approver's managed fields: %+v", e)
	}

	// Issued through an apply on /status that also rewrites the Approved
	// condition: the certificate is taken, the approval kept as it was;
	// the signer owns the certificate, not the conditions.
	out, err = csrs.Patch(ctx(t), "keep", types.ApplyPatchType, applyBody(first, "Approved", "BySigner"),
		metav1.PatchOptions{FieldManager: "signer"}, "status")
	if err != nil {
		t.Fatalf("apply through /status: %v", err)
	}
	if string(out.Status.Certificate) != string(first) || len(out.Status.Conditions) != 1 || out.Status.Conditions[0].Reason != "ByApply" {
		t.Fatalf("after the apply through /status: %+v", out.Status)
	}
	if e := managedEntry(out, "signer", "status"); e == nil || !strings.Contains(string(e.FieldsV1.Raw), "f:certificate") ||
		strings.Contains(string(e.FieldsV1.Raw), "f:conditions") {
		t.Errorf("signer's managed fields: %+v", e)
	}

	// Once issued, /status cannot change the certificate (422 on
	// status.certificate) ...
	cur := out.DeepCopy()
	cur.Status.Certificate = second
	_, err = csrs.UpdateStatus(ctx(t), cur, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "status.certificate") {
		t.Errorf("changing the certificate through /status: %v, want 422 on status.certificate", err)
	}
	// ... and /approval neither changes nor clears it: it is kept.
	for _, cert := range [][]byte{second, nil} {
		cur, err := csrs.Get(ctx(t), "keep", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Status.Certificate = cert
		got, err := csrs.UpdateApproval(ctx(t), "keep", cur, metav1.UpdateOptions{})
		if err != nil || string(got.Status.Certificate) != string(first) || len(got.Status.Conditions) != 1 {
			t.Errorf("approval with certificate %d bytes: %v %+v", len(cert), err, got.Status)
		}
	}
}
