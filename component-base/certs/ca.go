package certs

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// Validity periods and the clock-skew allowance applied to NotBefore.
const (
	// CAValidity is how long a new cluster CA is valid.
	CAValidity = 10 * 365 * 24 * time.Hour
	// LeafValidity is how long a new leaf certificate is valid.
	LeafValidity = 365 * 24 * time.Hour
	// clockSkew backdates NotBefore so that a machine whose clock is a little
	// behind accepts a certificate issued a moment ago.
	clockSkew = 5 * time.Minute
)

// Names of the CA files in the PKI directory.
const (
	caName = "ca"
	// DefaultCACommonName is the subject CN of a cluster CA made by Generate.
	DefaultCACommonName = "skiff-ca"
	// frontProxyCAName is the CA of the aggregation layer's front-proxy
	// client certificate (kubeadm's front-proxy-ca), separate from the
	// cluster CA so that its certificates cannot authenticate as users.
	frontProxyCAName = "front-proxy-ca"
	// FrontProxyCACommonName is the subject CN of the front-proxy CA.
	FrontProxyCACommonName = "front-proxy-ca"
	// etcdCAName is the CA of etcd's member and client certificates
	// (kubeadm's etcd/ca), separate from the cluster CA: a certificate it
	// signs opens etcd, which must not follow from holding any cluster
	// identity, and etcd's certificates must not authenticate to the API.
	etcdCAName = "etcd-ca"
	// EtcdCACommonName is the subject CN of the etcd CA.
	EtcdCACommonName = "etcd-ca"
)

// CA is a certificate authority that can sign leaf certificates.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// CertPEM returns the CA certificate in PEM form, as embedded in kubeconfigs.
func (ca *CA) CertPEM() []byte {
	return encodeCertPEM(ca.Cert.Raw)
}

// Pool returns a certificate pool that trusts only this CA.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return pool
}

// IssueOption changes how a certificate is issued.
type IssueOption func(*issueConfig)

type issueConfig struct {
	notBefore time.Time
	validity  time.Duration
}

// WithNotBefore sets the start of the validity window; the certificate then
// ends at notBefore plus the validity. Without it a certificate starts a few
// minutes in the past, to tolerate clock skew, and ends validity from now.
func WithNotBefore(notBefore time.Time) IssueOption {
	return func(c *issueConfig) { c.notBefore = notBefore }
}

// WithValidity sets how long the certificate is valid. Tests use it with
// WithNotBefore to make certificates that are expired or not yet valid.
func WithValidity(validity time.Duration) IssueOption {
	return func(c *issueConfig) { c.validity = validity }
}

// window returns NotBefore and NotAfter for a certificate.
func (c issueConfig) window(now time.Time) (time.Time, time.Time) {
	if !c.notBefore.IsZero() {
		return c.notBefore, c.notBefore.Add(c.validity)
	}
	return now.Add(-clockSkew), now.Add(c.validity)
}

func newIssueConfig(defaultValidity time.Duration, opts []IssueOption) issueConfig {
	cfg := issueConfig{validity: defaultValidity}
	for _, opt := range opts {
		opt(&cfg)
	}
	return cfg
}

// randomSerial returns a random, positive 128-bit serial number.
func randomSerial() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	for {
		serial, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return nil, fmt.Errorf("generating serial number: %w", err)
		}
		if serial.Sign() > 0 {
			return serial, nil
		}
	}
}

// NewCA creates a self-signed CA with a fresh key, valid for CAValidity unless
// an option says otherwise.
func NewCA(cn string, opts ...IssueOption) (*CA, error) {
	cfg := newIssueConfig(CAValidity, opts)
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	notBefore, notAfter := cfg.window(time.Now())
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// LoadCA reads ca.crt and ca.key from dir and checks that they form a CA.
func LoadCA(dir string) (*CA, error) { return loadNamedCA(dir, caName) }

// LoadFrontProxyCA reads front-proxy-ca.crt and front-proxy-ca.key from dir.
func LoadFrontProxyCA(dir string) (*CA, error) { return loadNamedCA(dir, frontProxyCAName) }

// LoadEtcdCA reads etcd-ca.crt and etcd-ca.key from dir.
func LoadEtcdCA(dir string) (*CA, error) { return loadNamedCA(dir, etcdCAName) }

func loadNamedCA(dir, name string) (*CA, error) {
	kp, err := LoadKeyPair(dir, name)
	if err != nil {
		return nil, fmt.Errorf("loading CA from %s: %w", dir, err)
	}
	if !kp.Cert.IsCA || kp.Cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("loading CA from %s: %s is not a CA certificate", dir, CertFile(dir, name))
	}
	return &CA{Cert: kp.Cert, Key: kp.Key}, nil
}

