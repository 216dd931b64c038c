package certificate

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/connrotation"
	"k8s.io/klog/v2"
)

// UpdateTransport makes cfg present m's current client certificate on
// every new connection, and closes the open connections when the
// certificate changes so the next requests use the new one (upstream's
// kubelet/certificate.UpdateTransport). period 0 is upstream's 10 s.
func UpdateTransport(ctx context.Context, cfg *rest.Config, m certificate.Manager, period time.Duration) error {
	if cfg.Transport != nil || cfg.Dial != nil {
		return errors.New("the client configuration already has a transport or dialer")
	}
	if period <= 0 {
		period = rotationPeriod
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return err
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{}
	}
	tlsConfig.Certificates = nil
	tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if cert := m.Current(); cert != nil {
			return cert, nil
		}
		return &tls.Certificate{}, nil
	}
	d := connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	last := m.Current()
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		cur := m.Current()
		if cur == nil || cur == last {
			return
		}
		last = cur
		klog.FromContext(ctx).Info("Client certificate rotated; closing the connections made with the old one")
		d.CloseAll()
	}, period)
	cfg.Transport = utilnet.SetTransportDefaults(&http.Transport{
		Proxy: http.ProxyFromEnvironment, TLSHandshakeTimeout: 10 * time.Second, TLSClientConfig: tlsConfig,
		MaxIdleConnsPerHost: 25, DialContext: d.DialContext,
	})
	// The transport carries the TLS settings now.
	cfg.TLSClientConfig = rest.TLSClientConfig{}
	return nil
}
