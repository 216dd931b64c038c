package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"time"

	"github.com/coredns/caddy"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"skiff.dev/component-base/flagsfile"
	"skiff.dev/dns/pkg/kubeapi"
)

// NewCommand returns the skiff-dns command.
func NewCommand(ctx context.Context) *cobra.Command {
	opts := NewOptions()
	var printCorefile bool
	cmd := &cobra.Command{
		Use:          "skiff-dns",
		Short:        "Serves the cluster's DNS names (CoreDNS with its kubernetes plugin)",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if printCorefile {
				_, err := fmt.Fprint(cmd.OutOrStdout(), DefaultCorefile(opts))
				return err
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			cfg, err := Setup(ctx, opts)
			if err != nil {
				return err
			}
			return Run(ctx, cfg)
		},
	}
	opts.AddFlags(cmd.Flags())
	cmd.Flags().BoolVar(&printCorefile, "print-default-corefile", false, "Print the built-in Corefile as the other flags fill it in, and exit.")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	cmd.Flags().AddGoFlagSet(klogFlags)
	flagsfile.Install(cmd)
	return cmd
}

// Config is everything Setup built.
type Config struct {
	Options  *Options
	NodeName string
	// Corefile is what the server starts from.
	Corefile caddy.Input
	// Client and registrar are nil without --register-service.
	Client    kubernetes.Interface
	registrar *registrar
	// started is closed once the DNS server listens (Instance is set).
	started  chan struct{}
	Instance *caddy.Instance
}

// Setup loads the Corefile and builds the API client from --kubeconfig
// and --master.
func Setup(ctx context.Context, o *Options) (*Config, error) {
	restCfg, err := o.Client.RESTConfig("skiff-dns")
	if err != nil {
		if o.RegisterService {
			return nil, err
		}
		// A Corefile without kubernetes and kubeapi needs no client; with
		// them, their setup says what is missing.
		restCfg = nil
	}
	return SetupWithConfig(ctx, o, restCfg)
}

// SetupWithConfig is Setup with a ready client configuration for the
// Service registration and the kubeapi plugin (tests); the Corefile's
// kubernetes plugin still reads --kubeconfig.
func SetupWithConfig(ctx context.Context, o *Options, restCfg *rest.Config) (*Config, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	nodeName, err := o.NodeName()
	if err != nil {
		return nil, err
	}
	input, err := useCorefile(corefileSource{path: o.Conf, builtin: DefaultCorefile(o)})
	if err != nil {
		return nil, err
	}
	if restCfg != nil {
		kubeapi.SetClientConfig(restCfg)
	}
	cfg := &Config{Options: o, NodeName: nodeName, Corefile: input, started: make(chan struct{})}
	if o.RegisterService {
		if restCfg == nil {
			return nil, errors.New("--register-service needs a client configuration")
		}
		client, err := kubernetes.NewForConfig(restCfg)
		if err != nil {
			return nil, err
		}
		metricsPort, _ := portOf(o.MetricsBindAddress)
		cfg.Client = client
		cfg.registrar = &registrar{
			client: client, namespace: o.ServiceNamespace, service: o.ServiceName, clusterIP: o.ClusterIP,
			nodeName: nodeName, nodeIP: o.AdvertiseAddress, dnsPort: int32(o.Port), metrics: int32(metricsPort),
			period: 30 * time.Second, leaseDuration: o.LeaseDuration, renewInterval: o.LeaseRenewInterval,
		}
	}
	return cfg, nil
}

// Started is closed once the DNS server listens.
func (c *Config) Started() <-chan struct{} { return c.started }

// DNSAddrs are the UDP and TCP addresses the server listens on (after
// Started).
func (c *Config) DNSAddrs() (udp, tcp net.Addr) {
	for _, s := range c.Instance.Servers() {
		if a := s.LocalAddr(); a != nil && udp == nil {
			udp = a
		}
		if a := s.Addr(); a != nil && tcp == nil {
			tcp = a
		}
	}
	return udp, tcp
}

// Run starts CoreDNS's server, then keeps the DNS Service and this
// instance's EndpointSlice until ctx ends; then it deletes the slice and
// stops the server.
func Run(ctx context.Context, c *Config) error {
	logger := klog.FromContext(ctx)
	inst, err := caddy.Start(c.Corefile)
	if err != nil {
		return fmt.Errorf("starting CoreDNS: %w", err)
	}
	c.Instance = inst
	close(c.started)
	logger.Info("Serving DNS", "corefile", c.Corefile.Path(), "coredns", CoreDNSVersion(), "node", c.NodeName)

	g, gctx := errgroup.WithContext(ctx)
	if c.registrar != nil {
		g.Go(func() error { return c.registrar.Start(gctx) })
	}
	g.Go(func() error {
		<-gctx.Done()
		return nil
	})
	err = g.Wait()
	// The reload plugin may have replaced the instance this started with
	// a new one: stop whatever runs (one server per process).
	var errs []error
	for _, i := range caddy.Instances() {
		errs = append(errs, i.ShutdownCallbacks()...)
	}
	errs = append(errs, caddy.Stop())
	if err := errors.Join(errs...); err != nil {
		logger.Error(err, "Stopping CoreDNS")
	}
	logger.Info("Stopped serving DNS")
	return err
}
