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
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"

	"skiff.dev/component-base/eventtime"
	"skiff.dev/component-base/flagsfile"
	"skiff.dev/component-base/tracing"
	"skiff.dev/kubelet/pkg/cm"
	"skiff.dev/kubelet/pkg/cni"
	"skiff.dev/kubelet/pkg/containerd"
	"skiff.dev/kubelet/pkg/eviction"
	"skiff.dev/kubelet/pkg/imagegc"
	"skiff.dev/kubelet/pkg/images"
	"skiff.dev/kubelet/pkg/kubelet"
	"skiff.dev/kubelet/pkg/localpath"
	"skiff.dev/kubelet/pkg/nodestatus"
	"skiff.dev/kubelet/pkg/pod"
	"skiff.dev/kubelet/pkg/routes"
	"skiff.dev/kubelet/pkg/server"
	"skiff.dev/kubelet/pkg/stats"
)

// Version is the kubelet version the node reports.
const Version = "v1.32.0-skiff"

// NewCommand returns the skiff-kubelet command.
func NewCommand(ctx context.Context) *cobra.Command {
	opts := NewOptions()
	cmd := &cobra.Command{
		Use:          "skiff-kubelet",
		Short:        "Runs the pods bound to this node with containerd and CNI",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := Setup(ctx, opts)
			if err != nil {
				return err
			}
			defer cfg.Close()
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
	Options   *Options
	Client    kubernetes.Interface
	Registry  *prometheus.Registry
	Metrics   *kubelet.Metrics
	Runtime   *containerd.Runtime
	Network   *cni.Network
	Node      *nodestatus.Manager
	Kubelet   *kubelet.Kubelet
	Broadcast record.EventBroadcaster
	Listener  net.Listener
	API       *server.Server
	Routes    *routes.Controller
	Eviction  *eviction.Manager
	ImageGC   *imagegc.Manager
	// LocalPath is this node's local-path provisioner (nil: off).
	LocalPath *localpath.Provisioner
	// Informers are the kubelet's shared informers besides its pods'
	// (Services).
	Informers informers.SharedInformerFactory
	tlsConfig *tls.Config
	// TracerProvider exports the spans (no-op without --tracing-endpoint).
	TracerProvider tracing.Provider
}

// Addr is the address of the HTTPS server.
func (c *Config) Addr() string { return c.Listener.Addr().String() }

// Close releases the containerd connection and the listener (Run closes
// the listener itself when it served).
func (c *Config) Close() {
	_ = c.Runtime.Close()
	_ = c.Listener.Close()
}

// BuildRESTConfig loads the kubeconfig.
func BuildRESTConfig(o *Options) (*rest.Config, error) {
	if o.Kubeconfig == "" {
		return nil, errors.New("--kubeconfig is required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	cfg.UserAgent = "skiff-kubelet"
	return cfg, nil
}

// Setup completes and checks the options and builds every part.
func Setup(ctx context.Context, o *Options) (*Config, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	o.Complete(host)
	if err := o.Validate(); err != nil {
		return nil, err
	}
	restCfg, err := ClientConfig(ctx, o)
	if err != nil {
		return nil, err
	}
	return SetupWithConfig(ctx, o, restCfg)
}

// SetupWithConfig is Setup with a ready client configuration.
func SetupWithConfig(ctx context.Context, o *Options, restCfg *rest.Config) (*Config, error) {
	host, _ := os.Hostname()
	o.Complete(host)
	if err := o.Validate(); err != nil {
		return nil, err
	}
	tp, err := o.Tracing.NewProvider(ctx, "skiff-kubelet", o.NodeName)
	if err != nil {
		return nil, err
	}
	restCfg = tracing.WrapConfig(restCfg, tp)
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.RootDir, 0o755); err != nil {
		return nil, err
	}
	nodeIP := o.NodeIP
	if nodeIP == "" {
		if nodeIP, err = nodestatus.DefaultNodeIP(); err != nil {
			return nil, err
		}
	}
	machine, err := nodestatus.ReadMachine(o.RootDir)
	if err != nil {
		return nil, err
	}
	hierarchies, err := cm.DiscoverHierarchies("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	cgroups, err := cm.New(cm.Options{Hierarchies: hierarchies, Root: o.CgroupRoot})
	if err != nil {
		return nil, err
	}
	if err := cgroups.Setup(); err != nil {
		return nil, fmt.Errorf("setting up the pods' cgroups under %s: %w", cgroups.Kubepods(), err)
	}
	regs, err := images.LoadRegistries(o.RegistriesConfig)
	if err != nil {
		return nil, err
	}
	regs.DisableDefaultEndpoint = regs.DisableDefaultEndpoint || o.DisableDefaultRegistryEndpoint
	rt, err := containerd.New(containerd.Options{
		Address: o.ContainerdAddress, Namespace: o.ContainerdNamespace, Snapshotter: o.Snapshotter, Registries: regs,
		LogDriver: o.LogDriver, Pause: o.PauseProgram,
	})
	if err != nil {
		return nil, err
	}
	network, err := cni.New(cni.Options{
		BinDirs: o.CNIBinDirs, ConfDir: o.CNIConfDir, CacheDir: o.CNICacheDir, NetNSDir: o.NetNSDir,
		IPAMDir: filepath.Join(o.RootDir, "cni", "networks"), BridgeName: o.BridgeName,
	})
	if err != nil {
		_ = rt.Close()
		return nil, err
	}
	cfg := &Config{Options: o, Client: client, Runtime: rt, Network: network, Registry: prometheus.NewRegistry(), TracerProvider: tp}
	cfg.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg.Broadcast = record.NewBroadcaster(record.WithContext(ctx))
	recorder := cfg.Broadcast.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: o.NodeName})

	var k *kubelet.Kubelet
	cfg.Metrics = kubelet.NewMetrics(cfg.Registry, func() int { return k.RunningPods() })
	runtime := kubelet.Instrument(rt, cfg.Metrics)
	podNetwork := kubelet.InstrumentNetwork(network, cfg.Metrics)
	if !tracing.IsNoop(tp) {
		runtime, podNetwork = pod.TracedRuntime(runtime), pod.TracedNetwork(podNetwork)
	}
	// Every Service, for the pods' service environment variables.
	cfg.Informers = informers.NewSharedInformerFactory(client, 0)
	svcInformer := cfg.Informers.Core().V1().Services()
	services := kubelet.Services{Lister: svcInformer.Lister(), HasSynced: svcInformer.Informer().HasSynced}
	env := pod.EnvContext{Objects: kubelet.Objects{Client: client}, HostIP: nodeIP, NodeAllocatable: machine.Capacity(), Services: services}
	handlers := &pod.HandlerRunner{Runtime: runtime}
	lifecycle := &pod.Lifecycle{Hooks: []pod.Hook{
		&pod.NetworkHook{Network: podNetwork, HostIP: nodeIP},
		&pod.CgroupHook{Cgroups: cgroups},
		&pod.VolumesHook{
			Dir: filepath.Join(o.RootDir, "pods"), DNS: o.dnsConfigurer(), NodeHosts: "/etc/hosts", Env: env, Tokens: kubelet.Tokens{Client: client},
			Mounter: kubelet.HostMounter{}, Recorder: recorder, Claims: kubelet.Objects{Client: client},
		},
		&pod.ImagesHook{Runtime: runtime, Recorder: recorder, Secrets: env.Objects, NoPresentEvent: !o.TracePodStart},
		&pod.ContainersHook{
			Runtime: runtime, LogDir: filepath.Join(o.RootDir, "logs"), PodsDir: filepath.Join(o.RootDir, "pods"),
			Recorder: recorder, Env: env, Handlers: handlers,
		},
		&pod.ProbesHook{Runtime: runtime, Probe: (&pod.Prober{Runtime: runtime}).Probe, Recorder: recorder, Handlers: handlers},
	}}
	var evictions *eviction.Manager
	k = kubelet.New(kubelet.Options{
		Admit:    func(p *corev1.Pod) (bool, string, string) { return evictions.Admit(p) },
		NodeName: o.NodeName, Client: client, Runtime: runtime, Network: network, Lifecycle: lifecycle,
		HostIP: nodeIP, SyncPeriod: o.SyncFrequency, Metrics: cfg.Metrics, Recorder: recorder,
		PodDirs:        []string{filepath.Join(o.RootDir, "pods"), filepath.Join(o.RootDir, "logs")},
		PodUIDSources:  []func() ([]types.UID, error){cgroups.PodUIDs},
		TracerProvider: tp,
	})
	cfg.Kubelet = k
	if o.LocalPathDir != "" {
		if cfg.LocalPath, err = localpath.New(localpath.Options{
			NodeName: o.NodeName, Dir: o.LocalPathDir, Client: client, Recorder: recorder,
			Claims: cfg.Informers.Core().V1().PersistentVolumeClaims(), Volumes: cfg.Informers.Core().V1().PersistentVolumes(),
		}); err != nil {
			_ = rt.Close()
			return nil, err
		}
	}
	imageFS := o.ContainerdRoot
	if _, err := os.Stat(imageFS); err != nil {
		klog.FromContext(ctx).Info("containerd's root is not here; the image filesystem is taken to be the kubelet's", "containerdRoot", imageFS, "rootDir", o.RootDir)
		imageFS = o.RootDir
	}
	nodeRef := &corev1.ObjectReference{Kind: "Node", Name: o.NodeName, UID: types.UID(o.NodeName)}
	if cfg.ImageGC, err = imagegc.New(imagegc.Options{
		Policy: *o.ImageGC, Runtime: containerd.ImageGC{R: rt}, ImageFS: imagegc.StatFS(imageFS),
		Recorder: recorder, NodeRef: nodeRef, Registerer: cfg.Registry, Interval: o.ImageGCInterval,
	}); err != nil {
		_ = rt.Close()
		return nil, err
	}
	thresholds, err := o.Eviction.Thresholds()
	if err != nil {
		_ = rt.Close()
		return nil, err
	}
	usage := &podUsage{cgroups: cgroups, runtime: rt, rootDir: o.RootDir}
	if evictions, err = eviction.New(eviction.Options{
		Thresholds: thresholds, PressureTransitionPeriod: o.Eviction.PressureTransitionPeriod,
		Signals:    &eviction.NodeSignals{RootDir: o.RootDir, ImageFSDir: imageFS},
		ActivePods: k.ActivePods, PodUsage: usage.usage, Evict: k.EvictPod, PodCleanedUp: k.PodCleanedUp,
		DeleteUnusedImages: cfg.ImageGC.DeleteUnusedImages,
		Recorder:           recorder, Metrics: eviction.NewMetrics(cfg.Registry), Interval: o.EvictionInterval,
	}); err != nil {
		_ = rt.Close()
		return nil, err
	}
	cfg.Eviction = evictions
	if o.ManageNodeRoutes {
		var cluster *net.IPNet
		if o.ClusterCIDR != "" {
			_, cluster, _ = net.ParseCIDR(o.ClusterCIDR)
		}
		if cfg.Routes, err = routes.New(routes.Options{NodeName: o.NodeName, ClusterCIDR: cluster}); err != nil {
			_ = rt.Close()
			return nil, err
		}
	}
	cgroupStats, err := stats.NewCgroups(hierarchies, "/proc")
	if err != nil {
		_ = rt.Close()
		return nil, err
	}
	var authenticator server.Authenticator
	if o.TokenWebhook {
		authenticator = server.NewCachingAuthenticator(server.TokenReviewer{Client: client}, o.TokenWebhookCacheTTL, nil)
	}
	cfg.API = server.New(server.Options{
		Pods: k, Runtime: rt, LogDir: filepath.Join(o.RootDir, "logs"), NetNSPath: network.NetNSPath,
		NodeName: o.NodeName, Authorizer: server.NewSubjectAccessReviewer(client, o.AuthorizedTTL, o.UnauthorizedTTL, nil),
		Authenticator: authenticator,
		Metrics:       promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{}),
		Stats: stats.New(stats.Options{
			NodeName: o.NodeName, Cgroups: cgroupStats, Pods: k.ActivePods, PodCgroup: cgroups.PodCgroup,
			Containers:     func(ctx context.Context) ([]pod.Container, error) { return rt.ListContainers(ctx, "") },
			MemoryCapacity: uint64(machine.MemoryBytes),
		}),
	})
	if cfg.tlsConfig, err = servingTLS(o, nodeIP); err != nil {
		_ = rt.Close()
		return nil, err
	}
	// The node status manager comes after the listener (it reports its
	// port); the serving certificate's names are the addresses it reports.
	var nodeStatus atomic.Pointer[nodestatus.Manager]
	if o.RotateServerCertificates {
		cfg.tlsConfig.Certificates = nil
		addresses := func() []corev1.NodeAddress {
			if m := nodeStatus.Load(); m != nil {
				return m.ReportedAddresses()
			}
			return nil
		}
		if cfg.tlsConfig.GetCertificate, err = rotatingServingCertificate(ctx, o, client, addresses); err != nil {
			_ = rt.Close()
			return nil, err
		}
	}
	cfg.Listener, err = net.Listen("tcp", net.JoinHostPort(o.Address, strconv.Itoa(o.Port)))
	if err != nil {
		_ = rt.Close()
		return nil, fmt.Errorf("listening on %s:%d: %w", o.Address, o.Port, err)
	}
	port := int32(cfg.Listener.Addr().(*net.TCPAddr).Port)
	cfg.Node = nodestatus.New(nodestatus.Options{
		NodeName: o.NodeName, Client: client, NodeIP: nodeIP, Hostname: host, Machine: machine,
		KubeletVersion: Version, KubeletPort: port,
		RuntimeVersion:     rt.Version,
		NetworkStatus:      network.Status,
		OnPodCIDR:          network.SetPodCIDR,
		PressureConditions: evictions.NodeConditions,
		UpdateFrequency:    o.NodeStatusUpdateFrequency,
		ReportFrequency:    o.NodeStatusReportFrequency,
	})
	nodeStatus.Store(cfg.Node)
	return cfg, nil
}

