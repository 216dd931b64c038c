package validation

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var keyUsages = sets.New(certificatesv1.UsageSigning, certificatesv1.UsageDigitalSignature, certificatesv1.UsageContentCommitment,
	certificatesv1.UsageKeyEncipherment, certificatesv1.UsageKeyAgreement, certificatesv1.UsageDataEncipherment,
	certificatesv1.UsageCertSign, certificatesv1.UsageCRLSign, certificatesv1.UsageEncipherOnly, certificatesv1.UsageDecipherOnly,
	certificatesv1.UsageAny, certificatesv1.UsageServerAuth, certificatesv1.UsageClientAuth, certificatesv1.UsageCodeSigning,
	certificatesv1.UsageEmailProtection, certificatesv1.UsageSMIME, certificatesv1.UsageIPsecEndSystem,
	certificatesv1.UsageIPsecTunnel, certificatesv1.UsageIPsecUser, certificatesv1.UsageTimestamping,
	certificatesv1.UsageOCSPSigning, certificatesv1.UsageMicrosoftSGC, certificatesv1.UsageNetscapeSGC)

// ValidateCertificateSigningRequest: a PEM CERTIFICATE REQUEST, a signer
// name, known usages, a valid expiration and consistent conditions.
func ValidateCertificateSigningRequest(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	// Upstream does not care what CSRs are called (a kubelet's are
	// node-csr-<base64url>), beyond their being a path segment.
	allErrs := validateObjectMeta(&csr.ObjectMeta, false, path.ValidatePathSegmentName, metadataPath)
	spec := field.NewPath("spec")
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		allErrs = append(allErrs, field.Invalid(spec.Child("request"), csr.Spec.Request, "PEM block type must be CERTIFICATE REQUEST"))
	} else if _, err := x509.ParseCertificateRequest(block.Bytes); err != nil {
		allErrs = append(allErrs, field.Invalid(spec.Child("request"), csr.Spec.Request, err.Error()))
	}
	if csr.Spec.SignerName == "" {
		allErrs = append(allErrs, field.Required(spec.Child("signerName"), ""))
	} else if !strings.Contains(csr.Spec.SignerName, "/") {
		allErrs = append(allErrs, field.Invalid(spec.Child("signerName"), csr.Spec.SignerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'"))
	}
	if len(csr.Spec.Usages) == 0 {
		allErrs = append(allErrs, field.Required(spec.Child("usages"), ""))
	}
	for i, u := range csr.Spec.Usages {
		if !keyUsages.Has(u) {
			allErrs = append(allErrs, field.NotSupported(spec.Child("usages").Index(i), u, sets.List(keyUsages)))
		}
	}
	if e := csr.Spec.ExpirationSeconds; e != nil && *e < 600 {
		allErrs = append(allErrs, field.Invalid(spec.Child("expirationSeconds"), *e, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	return append(allErrs, validateCSRStatus(csr)...)
}

func validateCSRStatus(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	var allErrs field.ErrorList
	cp := field.NewPath("status", "conditions")
	approved, denied := false, false
	seen := sets.New[certificatesv1.RequestConditionType]()
	for i, c := range csr.Status.Conditions {
		if c.Type == "" {
			allErrs = append(allErrs, field.Required(cp.Index(i).Child("type"), ""))
		}
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		}
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed {
			if seen.Has(c.Type) {
				allErrs = append(allErrs, field.Duplicate(cp.Index(i).Child("type"), c.Type))
			}
			seen.Insert(c.Type)
			if c.Status != corev1.ConditionTrue {
				allErrs = append(allErrs, field.NotSupported(cp.Index(i).Child("status"), c.Status, []string{string(corev1.ConditionTrue)}))
			}
		}
	}
	if approved && denied {
		allErrs = append(allErrs, field.Invalid(cp, csr.Status.Conditions, "Approved and Denied conditions are mutually exclusive"))
	}
	if len(csr.Status.Certificate) > 0 && !approved {
		allErrs = append(allErrs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", "certificate can only be set if the Approved condition is present"))
	}
	return allErrs
}

// ValidateCertificateSigningRequestUpdate: an Approved, Denied or Failed
// condition once set stays (as upstream's), and a certificate once issued
// does not change.
func ValidateCertificateSigningRequestUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&csr.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateCertificateSigningRequest(csr)...)
	cp := field.NewPath("status", "conditions")
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if hasCSRCondition(old, t) && !hasCSRCondition(csr, t) {
			allErrs = append(allErrs, field.Forbidden(cp, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if len(old.Status.Certificate) > 0 && string(old.Status.Certificate) != string(csr.Status.Certificate) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
	}
	return allErrs
}

func hasCSRCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}
