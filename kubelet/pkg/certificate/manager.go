package certificate

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
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
// kubernetes.io/kubelet-serving), kept in certDir and renewed before it
// expires. Its names are the node's addresses as the kubelet last
// reported them in its Node's status (addresses), as upstream's kubelet
// does: no CSR goes out until the Node has at least one IP address, so
// an approver that checks the names against the Node finds them there;
// when the addresses change, a pending request is abandoned and a new
// one made for them. Until a CSR is approved (the controller manager
// does not approve them by default) there is no certificate.
func NewServerManager(client kubernetes.Interface, certDir, nodeName string, addresses func() []corev1.NodeAddress) (certificate.Manager, error) {
	store, err := certificate.NewFileStore(ServerPairPrefix, certDir, certDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("the certificate store in %s: %w", certDir, err)
	}
	return certificate.NewManager(&certificate.Config{
		ClientsetFn:      func(*tls.Certificate) (kubernetes.Interface, error) { return client, nil },
		GetTemplate:      servingTemplate(nodeName, addresses),
		SignerName:       certificatesv1.KubeletServingSignerName,
		GetUsages:        serverUsages,
		CertificateStore: store,
		Name:             "kubelet-server",
		Logf:             klog.V(2).Infof,
	})
}

// servingTemplate is the serving CSR's template for the node's current
// addresses, nil while they hold no IP address (upstream's
// newGetTemplateFn without its AllowDNSOnlyNodeCSR gate).
func servingTemplate(nodeName string, addresses func() []corev1.NodeAddress) func() *x509.CertificateRequest {
	return func() *x509.CertificateRequest {
		names, ips := namesAndIPs(addresses())
		if len(ips) == 0 {
			return nil
		}
		return &x509.CertificateRequest{Subject: NodeSubject(nodeName), DNSNames: names, IPAddresses: ips}
	}
}

// namesAndIPs sorts a node's addresses into DNS names and IP addresses,
// each once and in order (upstream's addressesToHostnamesAndIPs): a
// Hostname may be either, InternalIP and ExternalIP count only as IPs.
func namesAndIPs(addrs []corev1.NodeAddress) ([]string, []net.IP) {
	var names []string
	var ips []net.IP
	seen := map[string]bool{}
	for _, a := range addrs {
		if a.Address == "" || seen[a.Address] {
			continue
		}
		ip := net.ParseIP(a.Address)
		switch a.Type {
		case corev1.NodeHostName:
			if ip != nil {
				ips = append(ips, ip)
			} else {
				names = append(names, a.Address)
			}
		case corev1.NodeInternalIP, corev1.NodeExternalIP:
			if ip == nil {
				continue
			}
			ips = append(ips, ip)
		case corev1.NodeInternalDNS, corev1.NodeExternalDNS:
			names = append(names, a.Address)
		default:
			continue
		}
		seen[a.Address] = true
	}
	return names, ips
}

// rotationPeriod is how often the transport looks for a new client
// certificate (upstream's 10 s).
const rotationPeriod = 10 * time.Second