func servingTLS(o *Options, nodeIP string) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	if o.TLSCertFile != "" {
		cert, err = tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
	} else {
		var certPEM, keyPEM []byte
		ips := []net.IP{net.ParseIP("127.0.0.1")}
		if ip := net.ParseIP(nodeIP); ip != nil {
			ips = append(ips, ip)
		}
		certPEM, keyPEM, err = certutil.GenerateSelfSignedCertKey(o.NodeName, ips, nil)
		if err == nil {
			cert, err = tls.X509KeyPair(certPEM, keyPEM)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("loading the serving certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if o.ClientCAFile != "" {
		pool, err := certutil.NewPool(o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("loading --client-ca-file: %w", err)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// Run registers the node, then keeps its status and lease, runs the pods
// and serves /healthz, /readyz, /metrics and the kubelet API until ctx ends.
func Run(ctx context.Context, c *Config) error {
	logger := klog.FromContext(ctx).WithValues("node", c.Options.NodeName)
	ctx = klog.NewContext(ctx, logger)
	defer tracing.Shutdown(ctx, c.TracerProvider)
	c.Broadcast.StartRecordingToSink(eventtime.Sink(&typedcorev1.EventSinkImpl{Interface: c.Client.CoreV1().Events("")}, ""))
	defer c.Broadcast.Shutdown()
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.serve(ctx) })
	g.Go(func() error {
		if err := c.register(ctx); err != nil {
			return err
		}
		return c.Node.Start(ctx)
	})
	g.Go(func() error {
		c.Informers.Start(ctx.Done())
		<-ctx.Done()
		c.Informers.Shutdown()
		return nil
	})
	g.Go(func() error { return c.Kubelet.Start(ctx) })
	g.Go(func() error { return c.Eviction.Start(ctx) })
	if c.Routes != nil {
		g.Go(func() error { return c.Routes.Run(ctx, c.Client) })
	}
	g.Go(func() error { return c.ImageGC.Start(ctx) })
	if c.LocalPath != nil {
		g.Go(func() error { return c.LocalPath.Start(ctx) })
	}
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// register retries until the node is registered or ctx ends.
func (c *Config) register(ctx context.Context) error {
	delay := 500 * time.Millisecond
	for {
		err := c.Node.Register(ctx)
		if err == nil {
			return nil
		}
		klog.FromContext(ctx).Error(err, "Registering the node; will retry", "in", delay)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		if delay < 7*time.Second {
			delay *= 2
		}
	}
}

func (c *Config) serve(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if _, err := c.Runtime.Version(r.Context()); err != nil {
			http.Error(w, "container runtime: "+err.Error(), http.StatusInternalServerError)
			return
		}
		// As upstream's: unhealthy when the PLEG has not relisted the
		// runtime for 3 minutes.
		if err := c.Kubelet.PLEGHealthy(); err != nil {
			http.Error(w, "PLEG is not healthy: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !c.Kubelet.Synced() {
			http.Error(w, "pods not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	// /healthz and /readyz are open, as upstream's; /metrics is with the
	// API, behind its authentication and authorization (nodes/metrics).
	c.API.Register(mux)
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
