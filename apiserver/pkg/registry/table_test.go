package registry

import (
	"context"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	"skiff.dev/apiserver/pkg/authn"
)

func TestCSRStrategies(t *testing.T) {
	ctx := authn.WithUser(context.Background(), &authn.User{Name: "alice", UID: "u", Groups: []string{"dev"},
		Extra: map[string][]string{"authentication.kubernetes.io/credential-id": {"JTI=1"}}})
	r := resourceOfKind(t, "CertificateSigningRequest")
	csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Username: "mallory", SignerName: "a/b",
		Extra: map[string]certificatesv1.ExtraValue{"forged": {"yes"}}},
		Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("x")}}
	r.Strategy.PrepareForCreate(ctx, csr)
	if csr.Spec.Username != "alice" || csr.Spec.UID != "u" || len(csr.Spec.Groups) != 1 || len(csr.Status.Certificate) != 0 {
		t.Errorf("created = %+v", csr)
	}
	// As upstream: extra is the requester's, never the client's.
	if len(csr.Spec.Extra) != 1 || len(csr.Spec.Extra["authentication.kubernetes.io/credential-id"]) != 1 || csr.Spec.Extra["authentication.kubernetes.io/credential-id"][0] != "JTI=1" {
		t.Errorf("extra = %v, want the requester's credential-id only", csr.Spec.Extra)
	}
	approved := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}
	old := csr.DeepCopy()
	// /status cannot add Approved, but can set the certificate.
	st := old.DeepCopy()
	st.Spec.SignerName = "changed/too"
	st.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved}
	r.StatusStrategy.PrepareForUpdate(ctx, st, old)
	if st.Spec.SignerName != "a/b" {
		t.Errorf("/status changed the spec")
	}
	if errs := r.StatusStrategy.ValidateUpdate(ctx, st, old); len(errs) == 0 {
		t.Errorf("/status added Approved without error")
	}
	// /approval adds it, keeping the certificate as it was.
	ap := old.DeepCopy()
	ap.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved}
	ap.Status.Certificate = []byte("forged")
	r.Approval.PrepareForUpdate(ctx, ap, old)
	if len(ap.Status.Conditions) != 1 || ap.Status.Conditions[0].LastUpdateTime.IsZero() || len(ap.Status.Certificate) != 0 {
		t.Errorf("approval = %+v", ap.Status)
	}
	// The main endpoint keeps status.
	main := ap.DeepCopy()
	main.Status.Conditions = nil
	r.Strategy.PrepareForUpdate(ctx, main, ap)
	if len(main.Status.Conditions) != 1 {
		t.Errorf("main endpoint dropped conditions")
	}
}

func resourceOfKind(t *testing.T, kind string) *Resource {
	for _, r := range Resources() {
		if r.Kind == kind {
			return r
		}
	}
	t.Fatalf("no %s in the table", kind)
	return nil
}

func TestEveryResourceIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Resources() {
		key := r.GroupVersion().WithResource(r.Resource).String()
		if seen[key] {
			t.Errorf("%s twice in the table", key)
		}
		seen[key] = true
		if r.New == nil || r.NewList == nil || r.Strategy == nil || r.EtcdPrefix == "" || r.SingularName == "" {
			t.Errorf("%s: incomplete row", key)
		}
		if obj := r.New(); obj == nil {
			t.Errorf("%s: New returned nil", key)
		}
	}
}
