package serving

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
)

// Options are a daemon's flags for its health and metrics server.
type Options struct {
	BindAddress string
	// Port is the HTTPS port; 0 picks a free one.
	Port     int
	CertFile string
	KeyFile  string
	// ClientCAFile, when set, turns on authentication and authorization of
	// /metrics (see the package documentation).
	ClientCAFile string
	// AuthorizedTTL and UnauthorizedTTL are how long an allowed and a
	// denied SubjectAccessReview are remembered (see SubjectAccessReviewer).
	AuthorizedTTL   time.Duration
	UnauthorizedTTL time.Duration
}

// NewOptions returns the defaults with the daemon's port.
func NewOptions(port int) *Options {
	return &Options{BindAddress: "0.0.0.0", Port: port,
		AuthorizedTTL: DefaultAuthorizedTTL, UnauthorizedTTL: DefaultUnauthorizedTTL}
}

// AddFlags registers the flags under upstream's names.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "The IP address to serve /healthz, /readyz and /metrics on (HTTPS).")
	fs.IntVar(&o.Port, "secure-port", o.Port, "The port to serve HTTPS on; 0 picks a free port.")
	fs.StringVar(&o.CertFile, "tls-cert-file", o.CertFile, "Serving certificate; empty: a self-signed one is generated in memory.")
	fs.StringVar(&o.KeyFile, "tls-private-key-file", o.KeyFile, "Private key for --tls-cert-file.")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle for client certificates; when set, /metrics requires a client certificate whose user the API server authorizes to get /metrics.")
	fs.DurationVar(&o.AuthorizedTTL, "authorization-webhook-cache-authorized-ttl", o.AuthorizedTTL, "The duration to cache 'authorized' responses from the API server's SubjectAccessReviews; 0 caches none.")
	fs.DurationVar(&o.UnauthorizedTTL, "authorization-webhook-cache-unauthorized-ttl", o.UnauthorizedTTL, "The duration to cache 'unauthorized' responses from the API server's SubjectAccessReviews; 0 caches none.")
}

// NewAuthorizer returns the SubjectAccessReviewer for client with the
// options' cache TTLs.
func (o *Options) NewAuthorizer(client kubernetes.Interface) *SubjectAccessReviewer {
	return NewSubjectAccessReviewer(client, o.AuthorizedTTL, o.UnauthorizedTTL, nil)
}

// Validate checks the options.
func (o *Options) Validate() []error {
	var errs []error
	if o.Port < 0 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %d must be between 0 and 65535", o.Port))
	}
	if net.ParseIP(o.BindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress))
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	if o.AuthorizedTTL < 0 {
		errs = append(errs, fmt.Errorf("--authorization-webhook-cache-authorized-ttl %v must not be negative", o.AuthorizedTTL))
	}
	if o.UnauthorizedTTL < 0 {
		errs = append(errs, fmt.Errorf("--authorization-webhook-cache-unauthorized-ttl %v must not be negative", o.UnauthorizedTTL))
	}
	return errs
}

// Listen opens the listener and builds the TLS configuration.
func (o *Options) Listen() (net.Listener, *tls.Config, error) {
	cfg, err := o.tlsConfig()
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.Port)))
	if err != nil {
		return nil, nil, fmt.Errorf("listening for health and metrics: %w", err)
	}
	return ln, cfg, nil
}

func (o *Options) tlsConfig() (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	if o.CertFile != "" {
		cert, err = tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	} else {
		var certPEM, keyPEM []byte
		certPEM, keyPEM, err = certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.ParseIP("127.0.0.1")}, nil)
		if err == nil {
			cert, err = tls.X509KeyPair(certPEM, keyPEM)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("loading the serving certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if o.ClientCAFile != "" {
		pem, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("reading --client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--client-ca-file %s holds no PEM certificate", o.ClientCAFile)
		}
		cfg.ClientCAs = pool
		// Health stays reachable without a certificate; /metrics checks.
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}
