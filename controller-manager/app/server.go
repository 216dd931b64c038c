package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"skiff.dev/component-base/eventtime"
	"skiff.dev/component-base/flagsfile"
	cbinformers "skiff.dev/component-base/informers"
	"skiff.dev/component-base/leaderelection"
	"skiff.dev/component-base/serving"
	"skiff.dev/component-base/tracing"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// NewCommand returns the skiff-controller-manager command.
func NewCommand(ctx context.Context) *cobra.Command {
	opts := NewOptions()
	cmd := &cobra.Command{
		Use:          "skiff-controller-manager",
		Short:        "Runs the control loops that keep the cluster as its objects describe it",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	cmd.Flags().AddGoFlagSet(klogFlags)
	flagsfile.Install(cmd)
	return cmd
}

// Config is everything Setup built.
type Config struct {
	Options    *Options
	RESTConfig *rest.Config
	Client     kubernetes.Interface
	Registry   *prometheus.Registry
	Metrics    *metrics.Metrics
	Server     *serving.Server
	// TracerProvider exports the spans (no-op without --tracing-endpoint).
	TracerProvider tracing.Provider
	leading        atomic.Bool
	started        atomic.Bool
}

// Addr is the address the health and metrics server listens on.
func (c *Config) Addr() string { return c.Server.Addr() }

// Leading reports whether this replica holds the Lease and runs the
// controllers.
func (c *Config) Leading() bool { return c.leading.Load() }

// Setup loads the client configuration and opens the health and metrics
// listener.
func Setup(ctx context.Context, o *Options) (*Config, error) {
	restCfg, err := o.Client.RESTConfig("skiff-controller-manager")
	if err != nil {
		return nil, err
	}
	return SetupWithConfig(ctx, o, restCfg)
}

// SetupWithConfig is Setup with a ready client configuration (tests).
func SetupWithConfig(ctx context.Context, o *Options, restCfg *rest.Config) (*Config, error) {
	host, _ := os.Hostname()
	tp, err := o.Tracing.NewProvider(ctx, "skiff-controller-manager", host)
	if err != nil {
		return nil, err
	}
	restCfg = tracing.WrapConfig(restCfg, tp)
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	c := &Config{Options: o, RESTConfig: restCfg, Client: client, Registry: reg, Metrics: metrics.New(reg), TracerProvider: tp}
	c.Server, err = serving.New(o.Serving, reg, o.Serving.NewAuthorizer(client))
	if err != nil {
		return nil, err
	}
	// A standby replica is ready: it is waiting for the Lease, as it should.
	c.Server.AddReadyzCheck(serving.Check{Name: "controllers", Fn: func() error {
		if c.leading.Load() && !c.started.Load() {
			return errors.New("controllers are starting")
		}
		return nil
	}})
	return c, nil
}

// Run serves health and metrics and, while leading, runs the controllers
// until ctx ends. Losing the Lease is an error, as upstream treats it.
func Run(ctx context.Context, c *Config) error {
	defer tracing.Shutdown(ctx, c.TracerProvider)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.Server.Start(ctx) })
	g.Go(func() error {
		return leaderelection.Run(ctx, c.Options.LeaderElection, c.RESTConfig, &c.leading, c.runControllers)
	})
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// runControllers builds the enabled controllers, starts the informers they
// asked for and runs them all until ctx ends.
func (c *Config) runControllers(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	cc, err := c.newControllerContext(ctx)
	if err != nil {
		return err
	}
	defer cc.Broadcaster.Shutdown()
	cc.Broadcaster.StartRecordingToSink(eventtime.Sink(&typedcorev1.EventSinkImpl{Interface: c.Client.CoreV1().Events("")}, ""))

	g, ctx := errgroup.WithContext(ctx)
	for _, ctrl := range Controllers() {
		if !c.Options.enabled(ctrl) {
			logger.Info("Controller disabled", "controller", ctrl.Name)
			continue
		}
		run, err := ctrl.Init(ctx, cc)
		if err != nil {
			return fmt.Errorf("starting the %s controller: %w", ctrl.Name, err)
		}
		if run == nil {
			logger.Info("Controller not needed with these flags", "controller", ctrl.Name)
			continue
		}
		logger.Info("Starting controller", "controller", ctrl.Name)
		g.Go(func() error {
			if err := run(ctx); err != nil && ctx.Err() == nil {
				return fmt.Errorf("the %s controller: %w", ctrl.Name, err)
			}
			return nil
		})
	}
	cc.Informers.Start(ctx.Done())
	defer cc.Informers.Shutdown()
	c.started.Store(true)
	return g.Wait()
}

// ControllerContext is what a controller is built from.
type ControllerContext struct {
	Options   *Options
	Client    kubernetes.Interface
	Metadata  metadata.Interface
	Discovery discovery.CachedDiscoveryInterface
	Informers informers.SharedInformerFactory
	// Broadcaster sends every controller's events; Recorder gives each its
	// own source component, as upstream names them.
	Broadcaster record.EventBroadcaster
	Metrics     *metrics.Metrics
	RESTConfig  *rest.Config
	// TracerProvider is for the controllers' spans (no-op: tracing off).
	TracerProvider trace.TracerProvider
}

// Recorder returns an event recorder whose source is component.
func (cc *ControllerContext) Recorder(component string) record.EventRecorder {
	return cc.Broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
}

// ClientFor returns a client whose User-Agent names the controller, so the
// API server's logs and audit tell the controllers apart.
func (cc *ControllerContext) ClientFor(controller string) (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(cc.RESTConfig), controller))
}

func (c *Config) newControllerContext(ctx context.Context) (*ControllerContext, error) {
	md, err := metadata.NewForConfig(c.RESTConfig)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.RESTConfig)
	if err != nil {
		return nil, err
	}
	return &ControllerContext{
		Options:     c.Options,
		Client:      c.Client,
		Metadata:    md,
		Discovery:   memory.NewMemCacheClient(dc),
		Informers:   informers.NewSharedInformerFactoryWithOptions(c.Client, c.Options.ResyncPeriod, informers.WithTransform(cbinformers.TrimManagedFields)),
		Broadcaster: record.NewBroadcaster(record.WithContext(ctx)),
		Metrics:     c.Metrics,
		RESTConfig:  c.RESTConfig,

		TracerProvider: c.TracerProvider,
	}, nil
}
