package server

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"skiff.dev/apiserver/pkg/kubeletclient"
	"skiff.dev/component-base/tracing"
)

// AdmissionPlugins are the plugins skiff has, in the order they run.
var AdmissionPlugins = []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "PodSecurity", "Priority",
	"DefaultTolerationSeconds", "DefaultStorageClass",
	"StorageObjectInUseProtection", "PersistentVolumeClaimResize", "RuntimeClass", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook", "ResourceQuota"}

// Options are skiff-apiserver's flags.
type Options struct {
	BindAddress      string
	SecurePort       int
	AdvertiseAddress string
	TLSCertFile      string
	TLSKeyFile       string
	ClientCAFile     string
	TokenAuthFile    string
	// EnableBootstrapTokenAuth accepts bootstrap tokens (Secrets of type
	// bootstrap.kubernetes.io/token in kube-system) as bearer tokens.
	EnableBootstrapTokenAuth bool
	// AnonymousAuth lets requests without credentials through as
	// system:anonymous, for the authorizer to decide (upstream's default is
	// on, skiff's off).
	AnonymousAuth bool
	// DisableAdmissionPlugins turns plugins off by name.
	DisableAdmissionPlugins []string
	// PodSecurityDefaultLevel applies where a namespace sets no
	// pod-security.kubernetes.io/enforce label.
	PodSecurityDefaultLevel string
	// PodSecurityExempt* are upstream's PodSecurityConfiguration
	// exemptions: requests by these users, in these namespaces, or for pods
	// of these runtime classes are not evaluated.
	PodSecurityExemptUsernames      []string
	PodSecurityExemptNamespaces     []string
	PodSecurityExemptRuntimeClasses []string
	// LocalPathStorageClass: create the default StorageClass local-path
	// (skiff.dev/local-path, served by every kubelet) when it is missing.
	LocalPathStorageClass bool

	// Service account tokens.
	ServiceAccountKeyFiles       []string
	ServiceAccountSigningKeyFile string
	ServiceAccountIssuer         string
	ServiceAccountJWKSURI        string

	AuditLogPath      string
	AuditLogMaxSize   int
	AuditLogMaxBackup int
	AuditLogMaxAge    int
	// AuthorizationModes are chained in order, as upstream's flag.
	AuthorizationModes []string

	// EtcdServers empty means: run an embedded etcd in EtcdDataDir.
	EtcdServers  []string
	EtcdCAFile   string
	EtcdCertFile string
	EtcdKeyFile  string
	EtcdDataDir  string

	EtcdRequestTimeout     time.Duration
	EtcdCompactionInterval time.Duration

	ServiceClusterIPRange string
	ServiceNodePortRange  string
	// ServiceRepairInterval is how often the Service allocations are
	// repaired (upstream: 3 minutes); ServiceRepairLeakPasses how many
	// passes in a row must find an allocation without a Service before it
	// is freed (upstream: 3). Not flags: tests shorten them.
	ServiceRepairInterval   time.Duration
	ServiceRepairLeakPasses int
	// EndpointReconcileInterval is how often the bootstrap objects are
	// reconciled and this server's master lease renewed (upstream: 10s,
	// under a lease of 15s). Not a flag: tests shorten it.
	EndpointReconcileInterval time.Duration

	// How the API server reaches kubelets (pods/log, exec, attach,
	// portforward), upstream's --kubelet-* flags.
	KubeletClientCertificate     string
	KubeletClientKey             string
	KubeletCertificateAuthority  string
	KubeletPreferredAddressTypes []string

	// The aggregation layer's front-proxy client certificate, presented to
	// the backends of APIServices (upstream's --proxy-client-cert-file,
	// --proxy-client-key-file).
	ProxyClientCertFile string
	ProxyClientKeyFile  string
	// Front-proxy authentication (upstream's --requestheader-* flags):
	// requests with a client certificate signed by RequestHeaderClientCAFile
	// name their user in the headers. They are also published in
	// kube-system/extension-apiserver-authentication for aggregated API
	// servers, which authenticate the aggregator the same way.
	RequestHeaderClientCAFile       string
	RequestHeaderAllowedNames       []string
	RequestHeaderUsernameHeaders    []string
	RequestHeaderUIDHeaders         []string
	RequestHeaderGroupHeaders       []string
	RequestHeaderExtraHeadersPrefix []string
	// APIServiceResyncInterval is how often every APIService with a
	// service is checked again (upstream: 30s). Not a flag: tests shorten it.
	APIServiceResyncInterval time.Duration
	// ComponentHealthURLs are the /healthz that componentstatuses probes,
	// by component: upstream's fixed choice of the scheduler and the
	// controller manager on this machine at their default secure ports.
	// Not a flag, as upstream: tests point it at their own servers.
	ComponentHealthURLs map[string]string
	// MetricResolution is how often the built-in metrics.k8s.io scrapes
	// the kubelets (metrics-server's --metric-resolution); 0 turns the
	// built-in API off (to run metrics-server behind an APIService).
	MetricResolution time.Duration

	WatchCacheSize      int
	BookmarkInterval    time.Duration
	MinRequestTimeout   time.Duration
	ShutdownGracePeriod time.Duration
	// Tracing is --tracing-endpoint and --tracing-sampling-rate-per-million.
	Tracing *tracing.Options
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		BindAddress:                  "0.0.0.0",
		SecurePort:                   6443,
		AuthorizationModes:           []string{"Node", "RBAC"},
		AuditLogMaxSize:              100,
		ServiceAccountIssuer:         "https://kubernetes.default.svc.cluster.local",
		PodSecurityDefaultLevel:      "baseline",
		LocalPathStorageClass:        true,
		AuditLogMaxBackup:            10,
		EtcdDataDir:                  ".skiff/etcd",
		EtcdRequestTimeout:           10 * time.Second,
		EtcdCompactionInterval:       5 * time.Minute,
		ServiceClusterIPRange:        "10.96.0.0/16",
		ServiceNodePortRange:         "30000-32767",
		ServiceRepairInterval:        3 * time.Minute,
		ServiceRepairLeakPasses:      3,
		EndpointReconcileInterval:    10 * time.Second,
		APIServiceResyncInterval:     30 * time.Second,
		MetricResolution:             15 * time.Second,
		WatchCacheSize:               10000,
		KubeletPreferredAddressTypes: append([]string(nil), kubeletclient.DefaultAddressTypes...),
		BookmarkInterval:             time.Minute,
		MinRequestTimeout:            30 * time.Minute,
		ShutdownGracePeriod:          5 * time.Second,
		Tracing:                      tracing.NewOptions(),

		ComponentHealthURLs: map[string]string{
			"scheduler":          "https://127.0.0.1:10259/healthz",
			"controller-manager": "https://127.0.0.1:10257/healthz",
		},

		// kubeadm's values; upstream's flags default to none.
		RequestHeaderUsernameHeaders:    []string{"X-Remote-User"},
		RequestHeaderUIDHeaders:         []string{"X-Remote-Uid"},
		RequestHeaderGroupHeaders:       []string{"X-Remote-Group"},
		RequestHeaderExtraHeadersPrefix: []string{"X-Remote-Extra-"},
	}
}

