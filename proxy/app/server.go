package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"skiff.dev/component-base/eventtime"
	"skiff.dev/component-base/flagsfile"
	"skiff.dev/proxy/pkg/conntrack"
	"skiff.dev/proxy/pkg/healthcheck"
	"skiff.dev/proxy/pkg/iptables"
	"skiff.dev/proxy/pkg/netsafety"
	"skiff.dev/proxy/pkg/servicemap"
)

// NewCommand returns the skiff-proxy command.
func NewCommand(ctx context.Context) *cobra.Command {
	opts := NewOptions()
	cmd := &cobra.Command{
		Use:          "skiff-proxy",
		Short:        "Programs iptables so that Service addresses reach the Services' endpoints",
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
	Options  *Options
	NodeName string
	Kernel   *iptables.ExecKernel
	// The rest is nil with --cleanup.
	Client    kubernetes.Interface
	Informers informers.SharedInformerFactory
	Nodes     informers.SharedInformerFactory
	Registry  *prometheus.Registry
	Metrics   *iptables.Metrics
	Health    *healthcheck.ProxyHealth
	Proxier   *iptables.Proxier
	Broadcast record.EventBroadcaster
	// HealthzServer and MetricsServer are nil when their address is empty.
	HealthzServer *healthcheck.Server
	MetricsServer *healthcheck.Server

	nodeLister cache.Indexer
}

// Setup builds the clients, informers and proxier and opens the health
// and metrics listeners; with --cleanup only the iptables handle.
func Setup(ctx context.Context, o *Options) (*Config, error) {
	if o.Cleanup {
		return setup(ctx, o, nil)
	}
	restCfg, err := o.Client.RESTConfig("skiff-proxy")
	if err != nil {
		return nil, err
	}
	return setup(ctx, o, restCfg)
}

// SetupWithConfig is Setup with a ready client configuration (tests).
func SetupWithConfig(ctx context.Context, o *Options, restCfg *rest.Config) (*Config, error) {
	return setup(ctx, o, restCfg)
}

func setup(ctx context.Context, o *Options, restCfg *rest.Config) (*Config, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	kernel, err := iptables.NewExecKernel()
	if err != nil {
		return nil, err
	}
	nodeName, err := o.NodeName()
	if err != nil {
		return nil, err
	}
	cfg := &Config{Options: o, NodeName: nodeName, Kernel: kernel}
	if o.Cleanup {
		return cfg, nil
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	cfg.Client = client
	cfg.Registry = prometheus.NewRegistry()
	cfg.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg.Metrics = iptables.NewMetrics(cfg.Registry)
	cfg.Health = healthcheck.New(clock.RealClock{}, 2*o.SyncPeriod)

	// As upstream: Services and slices claimed by another proxy, and
	// headless ones, are not even watched.
	notOurs := func(lo *metav1.ListOptions) {
		lo.LabelSelector = "!" + servicemap.LabelServiceProxyName + ",!" + servicemap.LabelHeadless
	}
	cfg.Informers = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(notOurs))
	cfg.Nodes = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", nodeName).String()
	}))
	svcInformer := cfg.Informers.Core().V1().Services()
	sliceInformer := cfg.Informers.Discovery().V1().EndpointSlices()
	if err := sliceInformer.Informer().AddIndexers(iptables.SliceIndexers()); err != nil {
		return nil, err
	}
	nodeInformer := cfg.Nodes.Core().V1().Nodes().Informer()
	cfg.nodeLister = nodeInformer.GetIndexer()

	cfg.Broadcast = record.NewBroadcaster(record.WithContext(ctx))
	recorder := cfg.Broadcast.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kube-proxy", Host: nodeName})
	svcCIDR, clusterCIDR := mustCIDR(o.ServiceClusterIPRange), mustCIDR(o.ClusterCIDR)
	cfg.Proxier = iptables.New(iptables.Options{
		Rules: iptables.RuleOptions{
			NodeName: nodeName, ClusterCIDR: clusterCIDR, MasqueradeBit: o.MasqueradeBit,
			LocalhostNodePorts: o.LocalhostNodePorts, MasqueradePodEgress: o.MasqueradePodEgress,
		},
		MinSyncPeriod: o.MinSyncPeriod, SyncPeriod: o.SyncPeriod,
		Services: svcInformer.Lister(), Slices: sliceInformer.Informer().GetIndexer(),
		Kernel: kernel, Recorder: recorder, Metrics: cfg.Metrics, Health: cfg.Health,
		RulesWritten:    iptables.NewRulesWritten(client.CoreV1(), nodeName, cfg.Metrics),
		NodeIPs:         cfg.nodeIPs,
		Safety:          func() error { return cfg.installSafety(svcCIDR, clusterCIDR) },
		DeleteConntrack: conntrack.Delete,
	})
	if _, err := svcInformer.Informer().AddEventHandler(cfg.Proxier.ServiceHandler()); err != nil {
		return nil, err
	}
	if _, err := sliceInformer.Informer().AddEventHandler(cfg.Proxier.SliceHandler()); err != nil {
		return nil, err
	}
	if _, err := nodeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { cfg.Proxier.NodeChanged() },
		UpdateFunc: func(old, cur interface{}) { cfg.nodeUpdated(old, cur) },
		DeleteFunc: func(interface{}) { cfg.Proxier.NodeChanged() },
	}); err != nil {
		return nil, err
	}

	if o.HealthzBindAddress != "" {
		mux := http.NewServeMux()
		mux.Handle("/healthz", cfg.Health)
		mux.Handle("/livez", cfg.Health)
		if cfg.HealthzServer, err = healthcheck.Listen(o.HealthzBindAddress, mux); err != nil {
			return nil, fmt.Errorf("listening for /healthz: %w", err)
		}
	}
	if o.MetricsBindAddress != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{}))
		mux.Handle("/healthz", cfg.Health)
		if cfg.MetricsServer, err = healthcheck.Listen(o.MetricsBindAddress, mux); err != nil {
			cfg.close()
			return nil, fmt.Errorf("listening for /metrics: %w", err)
		}
	}
	return cfg, nil
}

