package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/coredns/caddy"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"skiff.dev/component-base/flagsfile"
	"skiff.dev/dns/pkg/kubeapi"
	"skiff.dev/dns/pkg/reload"
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
	// source is where the reload directive reads the Corefile again.
	source corefileSource
	// Client and registrar are nil without --register-service.
	Client    kubernetes.Interface
	registrar *registrar
	// started is closed once the DNS server listens (instance is set).
	started chan struct{}
	// mu guards instance, the running CoreDNS instance (a new one after
	// each reload).
	mu       sync.Mutex
	instance *caddy.Instance
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
	source := corefileSource{path: o.Conf, builtin: DefaultCorefile(o)}
	input, err := useCorefile(source)
	if err != nil {
		return nil, err
	}
	if restCfg != nil {
		kubeapi.SetClientConfig(restCfg)
	}
	cfg := &Config{Options: o, NodeName: nodeName, Corefile: input, source: source, started: make(chan struct{})}
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

// Instance is the running CoreDNS instance (after Started; a new one
// after each reload).
func (c *Config) Instance() *caddy.Instance {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.instance
}

func (c *Config) setInstance(inst *caddy.Instance) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.instance = inst
}

// DNSAddrs are the UDP and TCP addresses the server listens on (after
// Started).
func (c *Config) DNSAddrs() (udp, tcp net.Addr) {
	for _, s := range c.Instance().Servers() {
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
// instance's EndpointSlice, and reloads the Corefile as its reload
// directive asks, until ctx ends; then it deletes the slice and stops the
// server. Run stops only the instance it started (or the one the last
// reload replaced it with), once, after its reload loop has returned:
// nothing restarts it after that, and instances other Runs of the
// process started (one after another, in tests) are not touched.
func Run(ctx context.Context, c *Config) error {
	logger := klog.FromContext(ctx)
	inst, err := caddy.Start(c.Corefile)
	if err != nil {
		return fmt.Errorf("starting CoreDNS: %w", err)
	}
	c.setInstance(inst)
	close(c.started)
	logger.Info("Serving DNS", "corefile", c.Corefile.Path(), "coredns", CoreDNSVersion(), "node", c.NodeName)

	g, gctx := errgroup.WithContext(ctx)
	if c.registrar != nil {
		g.Go(func() error { return c.registrar.Start(gctx) })
	}
	g.Go(func() error {
		// The built-in Corefile reads the same every time: the loop
		// never finds a change in it.
		last := reload.Watch(gctx, inst, c.source.load, func(i *caddy.Instance) {
			c.setInstance(i)
			logger.Info("Reloaded the Corefile", "corefile", i.Caddyfile().Path())
		})
		c.setInstance(last)
		<-gctx.Done()
		return nil
	})
	err = g.Wait()
	inst = c.Instance()
	errs := inst.ShutdownCallbacks()
	errs = append(errs, inst.Stop())
	if err := errors.Join(errs...); err != nil {
		logger.Error(err, "Stopping CoreDNS")
	}
	logger.Info("Stopped serving DNS")
	return err
}