// AddFlags binds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "The IP address on which to listen for the --secure-port port.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "The port on which to serve HTTPS with authentication. 0 picks a free port.")
	fs.StringVar(&o.AdvertiseAddress, "advertise-address", o.AdvertiseAddress, "The IP address on which to advertise the apiserver to members of the cluster (the kubernetes Service's endpoint). Empty: the first non-loopback IPv4 address of the host.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "File containing the x509 serving certificate.")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "File containing the x509 private key matching --tls-cert-file.")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "Client certificates signed by this CA authenticate as their CommonName, with their Organizations as groups.")
	fs.BoolVar(&o.EnableBootstrapTokenAuth, "enable-bootstrap-token-auth", o.EnableBootstrapTokenAuth, "Accept bootstrap tokens (Secrets of type bootstrap.kubernetes.io/token in kube-system) as bearer tokens, for a joining node's TLS bootstrap.")
	fs.BoolVar(&o.AnonymousAuth, "anonymous-auth", o.AnonymousAuth, "Let requests without credentials through as system:anonymous (group system:unauthenticated) for authorization to decide, as a joining node reads kube-public/cluster-info; off: they are refused with 401.")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile, "A CSV file of bearer tokens: token,user,uid,\"group1,group2\".")
	fs.StringSliceVar(&o.AuthorizationModes, "authorization-mode", o.AuthorizationModes, "Ordered list of authorizers: AlwaysAllow, Node, RBAC. Members of system:masters may always do everything.")
	fs.StringSliceVar(&o.DisableAdmissionPlugins, "disable-admission-plugins", o.DisableAdmissionPlugins, "Admission plugins to turn off: NamespaceLifecycle, DefaultTolerationSeconds, PodSecurity, MutatingAdmissionWebhook, ValidatingAdmissionWebhook.")
	fs.BoolVar(&o.LocalPathStorageClass, "local-path-storage-class", o.LocalPathStorageClass, "Create the default StorageClass local-path (provisioner skiff.dev/local-path, run by each kubelet) when it is missing; false leaves storage classes to the administrator.")
	fs.StringVar(&o.PodSecurityDefaultLevel, "pod-security-default-enforce", o.PodSecurityDefaultLevel, "Pod Security Standards level enforced in namespaces without a pod-security.kubernetes.io/enforce label: privileged, baseline or restricted.")
	fs.StringSliceVar(&o.PodSecurityExemptUsernames, "pod-security-exempt-usernames", o.PodSecurityExemptUsernames, "Users whose requests PodSecurity does not evaluate (upstream's exemptions.usernames).")
	fs.StringSliceVar(&o.PodSecurityExemptNamespaces, "pod-security-exempt-namespaces", o.PodSecurityExemptNamespaces, "Namespaces PodSecurity does not evaluate (upstream's exemptions.namespaces).")
	fs.StringSliceVar(&o.PodSecurityExemptRuntimeClasses, "pod-security-exempt-runtime-classes", o.PodSecurityExemptRuntimeClasses, "RuntimeClasses whose pods PodSecurity does not evaluate (upstream's exemptions.runtimeClasses).")
	fs.StringSliceVar(&o.ServiceAccountKeyFiles, "service-account-key-file", o.ServiceAccountKeyFiles, "PEM files of public (or private) RSA keys that verify service account tokens. Defaults to --service-account-signing-key-file.")
	fs.StringVar(&o.ServiceAccountSigningKeyFile, "service-account-signing-key-file", o.ServiceAccountSigningKeyFile, "PEM RSA private key that signs service account tokens (serviceaccounts/token).")
	fs.StringVar(&o.ServiceAccountIssuer, "service-account-issuer", o.ServiceAccountIssuer, "The iss claim of service account tokens, and the audience accepted by default.")
	fs.StringVar(&o.ServiceAccountJWKSURI, "service-account-jwks-uri", o.ServiceAccountJWKSURI, "The jwks_uri of the issuer discovery document at /.well-known/openid-configuration (https). Defaults to /openid/v1/jwks at this server's advertised address.")
	fs.StringVar(&o.AuditLogPath, "audit-log-path", o.AuditLogPath, "If set, every request is logged to this file, one JSON line each (audit.k8s.io/v1 Event at Metadata level; bodies are never logged).")
	fs.IntVar(&o.AuditLogMaxSize, "audit-log-maxsize", o.AuditLogMaxSize, "The maximum size in megabytes of the audit log file before it gets rotated.")
	fs.IntVar(&o.AuditLogMaxBackup, "audit-log-maxbackup", o.AuditLogMaxBackup, "The maximum number of rotated audit log files to keep.")
	fs.IntVar(&o.AuditLogMaxAge, "audit-log-maxage", o.AuditLogMaxAge, "The maximum number of days to keep rotated audit log files (0: no limit).")
	fs.StringSliceVar(&o.EtcdServers, "etcd-servers", o.EtcdServers, "etcd servers to connect to (scheme://ip:port). Empty: run an embedded etcd.")
	fs.StringVar(&o.EtcdCAFile, "etcd-cafile", o.EtcdCAFile, "SSL Certificate Authority file used to secure etcd communication.")
	fs.StringVar(&o.EtcdCertFile, "etcd-certfile", o.EtcdCertFile, "SSL certification file used to secure etcd communication.")
	fs.StringVar(&o.EtcdKeyFile, "etcd-keyfile", o.EtcdKeyFile, "SSL key file used to secure etcd communication.")
	fs.StringVar(&o.EtcdDataDir, "etcd-data-dir", o.EtcdDataDir, "Data directory of the embedded etcd.")
	fs.DurationVar(&o.EtcdRequestTimeout, "etcd-request-timeout", o.EtcdRequestTimeout, "How long one etcd call may take before the request fails with 504.")
	fs.DurationVar(&o.EtcdCompactionInterval, "etcd-compaction-interval", o.EtcdCompactionInterval, "The interval of compaction requests. 0 disables compaction.")
	fs.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", o.ServiceClusterIPRange, "A CIDR notation IP range from which to assign service cluster IPs.")
	fs.StringVar(&o.ServiceNodePortRange, "service-node-port-range", o.ServiceNodePortRange, "A port range to reserve for services with NodePort visibility.")
	fs.StringVar(&o.KubeletClientCertificate, "kubelet-client-certificate", o.KubeletClientCertificate, "Path to a client cert file for TLS to kubelets (pods/log, exec, attach, portforward).")
	fs.StringVar(&o.KubeletClientKey, "kubelet-client-key", o.KubeletClientKey, "Path to a client key file for TLS to kubelets.")
	fs.StringVar(&o.KubeletCertificateAuthority, "kubelet-certificate-authority", o.KubeletCertificateAuthority, "Path to a cert file for the certificate authority that signs the kubelets' serving certificates. Empty: the system roots.")
	fs.StringSliceVar(&o.KubeletPreferredAddressTypes, "kubelet-preferred-address-types", o.KubeletPreferredAddressTypes, "List of the preferred NodeAddressTypes to use for kubelet connections.")
	fs.StringVar(&o.ProxyClientCertFile, "proxy-client-cert-file", o.ProxyClientCertFile, "Client certificate the aggregator presents to the backends of APIServices, with the user in the X-Remote-User, X-Remote-Group and X-Remote-Extra- headers; the backends check it against their --requestheader-client-ca-file.")
	fs.StringVar(&o.ProxyClientKeyFile, "proxy-client-key-file", o.ProxyClientKeyFile, "Private key of --proxy-client-cert-file.")
	fs.StringVar(&o.RequestHeaderClientCAFile, "requestheader-client-ca-file", o.RequestHeaderClientCAFile, "Root certificates of front proxies: a request with a client certificate they sign names its user in the --requestheader-*-headers. Published for aggregated API servers in kube-system/extension-apiserver-authentication.")
	fs.StringSliceVar(&o.RequestHeaderAllowedNames, "requestheader-allowed-names", o.RequestHeaderAllowedNames, "Common names a front proxy's client certificate may have. Empty: any signed by --requestheader-client-ca-file.")
	fs.StringSliceVar(&o.RequestHeaderUsernameHeaders, "requestheader-username-headers", o.RequestHeaderUsernameHeaders, "Request headers to inspect for the user name; the first that is set wins.")
	fs.StringSliceVar(&o.RequestHeaderUIDHeaders, "requestheader-uid-headers", o.RequestHeaderUIDHeaders, "Request headers to inspect for the user's UID.")
	fs.StringSliceVar(&o.RequestHeaderGroupHeaders, "requestheader-group-headers", o.RequestHeaderGroupHeaders, "Request headers to inspect for the groups.")
	fs.StringSliceVar(&o.RequestHeaderExtraHeadersPrefix, "requestheader-extra-headers-prefix", o.RequestHeaderExtraHeadersPrefix, "Request header prefixes of the user's extra values.")
	fs.DurationVar(&o.MetricResolution, "metric-resolution", o.MetricResolution, "How often the built-in metrics.k8s.io API (kubectl top, autoscaling) scrapes each Ready node's kubelet /metrics/resource, as metrics-server's flag. 0 turns the built-in API off, to serve metrics.k8s.io from metrics-server through an APIService instead.")
	fs.IntVar(&o.WatchCacheSize, "default-watch-cache-size", o.WatchCacheSize, "Number of recent events kept per resource for watchers that resume.")
	fs.DurationVar(&o.BookmarkInterval, "watch-bookmark-interval", o.BookmarkInterval, "How often watchers that allow bookmarks receive one.")
	fs.DurationVar(&o.MinRequestTimeout, "min-request-timeout", o.MinRequestTimeout, "The minimum duration of a watch; each watch lasts a random time between this and twice this, unless timeoutSeconds is given.")
	fs.DurationVar(&o.ShutdownGracePeriod, "shutdown-grace-period", o.ShutdownGracePeriod, "How long in-flight requests may take to finish on shutdown.")
	o.Tracing.AddFlags(fs)
}

