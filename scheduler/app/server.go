package app

import (
	"context"
	"errors"
	"flag"
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
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"skiff.dev/component-base/leaderelection"
	"skiff.dev/component-base/serving"
	"skiff.dev/scheduler/pkg/framework"
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
	leading    atomic.Bool
	synced     atomic.Bool
}

// Addr is the address the health and metrics server listens on.
func (c *Config) Addr() string { return c.Server.Addr() }

// Setup builds the clients, informers, framework and scheduler, and opens
// the HTTPS listener.
func Setup(ctx context.Context, o *Options) (*Config, error) {
	restCfg, err := o.Client.RESTConfig("skiff-scheduler")
	if err != nil {
		return nil, err
	}
	return SetupWithConfig(ctx, o, restCfg)
}

// SetupWithConfig is Setup with a ready client configuration (tests).
func SetupWithConfig(ctx context.Context, o *Options, restCfg *rest.Config) (*Config, error) {
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := scheduler.NewMetrics(reg)

	registry, err := NewRegistry()
	if err != nil {
		return nil, err
	}
	fwk, err := framework.New(o.SchedulerName, registry, DefaultPlugins())
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: o.SchedulerName})
	sched, err := scheduler.New(scheduler.Options{
		Client: client, Informers: factory, Framework: fwk, Recorder: recorder, Metrics: m,
	})
	if err != nil {
		return nil, err
	}
	cfg := &Config{
		Options: o, RESTConfig: restCfg, Client: client, Informers: factory, Registry: reg,
		Metrics: m, Scheduler: sched, Broadcast: broadcaster,
	}
	cfg.Server, err = serving.New(o.Serving, reg, serving.SubjectAccessReviewer{Client: client})
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
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.Server.Start(ctx) })
	c.Broadcast.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.Client.CoreV1().Events("")})
	defer c.Broadcast.Shutdown()

	c.Informers.Start(ctx.Done())
	defer c.Informers.Shutdown()
	g.Go(func() error {
		if !cache.WaitForCacheSync(ctx.Done(), c.Informers.Core().V1().Pods().Informer().HasSynced, c.Informers.Core().V1().Nodes().Informer().HasSynced) {
			return ctx.Err()
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
