// Package kubeapi is a CoreDNS plugin of skiff-dns's own that tells
// whether the API server is reachable: it asks the API server's /readyz
// every few seconds and is not ready (in /ready, through skiff-dns's
// ready plugin) while that fails. For queries it only passes them on: the
// kubernetes plugin before it keeps answering from its informers' caches
// while the API server is away.
//
//	kubeapi [{
//	    kubeconfig PATH [CONTEXT]
//	    interval DURATION
//	    timeout DURATION
//	}]
//
// Without kubeconfig it uses the client configuration skiff-dns built
// from its flags (SetClientConfig), else the in-cluster one.
package kubeapi

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/miekg/dns"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Name is the plugin's name in the Corefile.
const Name = "kubeapi"

// The defaults of interval and timeout.
const (
	DefaultInterval = 5 * time.Second
	DefaultTimeout  = 3 * time.Second
)

var (
	log = clog.NewWithPlugin(Name)
	// clientConfig is the configuration skiff-dns built from its flags.
	clientConfig atomic.Pointer[rest.Config]
)

func init() { plugin.Register(Name, setup) }

// SetClientConfig makes cfg the configuration of kubeapi plugins without
// a kubeconfig of their own (skiff-dns's own client: its --kubeconfig,
// --master and identity).
func SetClientConfig(cfg *rest.Config) { clientConfig.Store(cfg) }

// KubeAPI is the plugin.
type KubeAPI struct {
	Next     plugin.Handler
	interval time.Duration
	timeout  time.Duration
	check    func(ctx context.Context) error

	mu     sync.Mutex
	ready  bool
	reason string
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns the plugin asking check every interval; it is not ready
// until the first check succeeded.
func New(check func(ctx context.Context) error, interval, timeout time.Duration) *KubeAPI {
	return &KubeAPI{check: check, interval: interval, timeout: timeout, reason: "the API server has not been checked yet"}
}

// ReadyzCheck asks the API server's /readyz with client.
func ReadyzCheck(client kubernetes.Interface) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		var code int
		res := client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code)
		if err := res.Error(); err != nil {
			return fmt.Errorf("the API server's /readyz: %w", err)
		}
		if code != http.StatusOK {
			return fmt.Errorf("the API server's /readyz: HTTP %d", code)
		}
		return nil
	}
}

// Name implements plugin.Handler.
func (k *KubeAPI) Name() string { return Name }

// ServeDNS passes the query on.
func (k *KubeAPI) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	return plugin.NextOrFailure(k.Name(), k.Next, ctx, w, r)
}

// Ready is whether the last check of the API server succeeded.
func (k *KubeAPI) Ready() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ready
}

// NotReadyReason is the last check's error.
func (k *KubeAPI) NotReadyReason() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ready {
		return ""
	}
	return k.reason
}

// CheckOnce asks the API server once and records the answer.
func (k *KubeAPI) CheckOnce(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, k.timeout)
	err := k.check(cctx)
	cancel()
	if ctx.Err() != nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case err == nil && !k.ready:
		log.Infof("The API server is reachable")
	case err != nil && (k.ready || k.reason != err.Error()):
		log.Warningf("The API server is unreachable; answering from the cache: %v", err)
	}
	k.ready = err == nil
	if err != nil {
		k.reason = err.Error()
	}
}

// Start checks now and then every interval until Stop.
func (k *KubeAPI) Start() error {
	ctx, cancel := context.WithCancel(context.Background())
	k.mu.Lock()
	k.cancel, k.done = cancel, make(chan struct{})
	done := k.done
	k.mu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(k.interval)
		defer t.Stop()
		for {
			k.CheckOnce(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// Stop ends the checks.
func (k *KubeAPI) Stop() error {
	k.mu.Lock()
	cancel, done := k.cancel, k.done
	k.cancel = nil
	k.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return nil
}

func setup(c *caddy.Controller) error {
	k, err := parse(c)
	if err != nil {
		return plugin.Error(Name, err)
	}
	c.OnStartup(k.Start)
	c.OnShutdown(k.Stop)
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		k.Next = next
		return k
	})
	return nil
}

func parse(c *caddy.Controller) (*KubeAPI, error) {
	interval, timeout := DefaultInterval, DefaultTimeout
	var cfg *rest.Config
	i := 0
	for c.Next() {
		if i > 0 {
			return nil, plugin.ErrOnce
		}
		i++
		if len(c.RemainingArgs()) != 0 {
			return nil, c.ArgErr()
		}
		for c.NextBlock() {
			switch c.Val() {
			case "kubeconfig":
				args := c.RemainingArgs()
				if len(args) != 1 && len(args) != 2 {
					return nil, c.ArgErr()
				}
				overrides := &clientcmd.ConfigOverrides{}
				if len(args) == 2 {
					overrides.CurrentContext = args[1]
				}
				var err error
				cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
					&clientcmd.ClientConfigLoadingRules{ExplicitPath: args[0]}, overrides).ClientConfig()
				if err != nil {
					return nil, fmt.Errorf("kubeconfig %s: %w", args[0], err)
				}
			case "interval", "timeout":
				name := c.Val()
				args := c.RemainingArgs()
				if len(args) != 1 {
					return nil, c.ArgErr()
				}
				d, err := time.ParseDuration(args[0])
				if err != nil || d <= 0 {
					return nil, c.Errf("%s %q is not a positive duration", name, args[0])
				}
				if name == "interval" {
					interval = d
				} else {
					timeout = d
				}
			default:
				return nil, c.Errf("unknown property %q", c.Val())
			}
		}
	}
	if cfg == nil {
		cfg = clientConfig.Load()
	}
	if cfg == nil {
		var err error
		if cfg, err = rest.InClusterConfig(); err != nil {
			return nil, fmt.Errorf("no kubeconfig, and not in a cluster: %w", err)
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "skiff-dns/" + Name
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return New(ReadyzCheck(client), interval, timeout), nil
}
