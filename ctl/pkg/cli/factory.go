package cli

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"skiff.dev/ctl/pkg/transport"
)

// Version is skiffctl's version, reported in the User-Agent and by
// skiffctl version.
const Version = "v0.1.0"

// ConfigFlags are the flags that select the cluster, the user and the
// namespace, as kubectl names them.
type ConfigFlags struct {
	Kubeconfig            string
	Context               string
	Cluster               string
	User                  string
	Namespace             string
	Server                string
	Token                 string
	CertificateAuthority  string
	ClientCertificate     string
	ClientKey             string
	InsecureSkipTLSVerify bool
	RequestTimeout        string
}

// AddFlags binds the flags to fs.
func (f *ConfigFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", f.Kubeconfig, "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).")
	fs.StringVar(&f.Context, "context", f.Context, "The kubeconfig context to use.")
	fs.StringVar(&f.Cluster, "cluster", f.Cluster, "The kubeconfig cluster to use.")
	fs.StringVar(&f.User, "user", f.User, "The kubeconfig user to use.")
	fs.StringVarP(&f.Namespace, "namespace", "n", f.Namespace, "The namespace of this request.")
	fs.StringVarP(&f.Server, "server", "s", f.Server, "The address and port of the API server.")
	fs.StringVar(&f.Token, "token", f.Token, "Bearer token for authentication to the API server.")
	fs.StringVar(&f.CertificateAuthority, "certificate-authority", f.CertificateAuthority, "Path to a CA certificate file.")
	fs.StringVar(&f.ClientCertificate, "client-certificate", f.ClientCertificate, "Path to a client certificate file for TLS.")
	fs.StringVar(&f.ClientKey, "client-key", f.ClientKey, "Path to a client key file for TLS.")
	fs.BoolVar(&f.InsecureSkipTLSVerify, "insecure-skip-tls-verify", f.InsecureSkipTLSVerify, "Do not check the server's certificate (insecure).")
	fs.StringVar(&f.RequestTimeout, "request-timeout", "0", "How long to wait for a single request before giving up (e.g. 5s, 1m); 0 waits forever.")
}

// LoadingRules returns the kubeconfig loading rules: --kubeconfig, else
// $KUBECONFIG (a list of files merged), else ~/.kube/config.
func (f *ConfigFlags) LoadingRules() *clientcmd.ClientConfigLoadingRules {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	return rules
}

// ClientConfig returns the merged kubeconfig with the flags' overrides.
func (f *ConfigFlags) ClientConfig() clientcmd.ClientConfig {
	overrides := &clientcmd.ConfigOverrides{
		CurrentContext: f.Context,
		Context: clientcmdapi.Context{
			Cluster: f.Cluster, AuthInfo: f.User, Namespace: f.Namespace,
		},
		ClusterInfo: clientcmdapi.Cluster{
			Server: f.Server, CertificateAuthority: f.CertificateAuthority,
			InsecureSkipTLSVerify: f.InsecureSkipTLSVerify,
		},
		AuthInfo: clientcmdapi.AuthInfo{
			Token: f.Token, ClientCertificate: f.ClientCertificate, ClientKey: f.ClientKey,
		},
		Timeout: f.RequestTimeout,
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(f.LoadingRules(), overrides)
}

// Factory builds the clients of one skiffctl invocation.
type Factory struct {
	Flags *ConfigFlags
	// Verbosity returns the -v level at the time of the first request.
	Verbosity func() int
	// ErrOut receives the -v output.
	ErrOut io.Writer
	// CacheDir holds certificate files materialized for curl commands.
	CacheDir string

	once       sync.Once
	initErr    error
	restConfig *rest.Config
	httpClient *http.Client
	clientset  *kubernetes.Clientset
	dynamic    dynamic.Interface
	discovery  discovery.CachedDiscoveryInterface
	mapper     meta.RESTMapper
}

// NewFactory returns a Factory over flags.
func NewFactory(flags *ConfigFlags, verbosity func() int, errOut io.Writer) *Factory {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cache = filepath.Join(home, ".cache")
		} else {
			cache = os.TempDir()
		}
	}
	return &Factory{
		Flags: flags, Verbosity: verbosity, ErrOut: errOut,
		CacheDir: filepath.Join(cache, "skiffctl", "curl-certs"),
	}
}

// Namespace returns the namespace of the request: -n, else the context's,
// else "default". explicit reports whether -n was given.
func (f *Factory) Namespace() (ns string, explicit bool, err error) {
	ns, explicit, err = f.Flags.ClientConfig().Namespace()
	if err != nil {
		return "", false, ExplainConfigError(err)
	}
	if f.Flags.Namespace != "" {
		return f.Flags.Namespace, true, nil
	}
	return ns, explicit, nil
}

