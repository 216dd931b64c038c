// Package certificatesigningrequest holds the CertificateSigningRequest
// kind's strategies (main, status, approval) and selectable fields.
package certificatesigningrequest

import (
	"context"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// CertificateSigningRequest strategies, as upstream's: the main endpoint
// changes neither spec nor status; /status may set the certificate and
// conditions other than Approved and Denied; /approval only the conditions.
// Their reset fields are upstream's too: the main endpoint resets spec and
// status, /status spec and status.conditions, /approval spec and
// status.certificate.

// SubApproval names the approval subresource.
const SubApproval = "approval"

// Strategy is the main endpoint; StatusStrategy /status; ApprovalStrategy
// /approval.
var (
	Strategy         = csrStrategy{rest.Main(validated, rest.ResetFields(fieldpath.MakePathOrDie("spec")))}
	StatusStrategy   = csrStatusStrategy{rest.Status(validated, rest.ResetFields(fieldpath.MakePathOrDie("status", "conditions")))}
	ApprovalStrategy = csrApprovalStrategy{rest.Status(validated, rest.ResetFields(fieldpath.MakePathOrDie("status", "certificate")))}
)

var validated = rest.Validation(validation.ValidateCertificateSigningRequest, validation.ValidateCertificateSigningRequestUpdate)

type csrStrategy struct{ rest.Generic }

func (s csrStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	s.Generic.PrepareForCreate(ctx, obj)
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return
	}
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	if u, ok := authn.UserFrom(ctx); ok && u != nil {
		csr.Spec.Username, csr.Spec.UID = u.Name, u.UID
		csr.Spec.Groups = append([]string(nil), u.Groups...)
		for k, v := range u.Extra {
			if csr.Spec.Extra == nil {
				csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
			}
			csr.Spec.Extra[k] = append(certificatesv1.ExtraValue(nil), v...)
		}
	}
}

func (s csrStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.Generic.PrepareForUpdate(ctx, obj, old)
	rest.CopyField(obj, old, "Spec")
}

type csrStatusStrategy struct{ rest.Generic }

func (s csrStatusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.Generic.PrepareForUpdate(ctx, obj, old)
	n, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		preserveCSRCondition(n, o, t)
	}
	stampCSRConditions(n, o)
}

// ValidateUpdate refuses adding Approved or Denied through /status.
func (s csrStatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	n, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	errs := validation.ValidateCertificateSigningRequestUpdate(n, o)
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		if countCSRCondition(n, t) > countCSRCondition(o, t) {
			errs = append(errs, field.Forbidden(field.NewPath("status", "conditions"), fmt.Sprintf("updates may not add a condition of type %q", t)))
		}
	}
	return errs
}

type csrApprovalStrategy struct{ rest.Generic }

// PrepareForUpdate keeps the spec and the whole status but its conditions,
// as upstream's.
func (s csrApprovalStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.Generic.PrepareForUpdate(ctx, obj, old)
	n, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	stampCSRConditions(n, o)
	conds := n.Status.Conditions
	n.Status = *o.Status.DeepCopy()
	n.Status.Conditions = conds
}

// Subresource names the endpoint: approval.
func (s csrApprovalStrategy) Subresource() string { return SubApproval }

// preserveCSRCondition puts old's conditions of type t in place of new's,
// as upstream's preserveConditionInstances: only when new has as many of
// them as old (an added or removed one is left for validation to refuse).
func preserveCSRCondition(n, o *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	oldIdx, newIdx := csrConditionIndices(o, t), csrConditionIndices(n, t)
	if len(oldIdx) != len(newIdx) {
		return
	}
	for i, oi := range oldIdx {
		n.Status.Conditions[newIdx[i]] = o.Status.Conditions[oi]
	}
}

func csrConditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

func countCSRCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) int {
	return len(csrConditionIndices(csr, t))
}

// stampCSRConditions sets lastUpdateTime and lastTransitionTime as upstream's
// populateConditionTimestamps does.
func stampCSRConditions(n, o *certificatesv1.CertificateSigningRequest) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	for i := range n.Status.Conditions {
		c := &n.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, oc := range o.Status.Conditions {
			if oc.Type == c.Type && oc.Status == c.Status && !oc.LastTransitionTime.IsZero() {
				c.LastTransitionTime = oc.LastTransitionTime
				break
			}
		}
	}
}

// Fields are a CertificateSigningRequest's selectable fields.
func Fields(obj runtime.Object) fields.Set {
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return nil
	}
	return fields.Set{"spec.signerName": csr.Spec.SignerName}
}
