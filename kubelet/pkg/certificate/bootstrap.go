package certificate

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"
)

const (
	// ClientPairPrefix names the client certificate files in the
	// certificate directory (kubelet-client-current.pem), as upstream.
	ClientPairPrefix = "kubelet-client"
	// ServerPairPrefix names the serving certificate files.
	ServerPairPrefix = "kubelet-server"
	// tmpKeyFile is the key made for the bootstrap request, kept until the
	// certificate comes so a restart asks again with the same key.
	tmpKeyFile = "kubelet-client.key.tmp"
)

// NodeSubject is the subject of a node's certificates.
func NodeSubject(nodeName string) pkix.Name {
	return pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}}
}

// LoadClientCert makes sure kubeconfigPath holds usable client credentials:
// when it does not (missing, or its certificate expired), it asks for a
// node client certificate with the credentials of bootstrapPath, keeps it
// in certDir and writes kubeconfigPath to use it (upstream's
// kubelet/certificate/bootstrap.LoadClientCert). It waits for the
// certificate until ctx ends.
func LoadClientCert(ctx context.Context, kubeconfigPath, bootstrapPath, certDir, nodeName string) error {
	logger := klog.FromContext(ctx)
	if ok, err := kubeconfigStillValid(kubeconfigPath, time.Now()); err != nil {
		logger.Info("The kubeconfig is not usable; bootstrapping a client certificate", "kubeconfig", kubeconfigPath, "err", err)
	} else if ok {
		return nil
	}
	bootstrapCfg, err := clientcmd.BuildConfigFromFlags("", bootstrapPath)
	if err != nil {
		return fmt.Errorf("loading the bootstrap kubeconfig: %w", err)
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	store, err := certificate.NewFileStore(ClientPairPrefix, certDir, certDir, "", "")
	if err != nil {
		return fmt.Errorf("the certificate store in %s: %w", certDir, err)
	}
	// A certificate from an earlier run, still good.
	if cert, err := store.Current(); err == nil && cert.Leaf != nil && time.Now().Before(cert.Leaf.NotAfter) {
		logger.Info("Using the client certificate kept from an earlier bootstrap", "file", store.CurrentPath())
		return writeKubeconfig(bootstrapCfg, kubeconfigPath, store.CurrentPath())
	}
	keyPath := filepath.Join(certDir, tmpKeyFile)
	keyPEM, _, err := keyutil.LoadOrGenerateKeyFile(keyPath)
	if err != nil {
		return fmt.Errorf("the bootstrap key %s: %w", keyPath, err)
	}
	client, err := kubernetes.NewForConfig(bootstrapCfg)
	if err != nil {
		return err
	}
	certPEM, err := requestNodeCertificate(ctx, client, keyPEM, nodeName)
	if err != nil {
		return err
	}
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		return err
	}
	if err := os.Remove(keyPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		logger.Error(err, "Removing the bootstrap key", "file", keyPath)
	}
	logger.Info("Got a client certificate by TLS bootstrap", "file", store.CurrentPath())
	return writeKubeconfig(bootstrapCfg, kubeconfigPath, store.CurrentPath())
}

// kubeconfigStillValid says whether path is a kubeconfig whose client
// certificate is good at now.
func kubeconfigStillValid(path string, now time.Time) (bool, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return false, err
	}
	data := cfg.CertData
	if len(data) == 0 && cfg.CertFile != "" {
		if data, err = os.ReadFile(cfg.CertFile); err != nil {
			return false, err
		}
	}
	if len(data) == 0 {
		return false, errors.New("no client certificate")
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return false, err
	}
	for _, c := range certs {
		if now.After(c.NotAfter) {
			return false, fmt.Errorf("the client certificate expired at %s", c.NotAfter.Format(time.RFC3339))
		}
	}
	return true, nil
}

// writeKubeconfig writes a kubeconfig for the bootstrap config's server and
// CA with the client certificate and key of pemPath.
func writeKubeconfig(bootstrap *rest.Config, path, pemPath string) error {
	cluster := &clientcmdapi.Cluster{Server: bootstrap.Host, InsecureSkipTLSVerify: bootstrap.Insecure, CertificateAuthority: bootstrap.CAFile}
	if bootstrap.CAFile == "" {
		cluster.CertificateAuthorityData = bootstrap.CAData
	}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"default-cluster": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"default-auth": {ClientCertificate: pemPath, ClientKey: pemPath}},
		Contexts:       map[string]*clientcmdapi.Context{"default-context": {Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}},
		CurrentContext: "default-context",
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return clientcmd.WriteToFile(cfg, path)
}

// clientUsages are the key usages of a node client certificate for key
// (key encipherment only for RSA keys, as upstream).
func clientUsages(key any) []certificatesv1.KeyUsage {
	u := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	if _, ok := key.(*rsa.PrivateKey); ok {
		u = append(u, certificatesv1.UsageKeyEncipherment)
	}
	return u
}

// serverUsages are those of a serving certificate.
func serverUsages(key any) []certificatesv1.KeyUsage {
	u := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
	if _, ok := key.(*rsa.PrivateKey); ok {
		u = append(u, certificatesv1.UsageKeyEncipherment)
	}
	return u
}

func requestNodeCertificate(ctx context.Context, client kubernetes.Interface, keyPEM []byte, nodeName string) ([]byte, error) {
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	subject := NodeSubject(nodeName)
	csrPEM, err := certutil.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("the bootstrap key cannot sign")
	}
	usages := clientUsages(key)
	name, err := digestedName(signer.Public(), subject, usages)
	if err != nil {
		return nil, err
	}
	reqName, reqUID, err := csr.RequestCertificate(client, csrPEM, name, certificatesv1.KubeAPIServerClientKubeletSignerName, nil, usages, key)
	if err != nil {
		return nil, fmt.Errorf("requesting a client certificate: %w", err)
	}
	klog.FromContext(ctx).Info("Waiting for the client certificate", "csr", reqName)
	ctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	cert, err := csr.WaitForCertificate(ctx, client, reqName, reqUID)
	if err != nil {
		return nil, fmt.Errorf("waiting for the certificate of CSR %s: %w", reqName, err)
	}
	return cert, nil
}

// digestedName names the CSR after its key, subject and usages, so asking
// again after a restart finds the same request (upstream's name).
func digestedName(public any, subject pkix.Name, usages []certificatesv1.KeyUsage) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(public)
	if err != nil {
		return "", err
	}
	h := sha512.New512_256()
	const delimiter = '|'
	encode := base64.RawURLEncoding.EncodeToString
	write := func(b []byte) {
		h.Write([]byte(encode(b)))
		h.Write([]byte{delimiter})
	}
	write(der)
	write([]byte(subject.CommonName))
	for _, o := range subject.Organization {
		write([]byte(o))
	}
	for _, u := range usages {
		write([]byte(u))
	}
	return "node-csr-" + encode(h.Sum(nil)), nil
}
