package pod

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// The limits upstream's kubelet applies to a pod's resolv.conf
// (k8s.io/kubernetes pkg/apis/core/validation: MaxDNSNameservers,
// MaxDNSSearchPaths, MaxDNSSearchListChars).
const (
	MaxDNSNameservers     = 3
	MaxDNSSearchPaths     = 32
	MaxDNSSearchListChars = 2048
)

// defaultDNSOptions are a cluster-first pod's resolver options.
var defaultDNSOptions = []string{"ndots:5"}

// DNSConfigurer writes pods' resolv.conf as upstream's kubelet
// (pkg/kubelet/network/dns) has the runtime write it.
type DNSConfigurer struct {
	// ClusterDNS are the cluster DNS servers (--cluster-dns); none: pods
	// of a cluster-first policy get the node's resolvers.
	ClusterDNS []net.IP
	// ClusterDomain is the cluster's DNS domain (--cluster-domain).
	ClusterDomain string
	// ResolverConfig is the node's resolv.conf (--resolv-conf); empty:
	// pods with the node's resolvers get 127.0.0.1 (upstream's rule).
	ResolverConfig string
}

// DNSConfig is a pod's resolver configuration.
type DNSConfig struct {
	Servers  []string
	Searches []string
	Options  []string
}

// DNSWarning is something the configurer dropped or fell back from;
// upstream reports it as a Warning event of this reason on the pod.
type DNSWarning struct {
	Reason  string
	Message string
}

type podDNSType int

const (
	podDNSCluster podDNSType = iota
	podDNSHost
	podDNSNone
)

func podDNSTypeOf(p *corev1.Pod) podDNSType {
	switch p.Spec.DNSPolicy {
	case corev1.DNSNone:
		return podDNSNone
	case corev1.DNSClusterFirstWithHostNet:
		return podDNSCluster
	case corev1.DNSDefault:
		return podDNSHost
	default:
		// ClusterFirst, and "" (the API server defaults to ClusterFirst).
		// A hostNetwork pod falls back to the node's resolvers.
		if p.Spec.HostNetwork {
			return podDNSHost
		}
		return podDNSCluster
	}
}

// PodDNS is the pod's resolver configuration by its dnsPolicy and
// dnsConfig, with the warnings upstream would record.
func (c *DNSConfigurer) PodDNS(p *corev1.Pod) (*DNSConfig, []DNSWarning, error) {
	cfg, err := c.hostDNSConfig()
	if err != nil {
		return nil, nil, err
	}
	var warnings []DNSWarning
	switch typ := podDNSTypeOf(p); {
	case typ == podDNSNone:
		cfg = &DNSConfig{}
	case typ == podDNSCluster && len(c.ClusterDNS) > 0:
		// The cluster DNS is the pod's only nameserver; it forwards what
		// it cannot answer itself.
		cfg.Servers = nil
		for _, ip := range c.ClusterDNS {
			cfg.Servers = append(cfg.Servers, ip.String())
		}
		cfg.Searches = c.clusterFirstSearches(cfg.Searches, p)
		cfg.Options = append([]string(nil), defaultDNSOptions...)
	default:
		if typ == podDNSCluster {
			warnings = append(warnings, DNSWarning{Reason: "MissingClusterDNS", Message: fmt.Sprintf(
				"kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.",
				corev1.DNSClusterFirst, corev1.DNSDefault)})
		}
		if c.ResolverConfig == "" {
			cfg.Servers = []string{"127.0.0.1"}
			cfg.Searches = []string{"."}
		}
	}
	if dc := p.Spec.DNSConfig; dc != nil {
		cfg.Servers = omitDuplicates(append(cfg.Servers, dc.Nameservers...))
		cfg.Searches = omitDuplicates(append(cfg.Searches, dc.Searches...))
		cfg.Options = mergeDNSOptions(cfg.Options, dc.Options)
	}
	if len(cfg.Servers) > MaxDNSNameservers {
		cfg.Servers = cfg.Servers[:MaxDNSNameservers]
		warnings = append(warnings, DNSWarning{Reason: "DNSConfigForming", Message: fmt.Sprintf(
			"Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: %s", strings.Join(cfg.Servers, " "))})
	}
	var exceeded bool
	cfg.Searches, exceeded = searchFitsLimits(cfg.Searches)
	if exceeded {
		warnings = append(warnings, DNSWarning{Reason: "DNSConfigForming", Message: fmt.Sprintf(
			"Search Line limits were exceeded, some search paths have been omitted, the applied search line is: %s", strings.Join(cfg.Searches, " "))})
	}
	return cfg, warnings, nil
}

