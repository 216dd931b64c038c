package certificate

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"
	"k8s.io/klog/v2"
)

// ClientSource is where the first client certificate comes from when the
// certificate directory has none yet: the kubeconfig's files or data (as
// upstream's kubelet starts rotating a certificate it was given).
type ClientSource struct {
	CertFile, KeyFile string
	CertData, KeyData []byte
}

// NewClientManager is the rotation of the node's client certificate, kept
// in certDir as LoadClientCert keeps it. newClient gives the client to ask
// with: the current certificate's when there is one.
func NewClientManager(certDir, nodeName string, first ClientSource, newClient func(current *tls.Certificate) (kubernetes.Interface, error)) (certificate.Manager, error) {
	store, err := certificate.NewFileStore(ClientPairPrefix, certDir, certDir, first.CertFile, first.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("the certificate store in %s: %w", certDir, err)
	}
	subject := NodeSubject(nodeName)
	return certificate.NewManager(&certificate.Config{
		ClientsetFn:             func(current *tls.Certificate) (kubernetes.Interface, error) { return newClient(current) },
		Template:                &x509.CertificateRequest{Subject: subject},
		SignerName:              certificatesv1.KubeAPIServerClientKubeletSignerName,
		GetUsages:               clientUsages,
		CertificateStore:        store,
		BootstrapCertificatePEM: first.CertData,
		BootstrapKeyPEM:         first.KeyData,
		Name:                    "kubelet",
		Logf:                    klog.V(2).Infof,
	})
}

// NewServerManager is the node's serving certificate (signer
// kubernetes.io/kubelet-serving) for its host name and addresses, kept in
// certDir and renewed before it expires. Until a CSR is approved (the
// controller manager does not approve them by default) there is none.
func NewServerManager(client kubernetes.Interface, certDir, nodeName string, hostnames []string, ips []net.IP) (certificate.Manager, error) {
	store, err := certificate.NewFileStore(ServerPairPrefix, certDir, certDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("the certificate store in %s: %w", certDir, err)
	}
	return certificate.NewManager(&certificate.Config{
		ClientsetFn:      func(*tls.Certificate) (kubernetes.Interface, error) { return client, nil },
		Template:         &x509.CertificateRequest{Subject: NodeSubject(nodeName), DNSNames: hostnames, IPAddresses: ips},
		SignerName:       certificatesv1.KubeletServingSignerName,
		GetUsages:        serverUsages,
		CertificateStore: store,
		Name:             "kubelet-server",
		Logf:             klog.V(2).Infof,
	})
}

// rotationPeriod is how often the transport looks for a new client
// certificate (upstream's 10 s).
const rotationPeriod = 10 * time.Second
