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
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"skiff.dev/component-base/eventtime"
	"skiff.dev/component-base/flagsfile"
	cbinformers "skiff.dev/component-base/informers"
	"skiff.dev/component-base/leaderelection"
	"skiff.dev/component-base/serving"
	"skiff.dev/component-base/tracing"
	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/queue"
	"skiff.dev/scheduler/pkg/scheduler"
)

// NewCommand returns the skiff-scheduler command.
func NewCommand(ctx context.Context) *cobra.Command {
	opts := NewOptions()
	cmd := &cobra.Command{
		Use:          "skiff-scheduler",
		Short:        "Assigns pending pods to nodes",
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
	Informers  informers.SharedInformerFactory
	Registry   *prometheus.Registry
	Metrics    *scheduler.Metrics
	Scheduler  *scheduler.Scheduler
	Broadcast  record.EventBroadcaster
	Server     *serving.Server
	// TracerProvider exports the spans (no-op without --tracing-endpoint).
	TracerProvider tracing.Provider
	leading        atomic.Bool
	synced         atomic.Bool
}

// Addr is the address the health and metrics server listens on.
func (c *Config) Addr() string { return c.Server.Addr() }

// Setup builds the clients, informers, framework and scheduler, and opens
// the HTTPS listener.
func Setup(ctx context.Context, o *Options) (*Config, error) {
	registry, err := NewRegistry()
	if err != nil {
		return nil, err
	}
	set, err := o.complete(registry)
	if err != nil {
		return nil, err
	}
	restCfg, err := o.Client.RESTConfig("skiff-scheduler")
	if err != nil {
		return nil, err
	}
	return setup(ctx, o, restCfg, registry, set)
}

// SetupWithConfig is Setup with a ready client configuration (tests); the
// configuration file's client connection is not used.
func SetupWithConfig(ctx context.Context, o *Options, restCfg *rest.Config) (*Config, error) {
	registry, err := NewRegistry()
	if err != nil {
		return nil, err
	}
	set, err := o.complete(registry)
	if err != nil {
		return nil, err
	}
	return setup(ctx, o, restCfg, registry, set)
}

func setup(ctx context.Context, o *Options, restCfg *rest.Config, registry framework.Registry, set *settings) (*Config, error) {
	host, _ := os.Hostname()
	tp, err := o.Tracing.NewProvider(ctx, "skiff-scheduler", host)
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
	m := scheduler.NewMetrics(reg)

	// The frameworks first, so that a bad configuration fails before any
	// request to the API server; the listers follow discovery.
	handle := framework.NewHandle(framework.Listers{})
	nominator := framework.NewNominator()
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	var profiles []scheduler.Profile
	for _, p := range set.profiles {
		recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: p.SchedulerName})
		fwk, err := framework.New(registry, p, handle, framework.WithClientSet(client), framework.WithEventRecorder(recorder),
			framework.WithNominator(nominator))
		if err != nil {
			return nil, err
		}
		profiles = append(profiles, scheduler.Profile{Framework: fwk, Recorder: recorder})
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(cbinformers.TrimManagedFields))
	l, err := listers(client.Discovery(), factory)
	if err != nil {
		return nil, err
	}
	handle.SetListers(l)
	sched, err := scheduler.New(scheduler.Options{
		Client: client, Informers: factory, Profiles: profiles, Handle: handle, Nominator: nominator, Metrics: m,
		Queue:                    queue.New(queue.WithGauges(m.SetPending), queue.WithBackoff(set.initialBackoff, set.maxBackoff)),
		PercentageOfNodesToScore: set.percentageOfNodesToScore,
		TracerProvider:           tp,
	})
	if err != nil {
		return nil, err
	}
	cfg := &Config{
		Options: o, RESTConfig: restCfg, Client: client, Informers: factory, Registry: reg,
		Metrics: m, Scheduler: sched, Broadcast: broadcaster, TracerProvider: tp,
	}
	cfg.Server, err = serving.New(o.Serving, reg, o.Serving.NewAuthorizer(client))
	if err != nil {
		return nil, err
	}
	cfg.Server.AddReadyzCheck(serving.Check{Name: "informer-sync", Fn: func() error {
		if !cfg.synced.Load() {
			return errors.New("informers not synced")
		}
		return nil
	}})
	return cfg, nil
}

// Run serves health and metrics and schedules until ctx ends (or
// leadership is lost, which is an error as upstream treats it).
func Run(ctx context.Context, c *Config) error {
	defer tracing.Shutdown(ctx, c.TracerProvider)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.Server.Start(ctx) })
	c.Broadcast.StartRecordingToSink(eventtime.Sink(&typedcorev1.EventSinkImpl{Interface: c.Client.CoreV1().Events("")}, ""))
	defer c.Broadcast.Shutdown()

	c.Informers.Start(ctx.Done())
	defer c.Informers.Shutdown()
	g.Go(func() error {
		for typ, ok := range c.Informers.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("the %v informer did not sync: %w", typ, ctx.Err())
			}
		}
		c.synced.Store(true)
		return leaderelection.Run(ctx, c.Options.LeaderElection, c.RESTConfig, &c.leading, c.Scheduler.Run)
	})
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Leading reports whether this replica is scheduling.
func (c *Config) Leading() bool { return c.leading.Load() }