// WriteCA writes ca.crt and ca.key into dir.
func WriteCA(dir string, ca *CA) error {
	return WriteKeyPair(dir, caName, &KeyPair{Cert: ca.Cert, Key: ca.Key})
}

// IssueClientCert issues a client certificate (ExtKeyUsage ClientAuth) with
// subject CN=cn and O=orgs, signed by ca, with a fresh key. Kubernetes reads the
// user name from CN and the groups from O.
func IssueClientCert(ca *CA, cn string, orgs []string, opts ...IssueOption) (*KeyPair, error) {
	return ca.issue(certRequest{
		subject: pkix.Name{CommonName: cn, Organization: orgs},
		usages:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, opts)
}

// IssueServingCert issues a serving certificate (ExtKeyUsage ServerAuth) with
// subject CN=cn and O=orgs and a SAN for each of hosts: IP addresses become IP
// SANs, everything else a DNS SAN.
func IssueServingCert(ca *CA, cn string, orgs []string, hosts []string, opts ...IssueOption) (*KeyPair, error) {
	dns, ips, err := splitHosts(hosts)
	if err != nil {
		return nil, err
	}
	return ca.issue(certRequest{
		subject: pkix.Name{CommonName: cn, Organization: orgs},
		usages:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		dns:     dns,
		ips:     ips,
	}, opts)
}

// IssuePeerCert issues a certificate for both ends of a connection
// (ExtKeyUsage ServerAuth and ClientAuth) with subject CN=cn and O=orgs and a
// SAN for each of hosts, as etcd members need: a member serves its peers and
// dials them with the same certificate, and etcd's gRPC gateway dials the
// member's own client port with its serving certificate.
func IssuePeerCert(ca *CA, cn string, orgs []string, hosts []string, opts ...IssueOption) (*KeyPair, error) {
	dns, ips, err := splitHosts(hosts)
	if err != nil {
		return nil, err
	}
	return ca.issue(certRequest{
		subject: pkix.Name{CommonName: cn, Organization: orgs},
		usages:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		dns:     dns,
		ips:     ips,
	}, opts)
}

// certRequest is what a leaf certificate should say.
type certRequest struct {
	subject pkix.Name
	usages  []x509.ExtKeyUsage
	dns     []string
	ips     []net.IP
}

func (ca *CA) issue(req certRequest, opts []IssueOption) (*KeyPair, error) {
	if ca == nil || ca.Cert == nil || ca.Key == nil {
		return nil, errors.New("issuing certificate: no CA")
	}
	if req.subject.CommonName == "" {
		return nil, errors.New("issuing certificate: empty common name")
	}
	cfg := newIssueConfig(LeafValidity, opts)
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	notBefore, notAfter := cfg.window(time.Now())
	if notAfter.After(ca.Cert.NotAfter) {
		// A leaf cannot outlive its issuer.
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               req.subject,
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           req.usages,
		BasicConstraintsValid: true,
		DNSNames:              req.dns,
		IPAddresses:           req.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, fmt.Errorf("creating certificate for %q: %w", req.subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing certificate for %q: %w", req.subject.CommonName, err)
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// caFilesState reports which of <name>.crt and <name>.key exist in dir.
func caFilesState(dir, name string) (certExists, keyExists bool, err error) {
	certExists, err = exists(CertFile(dir, name))
	if err != nil {
		return false, false, err
	}
	keyExists, err = exists(KeyFile(dir, name))
	return certExists, keyExists, err
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return false, err
}
