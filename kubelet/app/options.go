package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"skiff.dev/component-base/tracing"
	"skiff.dev/kubelet/pkg/eviction"
	"skiff.dev/kubelet/pkg/imagegc"
	"skiff.dev/kubelet/pkg/localpath"
	"skiff.dev/kubelet/pkg/pod"
	"skiff.dev/kubelet/pkg/server"
)

// Options are skiff-kubelet's flags.
type Options struct {
	Kubeconfig   string
	NodeName     string
	NodeIP       string
	KubeAPIQPS   float32
	KubeAPIBurst int

	// BootstrapKubeconfig, CertDir, RotateCertificates and
	// RotateServerCertificates are upstream's TLS bootstrap and
	// certificate rotation flags (pkg/certificate).
	BootstrapKubeconfig      string
	CertDir                  string
	RotateCertificates       bool
	RotateServerCertificates bool
	// CertRotationCheckPeriod is how often the client looks for a rotated
	// certificate (0: 10 s); not a flag, tests shorten it.
	CertRotationCheckPeriod time.Duration

	ContainerdAddress   string
	ContainerdNamespace string
	Snapshotter         string
	RegistriesConfig    string
	// DisableDefaultRegistryEndpoint is k3s's switch: registries with a
	// mirror entry are pulled from their mirrors only.
	DisableDefaultRegistryEndpoint bool
	// TracePodStart records the pod start steps that upstream's events
	// leave out (an image found on the node) for skiffctl trace.
	TracePodStart bool

	// ClusterDNS, ClusterDomain and ResolvConf make the pods'
	// resolv.conf (upstream's flags).
	ClusterDNS    []string
	ClusterDomain string
	ResolvConf    string

	RootDir     string
	CNIBinDirs  []string
	CNIConfDir  string
	CNICacheDir string
	NetNSDir    string
	BridgeName  string

	// LocalPathDir holds the local-path provisioner's volumes (empty: the
	// provisioner does not run on this node).
	LocalPathDir string
	// ContainerdRoot is containerd's state directory: its filesystem is
	// the image filesystem (imagefs) of the eviction signals and image GC.
	ContainerdRoot string
	// Eviction and ImageGC are the node-pressure eviction thresholds and
	// the image garbage collection policy.
	Eviction *eviction.Flags
	ImageGC  *imagegc.Policy
	// EvictionInterval and ImageGCInterval are the time between eviction
	// passes (upstream's 10 s housekeeping) and between image collections
	// (5 minutes); not flags, tests shorten them.
	EvictionInterval time.Duration
	ImageGCInterval  time.Duration
	// ClusterCIDR gets a blackhole route under the pod routes; empty: none.
	ClusterCIDR string
	// ManageNodeRoutes keeps host routes to the other nodes' pod CIDRs.
	ManageNodeRoutes bool
	// CgroupRoot is where the kubelet makes kubepods, the parent of every
	// pod's cgroup.
	CgroupRoot string

	Address     string
	Port        int
	TLSCertFile string
	TLSKeyFile  string
	// ClientCAFile verifies the client certificates of the kubelet API
	// (logs, exec, port-forward).
	ClientCAFile string
	// AuthorizedTTL and UnauthorizedTTL: how long the kubelet API remembers
	// a SubjectAccessReview's allowed and denied decisions (upstream's
	// --authorization-webhook-cache-authorized-ttl and -unauthorized-ttl).
	AuthorizedTTL, UnauthorizedTTL time.Duration
	// TokenWebhook lets in bearer tokens the API server's TokenReview
	// knows, each answer remembered for TokenWebhookCacheTTL (upstream's
	// --authentication-token-webhook and its -cache-ttl).
	TokenWebhook         bool
	TokenWebhookCacheTTL time.Duration
	// LogDriver is the executable containerd's shim starts to write
	// container logs; empty: this executable.
	LogDriver string
	// PauseProgram is the program of pods' sandbox containers, whose PID
	// namespace the containers of a pod with shareProcessNamespace share.
	PauseProgram string

	NodeStatusUpdateFrequency time.Duration
	NodeStatusReportFrequency time.Duration
	SyncFrequency             time.Duration
	// Tracing is --tracing-endpoint and --tracing-sampling-rate-per-million.
	Tracing *tracing.Options
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		KubeAPIQPS:                50,
		TracePodStart:             true,
		KubeAPIBurst:              100,
		ContainerdAddress:         "/run/containerd/containerd.sock",
		ClusterDomain:             "cluster.local",
		ResolvConf:                "/etc/resolv.conf",
		Snapshotter:               "overlayfs",
		RootDir:                   "/var/lib/skiff-kubelet",
		LocalPathDir:              localpath.DefaultDir,
		CNIBinDirs:                []string{"/usr/lib/cni"},
		NetNSDir:                  "/var/run/netns",
		BridgeName:                "skiff0",
		CgroupRoot:                "/",
		ClusterCIDR:               "10.244.0.0/16",
		ManageNodeRoutes:          true,
		ContainerdRoot:            "/var/lib/containerd",
		Eviction:                  eviction.NewFlags(),
		ImageGC:                   imagegc.NewPolicy(),
		Address:                   "0.0.0.0",
		Port:                      10250,
		NodeStatusUpdateFrequency: 10 * time.Second,
		NodeStatusReportFrequency: 5 * time.Minute,
		SyncFrequency:             time.Second,
		Tracing:                   tracing.NewOptions(),
		AuthorizedTTL:             server.DefaultAuthorizedTTL,
		UnauthorizedTTL:           server.DefaultUnauthorizedTTL,
		TokenWebhook:              true,
		TokenWebhookCacheTTL:      server.DefaultTokenTTL,
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig with the API server's address and the node's credentials (CN=system:node:<node>).")
	fs.StringVar(&o.BootstrapKubeconfig, "bootstrap-kubeconfig", o.BootstrapKubeconfig, "A kubeconfig with a bootstrap token: when --kubeconfig has no good client certificate, one is asked for with a CertificateSigningRequest and --kubeconfig is written to use it.")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "Where the certificates from TLS bootstrap and rotation are kept; empty: <root-dir>/pki.")
	fs.BoolVar(&o.RotateCertificates, "rotate-certificates", o.RotateCertificates, "Renew the client certificate with a new CertificateSigningRequest before it expires.")
	fs.BoolVar(&o.RotateServerCertificates, "rotate-server-certificates", o.RotateServerCertificates, "Get the serving certificate from a kubernetes.io/kubelet-serving CertificateSigningRequest and renew it before it expires (someone must approve the request: the controller manager does not by default).")
	fs.StringVar(&o.NodeName, "hostname-override", o.NodeName, "The node's name; empty: the host name.")
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "Same as --hostname-override.")
	fs.StringVar(&o.NodeIP, "node-ip", o.NodeIP, "The node's InternalIP; empty: the first global IPv4 address of an interface that is up.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "QPS to use while talking with the API server.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst to use while talking with the API server.")
	fs.StringVar(&o.ContainerdAddress, "containerd-address", o.ContainerdAddress, "containerd's socket.")
	fs.StringVar(&o.ContainerdNamespace, "containerd-namespace", o.ContainerdNamespace, "The containerd namespace of this kubelet's containers and images; empty: skiff-<node name>.")
	fs.StringVar(&o.Snapshotter, "snapshotter", o.Snapshotter, "The containerd snapshotter for container root filesystems.")
	fs.StringVar(&o.RegistriesConfig, "registries-config", o.RegistriesConfig, "A registries.yaml file in k3s's format (mirrors, auth, tls); empty: none.")
	fs.BoolVar(&o.DisableDefaultRegistryEndpoint, "disable-default-registry-endpoint", o.DisableDefaultRegistryEndpoint, "As k3s: a registry with a mirror entry in --registries-config (its own or \"*\") is pulled from its mirrors only, never from the registry itself; an image the mirrors lack fails to pull (ErrImagePull naming the mirrors). Also disable_default_endpoint: true in the registries file.")
	fs.BoolVar(&o.TracePodStart, "trace-pod-start", o.TracePodStart, "Record, as events, the pod start steps that skiffctl trace reads and upstream's kubelet leaves out (a Pulled event when the image is already present); false: only upstream's events.")
	fs.StringSliceVar(&o.ClusterDNS, "cluster-dns", o.ClusterDNS, "The cluster DNS servers (the kube-dns Service's address), the only nameservers of ClusterFirst pods; empty: those pods get the node's resolvers.")
	fs.StringVar(&o.ClusterDomain, "cluster-domain", o.ClusterDomain, "The cluster's DNS domain: ClusterFirst pods search <namespace>.svc.<domain>, svc.<domain> and <domain> before the node's search paths.")
	fs.StringVar(&o.ResolvConf, "resolv-conf", o.ResolvConf, "The node's resolv.conf, the base of every pod's; empty: pods with the node's resolvers get 127.0.0.1.")
	fs.StringVar(&o.LocalPathDir, "local-path-dir", o.LocalPathDir, "Where the local-path provisioner (StorageClass local-path, provisioner skiff.dev/local-path) makes this node's volumes; empty: it does not run here.")
	fs.StringVar(&o.RootDir, "root-dir", o.RootDir, "The kubelet's state directory (CNI configuration and cache, IPAM leases, container logs).")
	fs.StringSliceVar(&o.CNIBinDirs, "cni-bin-dir", o.CNIBinDirs, "Directories of the CNI plugins.")
	fs.StringVar(&o.CNIConfDir, "cni-conf-dir", o.CNIConfDir, "Where the kubelet writes its CNI conflist; empty: <root-dir>/cni/net.d.")
	fs.StringVar(&o.CNICacheDir, "cni-cache-dir", o.CNICacheDir, "libcni's result cache; empty: <root-dir>/cni/cache.")
	fs.StringVar(&o.NetNSDir, "netns-dir", o.NetNSDir, "Where pod network namespaces are pinned.")
	fs.StringVar(&o.BridgeName, "bridge-name", o.BridgeName, "The Linux bridge that pods attach to (at most 15 characters).")
	fs.StringVar(&o.CgroupRoot, "cgroup-root", o.CgroupRoot, "The cgroup under which the kubelet makes kubepods and the pods' cgroups (cgroupfs paths, as upstream's --cgroup-root).")
	fs.StringVar(&o.ClusterCIDR, "cluster-cidr", o.ClusterCIDR, "The cluster's pod CIDR: it gets a blackhole route (under the more specific pod routes) when it has none, so no packet for a cluster address leaves the node; empty: none.")
	fs.BoolVar(&o.ManageNodeRoutes, "manage-node-routes", o.ManageNodeRoutes, "Keep a host route to every other node's pod CIDR via its InternalIP, and the cluster CIDR's blackhole route.")
	fs.StringVar(&o.ContainerdRoot, "containerd-root", o.ContainerdRoot, "containerd's root directory: its filesystem is the image filesystem (imagefs) for eviction and image garbage collection.")
	o.Eviction.AddFlags(fs)
	o.ImageGC.AddFlags(fs)
	fs.StringVar(&o.Address, "address", o.Address, "The IP address to serve /healthz and /metrics on (HTTPS).")
	fs.IntVar(&o.Port, "port", o.Port, "The HTTPS port; 0 picks a free port.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "Serving certificate; empty: a self-signed one is generated in memory.")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "Private key for --tls-cert-file.")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle that signs the client certificates allowed to use the kubelet API (containerLogs, exec, portForward); empty: that API refuses every request.")
	fs.DurationVar(&o.AuthorizedTTL, "authorization-webhook-cache-authorized-ttl", o.AuthorizedTTL, "How long an allowed SubjectAccessReview of a kubelet API request (nodes/metrics, nodes/stats, nodes/log, nodes/proxy) is remembered; 0: asked every time.")
	fs.DurationVar(&o.UnauthorizedTTL, "authorization-webhook-cache-unauthorized-ttl", o.UnauthorizedTTL, "How long a denied SubjectAccessReview of a kubelet API request is remembered; 0: asked every time.")
	fs.BoolVar(&o.TokenWebhook, "authentication-token-webhook", o.TokenWebhook, "Let in kubelet API requests with a bearer token (a service account's, as Prometheus in a pod sends) that a TokenReview to the API server authenticates; they are then authorized with a SubjectAccessReview. Upstream's KubeletConfiguration default: true.")
	fs.DurationVar(&o.TokenWebhookCacheTTL, "authentication-token-webhook-cache-ttl", o.TokenWebhookCacheTTL, "How long a TokenReview's answer (authenticated or not) is remembered; 0: asked every time.")
	fs.StringVar(&o.PauseProgram, "pause-program", o.PauseProgram, "The statically linked pause program of pods' sandbox containers (PID 1 of the PID namespace of a pod with shareProcessNamespace); empty: skiff-pause next to this executable.")
	fs.StringVar(&o.LogDriver, "log-driver", o.LogDriver, "The executable containerd's shim starts as a container's logging driver (run as '<exe> skiff-log-driver <file>'); empty: skiff-log-driver next to this executable, else this executable.")
	fs.DurationVar(&o.NodeStatusUpdateFrequency, "node-status-update-frequency", o.NodeStatusUpdateFrequency, "How often the node status is computed (and sent when it changed).")
	fs.DurationVar(&o.NodeStatusReportFrequency, "node-status-report-frequency", o.NodeStatusReportFrequency, "How often the node status is sent when it did not change.")
	fs.DurationVar(&o.SyncFrequency, "pod-sync-frequency", o.SyncFrequency, "How often each pod is synced without changes (to see container exits).")
	o.Tracing.AddFlags(fs)
}

