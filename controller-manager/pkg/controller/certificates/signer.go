package certificates

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// SignerName is the signer's name, as upstream names it.
const SignerName = "csrsigning"

// DefaultSigningDuration is upstream's --cluster-signing-duration.
const DefaultSigningDuration = 365 * 24 * time.Hour

// CA is a signing certificate and its key.
type CA struct {
	Certificate *x509.Certificate
	Key         crypto.Signer
}

// LoadCA reads a CA certificate (the first of the file) and its key.
func LoadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: the key cannot sign", keyFile)
	}
	return &CA{Certificate: certs[0], Key: signer}, nil
}

// SignerOptions configure the signer.
type SignerOptions struct {
	CA *CA
	// Duration is the longest a certificate lasts (upstream's
	// --cluster-signing-duration); a CSR's expirationSeconds may ask for
	// less.
	Duration time.Duration
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// NewSigner builds the signer.
func NewSigner(client kubernetes.Interface, informer certinformers.CertificateSigningRequestInformer, m *metrics.Metrics, opts SignerOptions) (*Controller, error) {
	if opts.CA == nil {
		return nil, errors.New("csrsigning: no CA")
	}
	if opts.Duration <= 0 {
		opts.Duration = DefaultSigningDuration
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &signer{client: client, opts: opts}
	return newController(SignerName, client, informer, m, s.handle)
}

type signer struct {
	client kubernetes.Interface
	opts   SignerOptions
}

func (s *signer) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	if len(csr.Status.Certificate) > 0 {
		return nil
	}
	if _, ok := condition(csr, certificatesv1.CertificateApproved); !ok {
		return nil
	}
	if _, ok := condition(csr, certificatesv1.CertificateFailed); ok {
		return nil
	}
	req, err := parseCSR(csr.Spec.Request)
	if err != nil {
		if !signsFor(csr.Spec.SignerName) {
			return nil
		}
		return s.fail(ctx, csr, fmt.Sprintf("unable to parse csr %q: %v", csr.Name, err))
	}
	if !signsFor(csr.Spec.SignerName) {
		return nil
	}
	if err := validateForSigner(csr.Spec.SignerName, req, csr.Spec.Usages); err != nil {
		return s.fail(ctx, csr, fmt.Sprintf("invalid request for signer %s: %v", csr.Spec.SignerName, err))
	}
	der, err := s.sign(req, csr.Spec.Usages, csr.Spec.ExpirationSeconds)
	if err != nil {
		return fmt.Errorf("signing CSR %s: %w", csr.Name, err)
	}
	csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("writing the certificate of CSR %s: %w", csr.Name, err)
	}
	klog.FromContext(ctx).Info("Signed the CSR", "csr", csr.Name, "signer", csr.Spec.SignerName, "subject", req.Subject.String())
	return nil
}

// fail sets the Failed condition, as upstream does for a request the signer
// will not issue (reason SignerValidationFailure).
func (s *signer) fail(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, message string) error {
	now := metav1.Now()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "SignerValidationFailure", Message: message,
		LastUpdateTime: now, LastTransitionTime: now,
	})
	if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("marking CSR %s failed: %w", csr.Name, err)
	}
	klog.FromContext(ctx).Info("Refused to sign the CSR", "csr", csr.Name, "reason", message)
	return nil
}

// validity is when a certificate signed now starts and ends: it lasts the
// shorter of the signer's duration and the requested one, never past the
// CA; it is backdated for clocks a little behind (five minutes, less for a
// short-lived certificate so that most of its life is still ahead of it).
func (s *signer) validity(expirationSeconds *int32) (notBefore, notAfter time.Time) {
	ttl := s.opts.Duration
	if expirationSeconds != nil {
		if d := time.Duration(*expirationSeconds) * time.Second; d < ttl {
			ttl = d
		}
	}
	now := s.opts.Now()
	backdate := 5 * time.Minute
	if ttl < 8*time.Hour && backdate > ttl/10 {
		backdate = ttl / 10
	}
	notBefore, notAfter = now.Add(-backdate), now.Add(ttl)
	if ca := s.opts.CA.Certificate; notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	return notBefore, notAfter
}

func (s *signer) sign(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage, expirationSeconds *int32) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	notBefore, notAfter := s.validity(expirationSeconds)
	if !notAfter.After(s.opts.Now()) {
		return nil, errors.New("the signing CA has expired")
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: req.Subject,
		DNSNames: req.DNSNames, IPAddresses: req.IPAddresses, EmailAddresses: req.EmailAddresses, URIs: req.URIs,
		NotBefore: notBefore, NotAfter: notAfter, BasicConstraintsValid: true, IsCA: false,
	}
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature:
			tmpl.KeyUsage |= x509.KeyUsageDigitalSignature
		case certificatesv1.UsageKeyEncipherment:
			tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
		case certificatesv1.UsageClientAuth:
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
		case certificatesv1.UsageServerAuth:
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		}
	}
	return x509.CreateCertificate(rand.Reader, tmpl, s.opts.CA.Certificate, req.PublicKey, s.opts.CA.Key)
}