func (c *Config) close() {
	if c.HealthzServer != nil {
		_ = c.HealthzServer.Close()
	}
}

// nodeIPs are the IPv4 addresses of this node's Node object.
func (c *Config) nodeIPs() []net.IP {
	obj, ok, err := c.nodeLister.GetByKey(c.NodeName)
	if err != nil || !ok {
		return nil
	}
	return addressesOf(obj.(*corev1.Node))
}

func addressesOf(n *corev1.Node) []net.IP {
	var ips []net.IP
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP && a.Type != corev1.NodeExternalIP {
			continue
		}
		if ip := net.ParseIP(a.Address); ip != nil && ip.To4() != nil {
			ips = append(ips, ip.To4())
		}
	}
	return ips
}

// nodeUpdated asks for a full sync when the node's addresses changed (not
// on every status heartbeat).
func (c *Config) nodeUpdated(old, cur interface{}) {
	o, ok1 := old.(*corev1.Node)
	n, ok2 := cur.(*corev1.Node)
	if !ok1 || !ok2 || fmt.Sprint(addressesOf(o)) != fmt.Sprint(addressesOf(n)) {
		c.Proxier.NodeChanged()
	}
}

// installSafety sets the sysctls, routes the service CIDR to skiff-svc0
// and installs (or removes) the egress guard.
func (c *Config) installSafety(svcCIDR, clusterCIDR *net.IPNet) error {
	var errs []error
	if err := netsafety.SetSysctls(netsafety.Sysctls(c.Options.LocalhostNodePorts)); err != nil {
		errs = append(errs, err)
	}
	if err := netsafety.EnsureServiceRoute(svcCIDR); err != nil {
		errs = append(errs, err)
	}
	if c.Options.EgressGuard {
		errs = append(errs, netsafety.EnsureEgressGuard(c.Kernel.IPTables(), netsafety.Guard{
			ClusterCIDR: clusterCIDR, ServiceCIDR: svcCIDR, AllowInterfaces: c.Options.EgressGuardInterfaces,
		}))
	} else {
		errs = append(errs, netsafety.RemoveEgressGuard(c.Kernel.IPTables()))
	}
	return errors.Join(errs...)
}

// Cleanup removes the egress guard, the jumps, every SKIFF- chain and the
// service route with its interface.
func Cleanup(ctx context.Context, k *iptables.ExecKernel) error {
	return errors.Join(
		netsafety.RemoveEgressGuard(k.IPTables()),
		iptables.Cleanup(ctx, k),
		netsafety.RemoveServiceRoute(),
	)
}

// Run installs the traffic safety, then serves health and metrics and
// syncs the rules until ctx ends. With --cleanup it removes everything
// and returns.
func Run(ctx context.Context, c *Config) error {
	logger := klog.FromContext(ctx)
	if c.Options.Cleanup {
		if err := Cleanup(ctx, c.Kernel); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
		logger.Info("Removed the proxy's rules, chains, route and interface")
		return nil
	}
	svcCIDR, clusterCIDR := mustCIDR(c.Options.ServiceClusterIPRange), mustCIDR(c.Options.ClusterCIDR)
	// Before anything else, and before the first sync: no packet for a
	// cluster address may leave the machine.
	if err := c.installSafety(svcCIDR, clusterCIDR); err != nil {
		return fmt.Errorf("installing the traffic safety: %w", err)
	}
	logger.Info("Traffic safety in place", "serviceCIDR", svcCIDR, "routeInterface", netsafety.DummyInterface,
		"egressGuard", c.Options.EgressGuard, "allowInterfaces", c.Options.EgressGuardInterfaces)

	keeper, err := netsafety.NewRouteKeeper(svcCIDR, func(err error) { logger.Error(err, "Putting back the service route") })
	if err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	if c.HealthzServer != nil {
		g.Go(func() error { return c.HealthzServer.Start(ctx) })
	}
	if c.MetricsServer != nil {
		g.Go(func() error { return c.MetricsServer.Start(ctx) })
	}
	g.Go(func() error { return keeper.Start(ctx) })
	g.Go(func() error { c.Proxier.RunRulesWritten(ctx); return nil })
	c.Broadcast.StartRecordingToSink(eventtime.Sink(&typedcorev1.EventSinkImpl{Interface: c.Client.CoreV1().Events("")}, ""))
	defer c.Broadcast.Shutdown()
	c.Informers.Start(ctx.Done())
	c.Nodes.Start(ctx.Done())
	defer c.Informers.Shutdown()
	defer c.Nodes.Shutdown()
	g.Go(func() error {
		for typ, ok := range c.Informers.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("the %v informer did not sync: %w", typ, ctx.Err())
			}
		}
		c.Nodes.WaitForCacheSync(ctx.Done())
		logger.Info("Caches synced; syncing the proxy rules", "node", c.NodeName)
		return c.Proxier.Run(ctx)
	})
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
