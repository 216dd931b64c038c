package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PEM block types written and read by this package.
const (
	pemTypeCertificate   = "CERTIFICATE"
	pemTypePrivateKey    = "PRIVATE KEY"
	pemTypeECPrivateKey  = "EC PRIVATE KEY"
	pemTypeRSAPrivateKey = "RSA PRIVATE KEY"
	pemTypePublicKey     = "PUBLIC KEY"
)

// File modes: private keys and files embedding them are readable by the owner
// only.
const (
	certFileMode fs.FileMode = 0o644
	keyFileMode  fs.FileMode = 0o600
	pkiDirMode   fs.FileMode = 0o700
	confDirMode  fs.FileMode = 0o755
)

// saKeyBits is the size of the service-account signing key.
const saKeyBits = 2048

// newKey returns a fresh ECDSA P-256 key, used for the CA and every leaf.
func newKey() (crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating ECDSA P-256 key: %w", err)
	}
	return key, nil
}

// encodeCertPEM returns the PEM encoding of a DER certificate.
func encodeCertPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: pemTypeCertificate, Bytes: der})
}

// encodeKeyPEM returns the PKCS#8 PEM encoding of a private key.
func encodeKeyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshalling private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemTypePrivateKey, Bytes: der}), nil
}

// parseCertPEM returns the first certificate in PEM data.
func parseCertPEM(data []byte) (*x509.Certificate, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no CERTIFICATE PEM block found")
		}
		if block.Type != pemTypeCertificate {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing certificate: %w", err)
		}
		return cert, nil
	}
}

// parseKeyPEM returns the first private key in PEM data, in PKCS#8, SEC 1
// (EC) or PKCS#1 (RSA) form.
func parseKeyPEM(data []byte) (crypto.Signer, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no private key PEM block found")
		}
		var (
			key any
			err error
		)
		switch block.Type {
		case pemTypePrivateKey:
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case pemTypeECPrivateKey:
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case pemTypeRSAPrivateKey:
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", block.Type, err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported private key type %T", key)
		}
		return signer, nil
	}
}

// publicKeysEqual reports whether the certificate was issued for key.
func publicKeysEqual(cert *x509.Certificate, key crypto.Signer) bool {
	pub, ok := cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(key.Public())
}

// KeyPair is a certificate and its private key.
type KeyPair struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// CertPEM returns the certificate in PEM form.
func (kp *KeyPair) CertPEM() []byte {
	return encodeCertPEM(kp.Cert.Raw)
}

// KeyPEM returns the private key in PKCS#8 PEM form.
func (kp *KeyPair) KeyPEM() ([]byte, error) {
	return encodeKeyPEM(kp.Key)
}

// CertFile names the certificate file of the pair called name in dir.
func CertFile(dir, name string) string { return filepath.Join(dir, name+".crt") }

// KeyFile names the private key file of the pair called name in dir.
func KeyFile(dir, name string) string { return filepath.Join(dir, name+".key") }

// LoadKeyPair reads <dir>/<name>.crt and <dir>/<name>.key and checks that they
// belong together.
func LoadKeyPair(dir, name string) (*KeyPair, error) {
	certPEM, err := os.ReadFile(CertFile(dir, name))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(KeyFile(dir, name))
	if err != nil {
		return nil, err
	}
	return parseKeyPair(certPEM, keyPEM)
}

func parseKeyPair(certPEM, keyPEM []byte) (*KeyPair, error) {
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, err
	}
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	if !publicKeysEqual(cert, key) {
		return nil, errors.New("certificate does not match private key")
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// WriteKeyPair writes <dir>/<name>.key (mode 0600) and <dir>/<name>.crt (mode
// 0644), each atomically, creating dir if needed.
func WriteKeyPair(dir, name string, kp *KeyPair) error {
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, pkiDirMode); err != nil {
		return err
	}
	if err := writeFileAtomic(KeyFile(dir, name), keyPEM, keyFileMode); err != nil {
		return err
	}
	return writeFileAtomic(CertFile(dir, name), kp.CertPEM(), certFileMode)
}

// writeFileAtomic replaces path with data: it writes a temporary file in the
// same directory with the final mode and renames it over path, so readers never
// see a partial file and a key is never readable by others, even briefly.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ensureMode tightens the mode of an existing file we keep, such as a key
// written by an older tool with a looser mode. It never rewrites the content.
func ensureMode(path string, mode fs.FileMode) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.Mode().Perm() == mode {
		return nil
	}
	return os.Chmod(path, mode)
}

// saKeyPair is the service-account token signing key pair.
type saKeyPair struct {
	key *rsa.PrivateKey
}

func newSAKeyPair() (*saKeyPair, error) {
	key, err := rsa.GenerateKey(rand.Reader, saKeyBits)
	if err != nil {
		return nil, fmt.Errorf("generating service-account key: %w", err)
	}
	return &saKeyPair{key: key}, nil
}

func loadSAKey(path string) (*saKeyPair, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := parseKeyPEM(data)
	if err != nil {
		return nil, err
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("service-account key is %T, want RSA", key)
	}
	return &saKeyPair{key: rsaKey}, nil
}

// privatePEM is the PKCS#1 "RSA PRIVATE KEY" form, as kubeadm writes sa.key.
func (s *saKeyPair) privatePEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: pemTypeRSAPrivateKey, Bytes: x509.MarshalPKCS1PrivateKey(s.key)})
}

// publicPEM is the PKIX "PUBLIC KEY" form, as kubeadm writes sa.pub.
func (s *saKeyPair) publicPEM() ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(&s.key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("marshalling service-account public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemTypePublicKey, Bytes: der}), nil
}

// fileEquals reports whether path exists and holds exactly data.
func fileEquals(path string, data []byte) (bool, error) {
	existing, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.Equal(existing, data), nil
}
