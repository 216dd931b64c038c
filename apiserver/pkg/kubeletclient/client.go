package kubeletclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// DefaultPort is the kubelet's port when a Node does not advertise one.
const DefaultPort = 10250

// DefaultAddressTypes is upstream's --kubelet-preferred-address-types
// default.
var DefaultAddressTypes = []string{string(corev1.NodeInternalIP), string(corev1.NodeHostName), string(corev1.NodeExternalIP)}

// knownAddressTypes are the node address types upstream accepts in the flag.
var knownAddressTypes = []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalIP, corev1.NodeExternalIP,
	corev1.NodeInternalDNS, corev1.NodeExternalDNS}

// Config is what the API server's --kubelet-* flags say.
type Config struct {
	// CertFile and KeyFile are the client certificate presented to kubelets
	// (--kubelet-client-certificate, --kubelet-client-key); both or neither.
	CertFile, KeyFile string
	// CAFile verifies the kubelets' serving certificates
	// (--kubelet-certificate-authority); empty: the system roots.
	CAFile string
	// AddressTypes is the order in which node addresses are tried
	// (--kubelet-preferred-address-types).
	AddressTypes []string
}

// Client reaches kubelets.
type Client struct {
	transport *http.Transport
	// insecure skips verifying the kubelet's certificate, for a log request
	// with insecureSkipTLSVerifyBackend=true; it still presents the client
	// certificate.
	insecure *http.Transport
	types    []corev1.NodeAddressType
}

// ValidateAddressTypes checks the --kubelet-preferred-address-types values.
func ValidateAddressTypes(types []string) error {
	if len(types) == 0 {
		return fmt.Errorf("--kubelet-preferred-address-types must name at least one address type")
	}
	for _, t := range types {
		ok := false
		for _, k := range knownAddressTypes {
			ok = ok || string(k) == t
		}
		if !ok {
			return fmt.Errorf("--kubelet-preferred-address-types: unknown address type %q (want Hostname, InternalIP, ExternalIP, InternalDNS, ExternalDNS)", t)
		}
	}
	return nil
}

// New builds a client from c, reading its files.
func New(c Config) (*Client, error) {
	if err := ValidateAddressTypes(c.AddressTypes); err != nil {
		return nil, err
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, fmt.Errorf("--kubelet-client-certificate and --kubelet-client-key must be given together")
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading the kubelet client certificate: %w", err)
		}
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading --kubelet-certificate-authority: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--kubelet-certificate-authority %s holds no PEM certificate", c.CAFile)
		}
		tlsCfg.RootCAs = pool
	}
	insecureCfg := tlsCfg.Clone()
	insecureCfg.InsecureSkipVerify = true //nolint:gosec // only on the client's explicit request, as upstream
	types := make([]corev1.NodeAddressType, 0, len(c.AddressTypes))
	for _, t := range c.AddressTypes {
		types = append(types, corev1.NodeAddressType(t))
	}
	return &Client{transport: newTransport(tlsCfg), insecure: newTransport(insecureCfg), types: types}, nil
}

// newTransport speaks HTTP/1.1 only: upgraded connections (exec, attach,
// portforward) need it.
func newTransport(cfg *tls.Config) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     cfg,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 10,
		IdleConnTimeout:     90 * time.Second,
	}
}

// Transport returns the round tripper to use; insecureSkipVerify skips
// checking the kubelet's serving certificate.
func (c *Client) Transport(insecureSkipVerify bool) *http.Transport {
	if insecureSkipVerify {
		return c.insecure
	}
	return c.transport
}

// Location is https://<address>:<port><path>?<query> on node's kubelet.
func (c *Client) Location(node *corev1.Node, path string, query url.Values) (*url.URL, error) {
	host, err := NodeAddress(node, c.types)
	if err != nil {
		return nil, err
	}
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = DefaultPort
	}
	return &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: path, RawQuery: query.Encode()}, nil
}

// NodeAddress is upstream's GetPreferredNodeAddress: the first address of
// the first type in types the node has; for Hostname, the
// kubernetes.io/hostname label stands in when the node lists none.
func NodeAddress(node *corev1.Node, types []corev1.NodeAddressType) (string, error) {
	for _, t := range types {
		for _, a := range node.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return a.Address, nil
			}
		}
		if t == corev1.NodeHostName {
			if h := node.Labels[corev1.LabelHostname]; h != "" {
				return h, nil
			}
		}
	}
	known := make([]string, 0, len(node.Status.Addresses))
	for _, a := range node.Status.Addresses {
		known = append(known, fmt.Sprintf("%s:%s", a.Type, a.Address))
	}
	return "", fmt.Errorf("node %s: no preferred addresses found; known addresses: [%s]", node.Name, strings.Join(known, " "))
}
