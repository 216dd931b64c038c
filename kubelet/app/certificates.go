package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/certificate"
	"k8s.io/klog/v2"

	kubeletcert "skiff.dev/kubelet/pkg/certificate"
)

// ClientConfig is the kubelet's client configuration: with
// --bootstrap-kubeconfig, a client certificate is first got by TLS
// bootstrap when --kubeconfig has none that is good; with
// --rotate-certificates, the certificate is renewed before it expires and
// the client follows it. The certificate manager stops when ctx ends.
func ClientConfig(ctx context.Context, o *Options) (*rest.Config, error) {
	if o.BootstrapKubeconfig != "" {
		if err := kubeletcert.LoadClientCert(ctx, o.Kubeconfig, o.BootstrapKubeconfig, o.CertDir, o.NodeName); err != nil {
			return nil, fmt.Errorf("TLS bootstrap: %w", err)
		}
	}
	cfg, err := BuildRESTConfig(o)
	if err != nil || !o.RotateCertificates {
		return cfg, err
	}
	// The manager asks with the current certificate (cfg, after
	// UpdateTransport) or, with none, with the bootstrap credentials.
	var bootstrap *rest.Config
	if o.BootstrapKubeconfig != "" {
		if bootstrap, err = restConfigFrom(o, o.BootstrapKubeconfig); err != nil {
			return nil, err
		}
	}
	tc := cfg.TLSClientConfig
	first := kubeletcert.ClientSource{CertFile: tc.CertFile, KeyFile: tc.KeyFile, CertData: tc.CertData, KeyData: tc.KeyData}
	m, err := kubeletcert.NewClientManager(o.CertDir, o.NodeName, first, func(current *tls.Certificate) (kubernetes.Interface, error) {
		if current == nil && bootstrap != nil {
			return kubernetes.NewForConfig(bootstrap)
		}
		return kubernetes.NewForConfig(cfg)
	})
	if err != nil {
		return nil, err
	}
	if m.Current() == nil {
		return nil, fmt.Errorf("--rotate-certificates: no client certificate in %s nor in --kubeconfig (start with --bootstrap-kubeconfig to get one)", o.CertDir)
	}
	if err := kubeletcert.UpdateTransport(ctx, cfg, m, o.CertRotationCheckPeriod); err != nil {
		return nil, err
	}
	m.Start()
	go func() {
		<-ctx.Done()
		m.Stop()
	}()
	klog.FromContext(ctx).Info("Client certificate rotation is on", "certDir", o.CertDir)
	return cfg, nil
}

// rotatingServingCertificate is --rotate-server-certificates: the serving
// certificate comes from a kubernetes.io/kubelet-serving CSR for the
// node's addresses as its status last reported them (none is asked for
// before the first status with an IP address) and is renewed before it
// expires; there is none (handshakes fail) until such a CSR is approved
// and signed.
func rotatingServingCertificate(ctx context.Context, o *Options, client kubernetes.Interface, addresses func() []corev1.NodeAddress) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), error) {
	m, err := kubeletcert.NewServerManager(client, o.CertDir, o.NodeName, addresses)
	if err != nil {
		return nil, err
	}
	m.Start()
	go func() {
		<-ctx.Done()
		m.Stop()
	}()
	return servingCertificate(m), nil
}

func servingCertificate(m certificate.Manager) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		if cert := m.Current(); cert != nil {
			return cert, nil
		}
		return nil, errors.New("no serving certificate yet: the kubelet-serving CSR is not approved and signed")
	}
}

// restConfigFrom loads the kubeconfig at path with the kubelet's client
// settings.
func restConfigFrom(o *Options, path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	cfg.UserAgent = "skiff-kubelet"
	return cfg, nil
}
