package aggregator

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// transports keeps one transport per way of reaching a backend: its
// server name, its CA bundle (or no verification), so that connections
// are reused and a changed caBundle takes effect at once.
type transports struct {
	clientCert *tls.Certificate
	mu         sync.Mutex
	byKey      map[string]*http.Transport
}

func newTransports(clientCert *tls.Certificate) *transports {
	return &transports{clientCert: clientCert, byKey: map[string]*http.Transport{}}
}

// serverName is what the backend's certificate must name, as upstream:
// <service>.<namespace>.svc.
func serverName(api *apiregistrationv1.APIService) string {
	return api.Spec.Service.Name + "." + api.Spec.Service.Namespace + ".svc"
}

// For returns the transport of api: the backend's certificate verified
// against spec.caBundle (the system roots when empty) for
// <service>.<namespace>.svc, or not at all with insecureSkipTLSVerify;
// the front-proxy client certificate presented.
func (t *transports) For(api *apiregistrationv1.APIService) (*http.Transport, error) {
	name := serverName(api)
	sum := sha256.Sum256(api.Spec.CABundle)
	k := fmt.Sprintf("%s|%t|%x", name, api.Spec.InsecureSkipTLSVerify, sum)
	t.mu.Lock()
	defer t.mu.Unlock()
	if tr, ok := t.byKey[k]; ok {
		return tr, nil
	}
	cfg := &tls.Config{ServerName: name, MinVersion: tls.VersionTLS12}
	if api.Spec.InsecureSkipTLSVerify {
		cfg.InsecureSkipVerify = true //nolint:gosec // the APIService asks for it
	} else if len(api.Spec.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(api.Spec.CABundle) {
			return nil, fmt.Errorf("spec.caBundle of APIService %s holds no PEM certificate", api.Name)
		}
		cfg.RootCAs = pool
	}
	if t.clientCert != nil {
		cert := t.clientCert
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     cfg,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 10,
		IdleConnTimeout:     90 * time.Second,
	}
	t.byKey[k] = tr
	return tr, nil
}
