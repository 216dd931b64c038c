package certificates

import (
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// The signers this package signs for (upstream's names).
const (
	KubeAPIServerClientSigner        = certificatesv1.KubeAPIServerClientSignerName
	KubeAPIServerClientKubeletSigner = certificatesv1.KubeAPIServerClientKubeletSignerName
	KubeletServingSigner             = certificatesv1.KubeletServingSignerName
)

const (
	nodesGroup     = "system:nodes"
	nodeUserPrefix = "system:node:"
)

var (
	kubeletClientUsages   = []certificatesv1.KeyUsage{certificatesv1.UsageKeyEncipherment, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	kubeletServingUsages  = []certificatesv1.KeyUsage{certificatesv1.UsageKeyEncipherment, certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
	apiServerClientUsages = []certificatesv1.KeyUsage{certificatesv1.UsageKeyEncipherment, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
)

// checkUsages wants every usage in allowed and required among them.
func checkUsages(usages []certificatesv1.KeyUsage, allowed []certificatesv1.KeyUsage, required certificatesv1.KeyUsage) error {
	for _, u := range usages {
		if !slices.Contains(allowed, u) {
			return fmt.Errorf("usage %q is not allowed (allowed: %s)", u, usagesString(allowed))
		}
	}
	if !slices.Contains(usages, required) {
		return fmt.Errorf("usage %q is required", required)
	}
	return nil
}

func usagesString(us []certificatesv1.KeyUsage) string {
	s := make([]string, len(us))
	for i, u := range us {
		s[i] = string(u)
	}
	return strings.Join(s, ", ")
}

// nodeSubject checks that the request is for a node: O=system:nodes alone,
// CN=system:node:<name>.
func nodeSubject(req *x509.CertificateRequest) error {
	if len(req.Subject.Organization) != 1 || req.Subject.Organization[0] != nodesGroup {
		return fmt.Errorf("subject organization must be exactly [%q]", nodesGroup)
	}
	if !strings.HasPrefix(req.Subject.CommonName, nodeUserPrefix) || len(req.Subject.CommonName) == len(nodeUserPrefix) {
		return fmt.Errorf("subject common name must begin with %q and name the node", nodeUserPrefix)
	}
	return nil
}

// ValidateKubeletClientCSR is upstream's rule for a node's client
// certificate: a node subject, no subject alternative names, client auth.
func ValidateKubeletClientCSR(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if err := nodeSubject(req); err != nil {
		return err
	}
	if len(req.DNSNames) > 0 || len(req.EmailAddresses) > 0 || len(req.IPAddresses) > 0 || len(req.URIs) > 0 {
		return errors.New("a kubelet client certificate may have no subject alternative names")
	}
	return checkUsages(usages, kubeletClientUsages, certificatesv1.UsageClientAuth)
}

// ValidateKubeletServingCSR is upstream's rule for a node's serving
// certificate: a node subject, at least one DNS name or IP address and no
// other names, server auth.
func ValidateKubeletServingCSR(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if err := nodeSubject(req); err != nil {
		return err
	}
	if len(req.EmailAddresses) > 0 || len(req.URIs) > 0 {
		return errors.New("a kubelet serving certificate may have no email or URI subject alternative names")
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return errors.New("a kubelet serving certificate needs at least one DNS name or IP address")
	}
	return checkUsages(usages, kubeletServingUsages, certificatesv1.UsageServerAuth)
}

// signsFor says whether the signer signs for signerName.
func signsFor(signerName string) bool {
	switch signerName {
	case KubeAPIServerClientSigner, KubeAPIServerClientKubeletSigner, KubeletServingSigner:
		return true
	}
	return false
}

// validateForSigner says whether the signer may issue the request (for one
// of the signers signsFor accepts).
func validateForSigner(signer string, req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	switch signer {
	case KubeAPIServerClientSigner:
		return checkUsages(usages, apiServerClientUsages, certificatesv1.UsageClientAuth)
	case KubeAPIServerClientKubeletSigner:
		return ValidateKubeletClientCSR(req, usages)
	case KubeletServingSigner:
		return ValidateKubeletServingCSR(req, usages)
	}
	return fmt.Errorf("signer %q is not one of this signer's", signer)
}
