package app

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"
)

// Options are skiff-scheduler's flags.
type Options struct {
	Kubeconfig    string
	Master        string
	SchedulerName string

	BindAddress string
	SecurePort  int
	TLSCertFile string
	TLSKeyFile  string

	KubeAPIQPS   float32
	KubeAPIBurst int

	LeaderElect       bool
	LeaseDuration     time.Duration
	RenewDeadline     time.Duration
	RetryPeriod       time.Duration
	ResourceNamespace string
	ResourceName      string
}

// NewOptions returns the defaults, as upstream's.
func NewOptions() *Options {
	return &Options{
		SchedulerName:     "default-scheduler",
		BindAddress:       "0.0.0.0",
		SecurePort:        10259,
		KubeAPIQPS:        50,
		KubeAPIBurst:      100,
		LeaderElect:       true,
		LeaseDuration:     15 * time.Second,
		RenewDeadline:     10 * time.Second,
		RetryPeriod:       2 * time.Second,
		ResourceNamespace: "kube-system",
		ResourceName:      "kube-scheduler",
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig file with the API server's address and the scheduler's credentials. Empty: in-cluster configuration.")
	fs.StringVar(&o.Master, "master", o.Master, "The address of the API server (overrides the kubeconfig's).")
	fs.StringVar(&o.SchedulerName, "scheduler-name", o.SchedulerName, "Schedule only pods whose spec.schedulerName is this; also the events' source.")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "The IP address to serve /healthz, /readyz and /metrics on (HTTPS).")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "The port to serve HTTPS on; 0 picks a free port.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "Serving certificate; empty: a self-signed one is generated in memory.")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "Private key for --tls-cert-file.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "QPS to use while talking with the API server.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst to use while talking with the API server.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Hold a Lease before scheduling, so that only one of several replicas is active.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long non-leaders wait after the last renewal before taking over.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "How long the leader retries renewing before it gives up leadership.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "How long to wait between attempts to acquire or renew.")
	fs.StringVar(&o.ResourceNamespace, "leader-elect-resource-namespace", o.ResourceNamespace, "The namespace of the Lease.")
	fs.StringVar(&o.ResourceName, "leader-elect-resource-name", o.ResourceName, "The name of the Lease.")
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if o.SchedulerName == "" {
		errs = append(errs, errors.New("--scheduler-name must not be empty"))
	}
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %d must be between 0 and 65535", o.SecurePort))
	}
	if net.ParseIP(o.BindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress))
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	if o.LeaderElect {
		if o.LeaseDuration <= o.RenewDeadline {
			errs = append(errs, errors.New("--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline"))
		}
		if o.RetryPeriod <= 0 || o.RenewDeadline <= o.RetryPeriod {
			errs = append(errs, errors.New("--leader-elect-renew-deadline must be greater than --leader-elect-retry-period, which must be positive"))
		}
		if o.ResourceNamespace == "" || o.ResourceName == "" {
			errs = append(errs, errors.New("--leader-elect-resource-namespace and --leader-elect-resource-name must not be empty"))
		}
	}
	return errors.Join(errs...)
}
