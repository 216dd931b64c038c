package app

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"

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
	Listener   net.Listener
	tlsConfig  *tls.Config
	leading    atomic.Bool
	synced     atomic.Bool
}

// Addr is the address the health and metrics server listens on.
func (c *Config) Addr() string { return c.Listener.Addr().String() }

// BuildRESTConfig loads the kubeconfig (or the in-cluster config).
func BuildRESTConfig(o *Options) (*rest.Config, error) {
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
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	cfg.UserAgent = "skiff-scheduler"
	return cfg, nil
}

// Setup builds the clients, informers, framework and scheduler, and opens
// the HTTPS listener.
func Setup(ctx context.Context, o *Options) (*Config, error) {
	restCfg, err := BuildRESTConfig(o)
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
	if cfg.tlsConfig, err = servingTLS(o); err != nil {
		return nil, err
	}
	cfg.Listener, err = net.Listen("tcp", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	if err != nil {
		return nil, fmt.Errorf("listening for health and metrics: %w", err)
	}
	return cfg, nil
}

func servingTLS(o *Options) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	if o.TLSCertFile != "" {
		cert, err = tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
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
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Run serves health and metrics and schedules until ctx ends (or
// leadership is lost, which is an error as upstream treats it).
func Run(ctx context.Context, c *Config) error {
	logger := klog.FromContext(ctx)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.serve(ctx) })
	c.Broadcast.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.Client.CoreV1().Events("")})
	defer c.Broadcast.Shutdown()

	c.Informers.Start(ctx.Done())
	defer c.Informers.Shutdown()
	g.Go(func() error {
		if !cache.WaitForCacheSync(ctx.Done(), c.Informers.Core().V1().Pods().Informer().HasSynced, c.Informers.Core().V1().Nodes().Informer().HasSynced) {
			return ctx.Err()
		}
		c.synced.Store(true)
		if !c.Options.LeaderElect {
			c.leading.Store(true)
			return c.Scheduler.Run(ctx)
		}
		return c.runWithLeaderElection(ctx, logger)
	})
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func (c *Config) runWithLeaderElection(ctx context.Context, logger klog.Logger) error {
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	id := host + "_" + uuid.NewString()
	leClient, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(c.RESTConfig), "leader-election"))
	if err != nil {
		return err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: c.Options.ResourceNamespace, Name: c.Options.ResourceName},
		Client:     leClient.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	// OnStartedLeading runs in a goroutine of the elector's; runDone carries
	// its result so Run returns only after the scheduler has stopped.
	// A callback that starts after le.Run returned sees stopped and does
	// nothing.
	runDone := make(chan error, 1)
	var (
		mu               sync.Mutex
		started, stopped bool
		lost             atomic.Bool
	)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   c.Options.LeaseDuration,
		RenewDeadline:   c.Options.RenewDeadline,
		RetryPeriod:     c.Options.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            c.Options.ResourceName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				logger.Info("Started leading", "lease", c.Options.ResourceNamespace+"/"+c.Options.ResourceName, "identity", id)
				mu.Lock()
				if stopped {
					mu.Unlock()
					return
				}
				started = true
				mu.Unlock()
				c.leading.Store(true)
				runDone <- c.Scheduler.Run(ctx)
			},
			OnStoppedLeading: func() {
				c.leading.Store(false)
				if ctx.Err() == nil {
					lost.Store(true)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	le.Run(ctx)
	mu.Lock()
	stopped = true
	wasStarted := started
	mu.Unlock()
	var runErr error
	if wasStarted {
		runErr = <-runDone
	}
	if lost.Load() {
		return errors.New("leader election lost")
	}
	return runErr
}

func (c *Config) serve(ctx context.Context) error {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/livez", ok)
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !c.synced.Load() {
			http.Error(w, "informers not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.Handle("/metrics", promhttp.HandlerFor(c.Registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, TLSConfig: c.tlsConfig, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(c.Listener, "", "") }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	}
}

// Leading reports whether this replica is scheduling.
func (c *Config) Leading() bool { return c.leading.Load() }