// Validate checks the options.
func (o *Options) Validate() error {
	if o.TLSCertFile == "" || o.TLSKeyFile == "" {
		return fmt.Errorf("--tls-cert-file and --tls-private-key-file are required: skiff-apiserver serves HTTPS only")
	}
	if o.ClientCAFile == "" && o.TokenAuthFile == "" {
		return fmt.Errorf("--client-ca-file or --token-auth-file is required: every request must authenticate")
	}
	if net.ParseIP(o.BindAddress) == nil {
		return fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress)
	}
	if o.AdvertiseAddress != "" && net.ParseIP(o.AdvertiseAddress) == nil {
		return fmt.Errorf("--advertise-address %q is not an IP address", o.AdvertiseAddress)
	}
	p, err := netip.ParsePrefix(o.ServiceClusterIPRange)
	if err != nil || !p.Addr().Is4() || p.Bits() > 28 {
		return fmt.Errorf("--service-cluster-ip-range %q must be an IPv4 CIDR of /28 or larger", o.ServiceClusterIPRange)
	}
	if _, _, err := parsePortRange(o.ServiceNodePortRange); err != nil {
		return err
	}
	for _, p := range o.DisableAdmissionPlugins {
		if !slices.Contains(AdmissionPlugins, p) {
			return fmt.Errorf("--disable-admission-plugins: unknown plugin %q (have %s)", p, strings.Join(AdmissionPlugins, ", "))
		}
	}
	if o.PodSecurityDefaultLevel != "privileged" && o.PodSecurityDefaultLevel != "baseline" && o.PodSecurityDefaultLevel != "restricted" {
		return fmt.Errorf("--pod-security-default-enforce %q: want privileged, baseline or restricted", o.PodSecurityDefaultLevel)
	}
	if o.MetricResolution < 0 {
		return fmt.Errorf("--metric-resolution must not be negative")
	}
	if (o.KubeletClientCertificate == "") != (o.KubeletClientKey == "") {
		return fmt.Errorf("--kubelet-client-certificate and --kubelet-client-key must be given together")
	}
	if (o.ProxyClientCertFile == "") != (o.ProxyClientKeyFile == "") {
		return fmt.Errorf("--proxy-client-cert-file and --proxy-client-key-file must be given together")
	}
	if err := kubeletclient.ValidateAddressTypes(o.KubeletPreferredAddressTypes); err != nil {
		return err
	}
	if len(o.EtcdServers) == 0 && o.EtcdDataDir == "" {
		return fmt.Errorf("--etcd-data-dir is required for the embedded etcd")
	}
	if o.Tracing != nil {
		if errs := o.Tracing.Validate(); len(errs) > 0 {
			return errs[0]
		}
	}
	return nil
}

func parsePortRange(s string) (int, int, error) {
	var lo, hi int
	if _, err := fmt.Sscanf(s, "%d-%d", &lo, &hi); err != nil || lo <= 0 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("--service-node-port-range %q must be low-high, e.g. 30000-32767", s)
	}
	return lo, hi, nil
}
