package clientconfig

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options are the flags for reaching the API server.
type Options struct {
	Kubeconfig string
	Master     string
	// QPS and Burst limit the client; a negative QPS turns the limit off.
	QPS   float32
	Burst int
}

// AddFlags registers the flags under upstream's names.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig file with the API server's address and this daemon's credentials. Empty: in-cluster configuration.")
	fs.StringVar(&o.Master, "master", o.Master, "The address of the API server (overrides the kubeconfig's).")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "Queries per second to the API server; negative: no client-side limit.")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Burst of queries to the API server above --kube-api-qps.")
}

// Validate checks the options.
func (o *Options) Validate() []error {
	if o.QPS > 0 && o.Burst <= 0 {
		return []error{errors.New("--kube-api-burst must be positive when --kube-api-qps is")}
	}
	return nil
}

// RESTConfig loads the kubeconfig (or the in-cluster configuration).
func (o *Options) RESTConfig(userAgent string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig == "" && o.Master == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags(o.Master, o.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("loading the client configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.UserAgent = userAgent
	return cfg, nil
}