// clusterFirstSearches are <ns>.svc.<domain>, svc.<domain>, <domain>,
// then the node's search paths.
func (c *DNSConfigurer) clusterFirstSearches(hostSearch []string, p *corev1.Pod) []string {
	if c.ClusterDomain == "" {
		return hostSearch
	}
	cluster := []string{p.Namespace + ".svc." + c.ClusterDomain, "svc." + c.ClusterDomain, c.ClusterDomain}
	return omitDuplicates(append(cluster, hostSearch...))
}

// searchFitsLimits keeps at most MaxDNSSearchPaths paths, drops paths
// longer than a DNS name, and cuts paths from the end until the line has
// at most MaxDNSSearchListChars characters.
func searchFitsLimits(search []string) ([]string, bool) {
	exceeded := false
	if len(search) > MaxDNSSearchPaths {
		search = search[:MaxDNSSearchPaths]
		exceeded = true
	}
	kept := search[:0:0]
	for _, s := range search {
		if len(s) > utilvalidation.DNS1123SubdomainMaxLength {
			exceeded = true
			continue
		}
		kept = append(kept, s)
	}
	search = kept
	if n := len(strings.Join(search, " ")); n > MaxDNSSearchListChars {
		cut, cutLen := 0, 0
		for i := len(search) - 1; i >= 0; i-- {
			cutLen += len(search[i]) + 1
			cut++
			if n-cutLen <= MaxDNSSearchListChars {
				break
			}
		}
		search = search[:len(search)-cut]
		exceeded = true
	}
	return search, exceeded
}

// hostDNSConfig reads the node's resolv.conf (none: empty).
func (c *DNSConfigurer) hostDNSConfig() (*DNSConfig, error) {
	if c.ResolverConfig == "" {
		return &DNSConfig{}, nil
	}
	b, err := os.ReadFile(c.ResolverConfig)
	if err != nil {
		return nil, fmt.Errorf("reading the node's resolv.conf: %w", err)
	}
	return parseResolvConf(b), nil
}

// parseResolvConf reads nameserver, search and options lines as
// upstream's kubelet does: the last search line wins, a later option
// overrides an earlier one of the same name.
func parseResolvConf(b []byte) *DNSConfig {
	cfg := &DNSConfig{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "nameserver":
			if len(f) > 1 {
				cfg.Servers = append(cfg.Servers, f[1])
			}
		case "search":
			// The same domain with and without its trailing dot counts once;
			// the root is no search path.
			cfg.Searches = nil
			for _, s := range f[1:] {
				if s != "." {
					cfg.Searches = append(cfg.Searches, strings.TrimSuffix(s, "."))
				}
			}
		case "options":
			cfg.Options = mergeOptionStrings(cfg.Options, f[1:])
		}
	}
	return cfg
}

func mergeOptionStrings(existing, more []string) []string {
	var opts []corev1.PodDNSConfigOption
	for _, o := range more {
		name, value, ok := strings.Cut(o, ":")
		if ok {
			opts = append(opts, corev1.PodDNSConfigOption{Name: name, Value: &value})
		} else {
			opts = append(opts, corev1.PodDNSConfigOption{Name: name})
		}
	}
	return mergeDNSOptions(existing, opts)
}

// mergeDNSOptions merges options; the pod's override the existing ones
// of the same name. The result is sorted (upstream's order is a map's).
func mergeDNSOptions(existing []string, more []corev1.PodDNSConfigOption) []string {
	m := map[string]string{}
	for _, o := range existing {
		name, value, _ := strings.Cut(o, ":")
		m[name] = value
	}
	for _, o := range more {
		m[o.Name] = ""
		if o.Value != nil {
			m[o.Name] = *o.Value
		}
	}
	out := make([]string, 0, len(m))
	for name, value := range m {
		if value != "" {
			name += ":" + value
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func omitDuplicates(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// ResolvConf is the file the runtime writes (containerd's format):
// search, nameservers, options. Empty when the config is.
func (d *DNSConfig) ResolvConf() []byte {
	var b strings.Builder
	if len(d.Searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(d.Searches, " "))
	}
	for _, s := range d.Servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(d.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(d.Options, " "))
	}
	return []byte(b.String())
}
