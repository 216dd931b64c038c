package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"skiff.dev/component-base/clientconfig"
)

// Options are skiff-proxy's flags.
type Options struct {
	Client                clientconfig.Options
	HostnameOverride      string
	ClusterCIDR           string
	ServiceClusterIPRange string
	MasqueradeBit         int
	MinSyncPeriod         time.Duration
	SyncPeriod            time.Duration
	HealthzBindAddress    string
	MetricsBindAddress    string
	LocalhostNodePorts    bool
	MasqueradePodEgress   bool
	EgressGuard           bool
	EgressGuardInterfaces []string
	Cleanup               bool
}

// NewOptions returns the defaults (upstream kube-proxy's where it has
// the flag, skiff's networks otherwise).
func NewOptions() *Options {
	return &Options{
		Client:                clientconfig.Options{QPS: 50, Burst: 100},
		ClusterCIDR:           "10.244.0.0/16",
		ServiceClusterIPRange: "10.96.0.0/16",
		MasqueradeBit:         14,
		MinSyncPeriod:         time.Second,
		SyncPeriod:            30 * time.Second,
		HealthzBindAddress:    "0.0.0.0:10256",
		MetricsBindAddress:    "127.0.0.1:10249",
		LocalhostNodePorts:    true,
		MasqueradePodEgress:   true,
		EgressGuard:           true,
		EgressGuardInterfaces: []string{"skiff0"},
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Client.AddFlags(fs)
	fs.StringVar(&o.HostnameOverride, "hostname-override", o.HostnameOverride, "The name of this node (its Node object; endpoints whose nodeName is this are local). Empty: the host name.")
	fs.StringVar(&o.ClusterCIDR, "cluster-cidr", o.ClusterCIDR, "The pod network: traffic to a cluster IP from outside it is masqueraded, and pod egress out of it (--masquerade-pod-egress).")
	fs.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", o.ServiceClusterIPRange, "The service network, routed to the local interface skiff-svc0 so that no packet for a cluster IP leaves the machine.")
	fs.IntVar(&o.MasqueradeBit, "iptables-masquerade-bit", o.MasqueradeBit, "The bit of the fwmark space (0-31) that marks packets to masquerade.")
	fs.DurationVar(&o.MinSyncPeriod, "min-sync-period", o.MinSyncPeriod, "The least time between two syncs of the rules; changes in between are applied together.")
	fs.DurationVar(&o.SyncPeriod, "sync-period", o.SyncPeriod, "The time between full syncs, which compare every rule with the kernel's and repair rules removed or changed by hand.")
	fs.StringVar(&o.HealthzBindAddress, "healthz-bind-address", o.HealthzBindAddress, "The ip:port of /healthz (HTTP); empty: off.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "The ip:port of /metrics (HTTP); empty: off.")
	fs.BoolVar(&o.LocalhostNodePorts, "iptables-localhost-nodeports", o.LocalhostNodePorts, "Accept NodePort traffic on 127.0.0.1 (sets net.ipv4.conf.all.route_localnet=1 and drops martian localnet traffic).")
	fs.BoolVar(&o.MasqueradePodEgress, "masquerade-pod-egress", o.MasqueradePodEgress, "Masquerade traffic from --cluster-cidr to destinations outside it.")
	fs.BoolVar(&o.EgressGuard, "egress-guard", o.EgressGuard, "Drop forwarded cluster traffic that would leave by an interface not in --egress-guard-allow-interfaces (a test-machine safety net; turn off on real deployments).")
	fs.StringSliceVar(&o.EgressGuardInterfaces, "egress-guard-allow-interfaces", o.EgressGuardInterfaces, "The interfaces cluster traffic may be forwarded out of (the kubelet's bridge, links to other nodes).")
	fs.BoolVar(&o.Cleanup, "cleanup", o.Cleanup, "Remove every rule, chain, route and interface the proxy made, and exit.")
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if !o.Cleanup {
		errs = append(errs, o.Client.Validate()...)
	}
	for flag, v := range map[string]string{"--cluster-cidr": o.ClusterCIDR, "--service-cluster-ip-range": o.ServiceClusterIPRange} {
		if _, n, err := net.ParseCIDR(v); err != nil || n.IP.To4() == nil {
			errs = append(errs, fmt.Errorf("%s %q is not an IPv4 CIDR", flag, v))
		}
	}
	if o.MasqueradeBit < 0 || o.MasqueradeBit > 31 {
		errs = append(errs, fmt.Errorf("--iptables-masquerade-bit %d must be between 0 and 31", o.MasqueradeBit))
	}
	if o.SyncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--sync-period %v must be positive", o.SyncPeriod))
	}
	if o.MinSyncPeriod < 0 || o.MinSyncPeriod > o.SyncPeriod {
		errs = append(errs, fmt.Errorf("--min-sync-period %v must be between 0 and --sync-period %v", o.MinSyncPeriod, o.SyncPeriod))
	}
	for flag, v := range map[string]string{"--healthz-bind-address": o.HealthzBindAddress, "--metrics-bind-address": o.MetricsBindAddress} {
		if v == "" {
			continue
		}
		if host, _, err := net.SplitHostPort(v); err != nil || net.ParseIP(host) == nil {
			errs = append(errs, fmt.Errorf("%s %q is not ip:port", flag, v))
		}
	}
	if o.EgressGuard && len(o.EgressGuardInterfaces) == 0 {
		errs = append(errs, errors.New("--egress-guard needs at least one --egress-guard-allow-interfaces"))
	}
	for _, ifc := range o.EgressGuardInterfaces {
		if ifc == "" || len(ifc) > 15 || strings.ContainsAny(ifc, " /") {
			errs = append(errs, fmt.Errorf("--egress-guard-allow-interfaces: %q is not an interface name", ifc))
		}
	}
	return errors.Join(errs...)
}

// NodeName is --hostname-override, or the host name in lower case.
func (o *Options) NodeName() (string, error) {
	if o.HostnameOverride != "" {
		return strings.ToLower(strings.TrimSpace(o.HostnameOverride)), nil
	}
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("finding the node name (set --hostname-override): %w", err)
	}
	return strings.ToLower(h), nil
}

func mustCIDR(s string) *net.IPNet {
	_, n, _ := net.ParseCIDR(s)
	return n
}
