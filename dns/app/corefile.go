package app

import (
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"text/template"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"k8s.io/klog/v2"

	// The plugins skiff-dns links, and nothing else: each registers
	// itself with CoreDNS when imported.
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"

	// skiff-dns's own: ready in the place of CoreDNS's (which stops
	// asking a plugin once it was ready), reload in the place of CoreDNS's
	// (whose loops outlive their instances, see pkg/reload), and kubeapi,
	// whose readiness is the API server's.
	_ "skiff.dev/dns/pkg/kubeapi"
	_ "skiff.dev/dns/pkg/ready"
	_ "skiff.dev/dns/pkg/reload"
)

// Directives are the plugins skiff-dns has, in the order CoreDNS runs
// them for a query (the relative order of CoreDNS's own plugin.cfg), as a
// custom CoreDNS build lists them; kubeapi, skiff-dns's own, comes after
// kubernetes and only passes queries on.
var Directives = []string{
	"reload",
	"ready",
	"health",
	"prometheus",
	"errors",
	"log",
	"loadbalance",
	"cache",
	"kubernetes",
	"kubeapi",
	"loop",
	"forward",
}

// serverType is CoreDNS's server type in caddy.
const serverType = "dns"

// defaultCorefile is the built-in Corefile, k3s's with the addresses,
// domain, kubeconfig and upstream from the flags.
var defaultCorefile = template.Must(template.New("Corefile").Parse(`.:{{.Port}} {
    errors
    health {{.Health}}
    ready {{.Ready}}
    kubernetes {{.Domain}} in-addr.arpa ip6.arpa {
{{- if .Kubeconfig}}
        kubeconfig {{.Kubeconfig}}
{{- end}}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    kubeapi
    prometheus {{.Metrics}}
    forward . {{.Upstream}}
    cache 30
    loop
    reload
    loadbalance
}
`))

// DefaultCorefile is the Corefile skiff-dns serves without --conf.
func DefaultCorefile(o *Options) string {
	var b bytes.Buffer
	if err := defaultCorefile.Execute(&b, map[string]string{
		"Port": strconv.Itoa(o.Port), "Health": o.HealthBindAddress, "Ready": o.ReadyBindAddress,
		"Domain": o.ClusterDomain, "Kubeconfig": o.Client.Kubeconfig, "Metrics": o.MetricsBindAddress,
		"Upstream": o.Upstream,
	}); err != nil {
		// The template and its fields are fixed: this is a programming error.
		panic(fmt.Sprintf("the built-in Corefile: %v", err))
	}
	return b.String()
}

// corefileSource says where the Corefile comes from: the file path, or the
// built-in text.
type corefileSource struct {
	path    string
	builtin string
}

func (s corefileSource) load() (caddy.Input, error) {
	if s.path == "" {
		return caddy.CaddyfileInput{Contents: []byte(s.builtin), Filepath: "Corefile (built in)", ServerTypeName: serverType}, nil
	}
	b, err := os.ReadFile(s.path)
	if err != nil {
		return nil, fmt.Errorf("reading the Corefile: %w", err)
	}
	return caddy.CaddyfileInput{Contents: b, Filepath: s.path, ServerTypeName: serverType}, nil
}

// registerOnce guards the process-wide settings of CoreDNS and caddy.
var registerOnce sync.Once

// useCorefile registers the plugin order and the process-wide settings
// with CoreDNS (once), and loads src.
func useCorefile(src corefileSource) (caddy.Input, error) {
	registerOnce.Do(func() {
		dnsserver.Directives = Directives
		caddy.Quiet = true
		caddy.AppName, caddy.AppVersion = "skiff-dns", CoreDNSVersion()
		// The kubernetes plugin's setup routes klog to CoreDNS's logger,
		// which drops errors and key/value pairs; once a server has
		// started (and again after each reload), klog writes its own
		// structured lines again, for skiff-dns and client-go alike.
		caddy.RegisterEventHook("skiff-dns-klog", func(ev caddy.EventName, _ interface{}) error {
			if ev == caddy.InstanceStartupEvent {
				klog.ClearLogger()
			}
			return nil
		})
	})
	return src.load()
}

// CoreDNS is the module path of the CoreDNS skiff-dns links.
const coreDNSModule = "github.com/coredns/coredns"

// CoreDNSVersion is the version of CoreDNS linked into this binary
// ("unknown" in a binary without module information).
func CoreDNSVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == coreDNSModule {
				return m.Version
			}
		}
	}
	return "unknown"
}