// Complete fills the defaults that depend on other flags.
func (o *Options) Complete(hostname string) {
	if o.NodeName == "" {
		o.NodeName = hostname
	}
	if o.ContainerdNamespace == "" {
		o.ContainerdNamespace = "skiff-" + o.NodeName
	}
	if o.LogDriver == "" {
		o.LogDriver = defaultLogDriver()
	}
	if o.PauseProgram == "" {
		o.PauseProgram = sibling(PauseName)
	}
	if o.CertDir == "" {
		o.CertDir = filepath.Join(o.RootDir, "pki")
	}
	if o.CNIConfDir == "" {
		o.CNIConfDir = filepath.Join(o.RootDir, "cni", "net.d")
	}
	if o.CNICacheDir == "" {
		o.CNICacheDir = filepath.Join(o.RootDir, "cni", "cache")
	}
}

// Validate checks the options (after Complete).
func (o *Options) Validate() error {
	var errs []error
	if o.NodeName == "" {
		errs = append(errs, errors.New("--node-name must not be empty"))
	}
	if o.NodeIP != "" && net.ParseIP(o.NodeIP) == nil {
		errs = append(errs, fmt.Errorf("--node-ip %q is not an IP address", o.NodeIP))
	}
	for _, ip := range o.ClusterDNS {
		if net.ParseIP(ip) == nil {
			errs = append(errs, fmt.Errorf("--cluster-dns %q is not an IP address", ip))
		}
	}
	if o.ClusterDomain != "" {
		if msgs := validation.IsDNS1123Subdomain(o.ClusterDomain); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--cluster-domain %q: %s", o.ClusterDomain, strings.Join(msgs, "; ")))
		}
	}
	if net.ParseIP(o.Address) == nil {
		errs = append(errs, fmt.Errorf("--address %q is not an IP address", o.Address))
	}
	if o.Port < 0 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("--port %d must be between 0 and 65535", o.Port))
	}
	if o.BootstrapKubeconfig != "" && o.Kubeconfig == "" {
		errs = append(errs, errors.New("--bootstrap-kubeconfig needs --kubeconfig, the file it writes"))
	}
	if o.RotateServerCertificates && o.TLSCertFile != "" {
		errs = append(errs, errors.New("--rotate-server-certificates and --tls-cert-file exclude each other"))
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	if o.BridgeName == "" || len(o.BridgeName) > 15 {
		errs = append(errs, fmt.Errorf("--bridge-name %q must have 1 to 15 characters", o.BridgeName))
	}
	if o.ClusterCIDR != "" {
		if _, _, err := net.ParseCIDR(o.ClusterCIDR); err != nil {
			errs = append(errs, fmt.Errorf("--cluster-cidr %q is not a CIDR", o.ClusterCIDR))
		}
	}
	if _, err := o.Eviction.Thresholds(); err != nil {
		errs = append(errs, err)
	}
	if err := o.ImageGC.Validate(); err != nil {
		errs = append(errs, err)
	}
	if !path.IsAbs(o.CgroupRoot) || path.Clean(o.CgroupRoot) != o.CgroupRoot {
		errs = append(errs, fmt.Errorf("--cgroup-root %q must be a clean absolute path", o.CgroupRoot))
	}
	if o.RootDir == "" || o.NetNSDir == "" || len(o.CNIBinDirs) == 0 {
		errs = append(errs, errors.New("--root-dir, --netns-dir and --cni-bin-dir must not be empty"))
	}
	if o.ContainerdAddress == "" {
		errs = append(errs, errors.New("--containerd-address must not be empty"))
	}
	if o.NodeStatusUpdateFrequency <= 0 || o.NodeStatusReportFrequency <= 0 || o.SyncFrequency <= 0 {
		errs = append(errs, errors.New("frequencies must be positive"))
	}
	if o.TokenWebhookCacheTTL < 0 {
		errs = append(errs, fmt.Errorf("--authentication-token-webhook-cache-ttl %v must not be negative", o.TokenWebhookCacheTTL))
	}
	if o.AuthorizedTTL < 0 || o.UnauthorizedTTL < 0 {
		errs = append(errs, fmt.Errorf("--authorization-webhook-cache-authorized-ttl %v and --authorization-webhook-cache-unauthorized-ttl %v must not be negative", o.AuthorizedTTL, o.UnauthorizedTTL))
	}
	if o.Tracing != nil {
		errs = append(errs, o.Tracing.Validate()...)
	}
	return errors.Join(errs...)
}

// LogDriverName is the small logging driver program that make build puts
// next to skiff-kubelet.
const LogDriverName = "skiff-log-driver"

// defaultLogDriver is skiff-log-driver next to this executable when it is
// there (a start costs about 1 ms), else this executable itself (about
// 100 ms: it is a much larger program).
func defaultLogDriver() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if p := sibling(LogDriverName); p != "" {
		return p
	}
	return exe
}

// PauseName is the pause program that make build puts next to
// skiff-kubelet.
const PauseName = "skiff-pause"

// sibling is the executable name next to this executable, empty when it
// is not there.
func sibling(name string) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	p := filepath.Join(filepath.Dir(exe), name)
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// dnsConfigurer is the pods' resolv.conf maker from the DNS flags.
func (o *Options) dnsConfigurer() pod.DNSConfigurer {
	c := pod.DNSConfigurer{ClusterDomain: o.ClusterDomain, ResolverConfig: o.ResolvConf}
	for _, s := range o.ClusterDNS {
		if ip := net.ParseIP(s); ip != nil {
			c.ClusterDNS = append(c.ClusterDNS, ip)
		}
	}
	return c
}
