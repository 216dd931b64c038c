package join

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	jws "k8s.io/cluster-bootstrap/token/jws"
	"k8s.io/cluster-bootstrap/util/tokens"
)

// HashPrefix starts a CA public key hash, as kubeadm writes it.
const HashPrefix = "sha256:"

// CAHash is kubeadm's --discovery-token-ca-cert-hash of a CA: sha256 of its
// SubjectPublicKeyInfo, in hex.
func CAHash(ca *x509.Certificate) string {
	sum := sha256.Sum256(ca.RawSubjectPublicKeyInfo)
	return HashPrefix + hex.EncodeToString(sum[:])
}

// Options are what a joining node is given.
type Options struct {
	// Server is the API server's URL (https://host:port).
	Server string
	// Token is the bootstrap token, <id>.<secret>.
	Token string
	// CAHashes are the accepted sha256:<hex> hashes of the CA's public key;
	// one must match unless UnsafeSkipCAVerification.
	CAHashes                 []string
	UnsafeSkipCAVerification bool
	// Timeout bounds the wait for cluster-info to be signed for the token.
	Timeout time.Duration
}

// Result is what discovery found.
type Result struct {
	// Server is the URL the node reached; CA the cluster CA (PEM).
	Server string
	CA     []byte
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if !strings.HasPrefix(o.Server, "https://") {
		errs = append(errs, fmt.Errorf("the server %q must be an https:// URL", o.Server))
	}
	if _, _, err := tokens.ParseToken(o.Token); err != nil {
		errs = append(errs, fmt.Errorf("--token: %w", err))
	}
	for _, h := range o.CAHashes {
		if err := validHash(h); err != nil {
			errs = append(errs, err)
		}
	}
	if len(o.CAHashes) == 0 && !o.UnsafeSkipCAVerification {
		errs = append(errs, errors.New("give --discovery-token-ca-cert-hash (printed by 'skiffctl token create'), or --discovery-token-unsafe-skip-ca-verification to trust whatever CA the server shows"))
	}
	return errors.Join(errs...)
}

func validHash(h string) error {
	hexPart, ok := strings.CutPrefix(h, HashPrefix)
	if !ok {
		return fmt.Errorf("--discovery-token-ca-cert-hash %q: must start with %q", h, HashPrefix)
	}
	if b, err := hex.DecodeString(hexPart); err != nil || len(b) != sha256.Size {
		return fmt.Errorf("--discovery-token-ca-cert-hash %q: want %d bytes in hex after %q", h, sha256.Size, HashPrefix)
	}
	return nil
}

// Discover finds and checks the cluster CA with the token.
func Discover(ctx context.Context, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	id, secret, _ := tokens.ParseToken(o.Token)
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	insecure, err := kubernetes.NewForConfig(&rest.Config{Host: o.Server, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, Timeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	// The bootstrap signer may not have signed for a token just made.
	var kubeconfig string
	var last error
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		cm, err := insecure.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		if err != nil {
			last = err
			if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
				last = fmt.Errorf("%w (the API server needs --anonymous-auth and the cluster-info Role that 'skiffctl token create' makes)", err)
			}
			return false, nil
		}
		sig, ok := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+id]
		if !ok {
			last = fmt.Errorf("cluster-info has no signature for token %q yet (is the controller manager's bootstrapsigner on?)", id)
			return false, nil
		}
		kubeconfig = cm.Data[bootstrapapi.KubeConfigKey]
		if !jws.DetachedTokenIsValid(sig, kubeconfig, id, secret) {
			return false, fmt.Errorf("cluster-info's signature for token %q does not match the token: wrong token, or not this cluster", id)
		}
		return true, nil
	})
	if err != nil {
		if last != nil && wait.Interrupted(err) {
			return nil, fmt.Errorf("reading kube-public/cluster-info from %s: %w", o.Server, last)
		}
		return nil, err
	}
	ca, err := caOf(kubeconfig)
	if err != nil {
		return nil, err
	}
	if !o.UnsafeSkipCAVerification {
		if err := checkPins(ca, o.CAHashes); err != nil {
			return nil, err
		}
	}
	// With the CA trusted, read it again: it must be the same.
	secure, err := kubernetes.NewForConfig(&rest.Config{Host: o.Server, TLSClientConfig: rest.TLSClientConfig{CAData: ca}, Timeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	cm, err := secure.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading cluster-info again with the cluster CA trusted: %w", err)
	}
	if cm.Data[bootstrapapi.KubeConfigKey] != kubeconfig {
		return nil, errors.New("cluster-info changed between the unverified and the verified read")
	}
	return &Result{Server: o.Server, CA: ca}, nil
}

// caOf is the CA of cluster-info's kubeconfig (its one cluster).
func caOf(kubeconfig string) ([]byte, error) {
	cfg, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil {
		return nil, fmt.Errorf("cluster-info's kubeconfig: %w", err)
	}
	for _, c := range cfg.Clusters {
		if len(c.CertificateAuthorityData) > 0 {
			return c.CertificateAuthorityData, nil
		}
	}
	return nil, errors.New("cluster-info's kubeconfig has no certificate-authority-data")
}

// checkPins wants a certificate of the bundle whose public key hash is one
// of hashes.
func checkPins(caPEM []byte, hashes []string) error {
	certs, err := certutil.ParseCertsPEM(caPEM)
	if err != nil {
		return fmt.Errorf("cluster-info's CA: %w", err)
	}
	for _, c := range certs {
		got := CAHash(c)
		for _, h := range hashes {
			if strings.EqualFold(got, h) {
				return nil
			}
		}
	}
	return fmt.Errorf("the cluster CA's public key hash is not one of %s: this is not the cluster the join command was made for", strings.Join(hashes, ", "))
}

// BootstrapKubeconfig is the kubelet's --bootstrap-kubeconfig: the server,
// the CA and the token.
func BootstrapKubeconfig(r *Result, token string) *clientcmdapi.Config {
	return &clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"skiff": {Server: r.Server, CertificateAuthorityData: r.CA}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"tls-bootstrap-token-user": {Token: token}},
		Contexts:       map[string]*clientcmdapi.Context{"tls-bootstrap-token-user@skiff": {Cluster: "skiff", AuthInfo: "tls-bootstrap-token-user"}},
		CurrentContext: "tls-bootstrap-token-user@skiff",
	}
}

// ClusterInfoKubeconfig is the kubeconfig cluster-info holds: the server
// and the CA, no credentials (kubeadm's).
func ClusterInfoKubeconfig(server string, caPEM []byte) ([]byte, error) {
	return clientcmd.Write(clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{"": {Server: server, CertificateAuthorityData: caPEM}},
	})
}

// ServerOf is the server of cluster-info's kubeconfig.
func ServerOf(kubeconfig string) (string, error) {
	cfg, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil {
		return "", err
	}
	for _, c := range cfg.Clusters {
		return c.Server, nil
	}
	return "", errors.New("no cluster")
}