// RESTConfig returns the client configuration with skiffctl's user agent
// and the -v request logging.
func (f *Factory) RESTConfig() (*rest.Config, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return rest.CopyConfig(f.restConfig), nil
}

func (f *Factory) init() error {
	f.once.Do(func() { f.initErr = f.build() })
	return f.initErr
}

func (f *Factory) build() error {
	cfg, err := f.Flags.ClientConfig().ClientConfig()
	if err != nil {
		return ExplainConfigError(err)
	}
	if err := checkConfigCertificate(cfg); err != nil {
		return err
	}
	cfg.UserAgent = fmt.Sprintf("skiffctl/%s (%s/%s)", Version, runtime.GOOS, runtime.GOARCH)
	cfg.QPS, cfg.Burst = 50, 100
	// Server warnings (deprecations, unknown fields) go to stderr as
	// "Warning: ...", once each, as kubectl prints them.
	cfg.WarningHandler = rest.NewWarningWriter(f.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
	level := 0
	if f.Verbosity != nil {
		level = f.Verbosity()
	}
	if level >= transport.LevelURL {
		for _, file := range f.Flags.LoadingRules().GetLoadingPrecedence() {
			if _, err := os.Stat(file); err == nil {
				fmt.Fprintf(f.ErrOut, "Config loaded from file:  %s\n", file)
			}
		}
		files := f.tlsFiles(cfg, level)
		errOut := f.ErrOut
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return transport.Wrap(rt, level, errOut, files)
		})
	}
	f.restConfig = cfg
	f.httpClient, err = rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	f.clientset, err = kubernetes.NewForConfigAndClient(cfg, f.httpClient)
	if err != nil {
		return err
	}
	f.dynamic, err = dynamic.NewForConfigAndClient(cfg, f.httpClient)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, f.httpClient)
	if err != nil {
		return err
	}
	f.discovery = memory.NewMemCacheClient(dc)
	deferred := restmapper.NewDeferredDiscoveryRESTMapper(f.discovery)
	f.mapper = restmapper.NewShortcutExpander(deferred, f.discovery, func(string) {})
	return nil
}

// tlsFiles names certificate files for the curl command, writing embedded
// certificate data to the cache directory when only -v 9 and above need it.
func (f *Factory) tlsFiles(cfg *rest.Config, level int) transport.TLSFiles {
	files := transport.TLSFiles{
		CAFile: cfg.CAFile, CertFile: cfg.CertFile, KeyFile: cfg.KeyFile, Insecure: cfg.Insecure,
	}
	if level < transport.LevelCurl {
		return files
	}
	materialize := func(path *string, data []byte, suffix string) {
		if *path != "" || len(data) == 0 {
			return
		}
		p, err := transport.MaterializePEM(f.CacheDir, suffix, data)
		if err != nil {
			fmt.Fprintf(f.ErrOut, "warning: cannot write %s for the curl command: %v\n", suffix, err)
			return
		}
		*path = p
	}
	materialize(&files.CAFile, cfg.CAData, "-ca.crt")
	materialize(&files.CertFile, cfg.CertData, "-client.crt")
	materialize(&files.KeyFile, cfg.KeyData, "-client.key")
	return files
}

// Clientset returns the typed client.
func (f *Factory) Clientset() (*kubernetes.Clientset, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return f.clientset, nil
}

// Dynamic returns the dynamic client.
func (f *Factory) Dynamic() (dynamic.Interface, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return f.dynamic, nil
}

// Discovery returns the memory-cached discovery client.
func (f *Factory) Discovery() (discovery.CachedDiscoveryInterface, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return f.discovery, nil
}

// RESTMapper returns the discovery-backed mapper that knows short names.
func (f *Factory) RESTMapper() (meta.RESTMapper, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return f.mapper, nil
}

// HTTPClient returns the HTTP client that carries the credentials.
func (f *Factory) HTTPClient() (*http.Client, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return f.httpClient, nil
}

// DefaultTimeout bounds waits (delete, rollout status) unless a verb's
// --timeout says otherwise.
const DefaultTimeout = 5 * time.Minute

func checkConfigCertificate(cfg *rest.Config) error {
	data := cfg.CertData
	if len(data) == 0 && cfg.CertFile != "" {
		b, err := os.ReadFile(cfg.CertFile)
		if err != nil {
			return fmt.Errorf("reading the client certificate named in the kubeconfig: %w", err)
		}
		data = b
	}
	return CheckClientCertificate(data, time.Now())
}

// Server returns the API server URL for messages, or "" when the
// configuration cannot be loaded.
func (f *Factory) Server() string {
	if f.restConfig != nil {
		return f.restConfig.Host
	}
	cfg, err := f.Flags.ClientConfig().ClientConfig()
	if err != nil {
		return ""
	}
	return cfg.Host
}
