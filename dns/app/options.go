package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"skiff.dev/component-base/clientconfig"
)

// Options are skiff-dns's flags.
type Options struct {
	Client clientconfig.Options
	// Conf is the Corefile; empty: the built-in default (DefaultCorefile).
	Conf string
	// The rest fills in the built-in Corefile (and, for the addresses and
	// ports, the kube-dns Service and this instance's EndpointSlice).
	ClusterDomain      string
	Port               int
	HealthBindAddress  string
	ReadyBindAddress   string
	MetricsBindAddress string
	Upstream           string
	// RegisterService keeps the kube-dns Service and this instance's
	// EndpointSlice in the API.
	RegisterService  bool
	ServiceNamespace string
	ServiceName      string
	ClusterIP        string
	AdvertiseAddress string
	HostnameOverride string
	// LeaseDuration and LeaseRenewInterval: this instance's Lease
	// (skiff-dns-<node>), and how long another instance waits for a Lease
	// to change before it deletes that instance's EndpointSlice.
	LeaseDuration      time.Duration
	LeaseRenewInterval time.Duration
}

// NewOptions returns the defaults: CoreDNS's ports, upstream's kube-dns
// Service, skiff's service range.
func NewOptions() *Options {
	return &Options{
		Client:             clientconfig.Options{QPS: 20, Burst: 40},
		ClusterDomain:      "cluster.local",
		Port:               53,
		HealthBindAddress:  ":8080",
		ReadyBindAddress:   ":8181",
		MetricsBindAddress: ":9153",
		Upstream:           "/etc/resolv.conf",
		RegisterService:    true,
		ServiceNamespace:   "kube-system",
		ServiceName:        "kube-dns",
		ClusterIP:          "10.96.0.10",
		LeaseDuration:      40 * time.Second,
		LeaseRenewInterval: 10 * time.Second,
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Client.AddFlags(fs)
	fs.StringVar(&o.Conf, "conf", o.Conf, "The Corefile. Empty: the built-in one (see docs/dns.md), filled in from the flags below; the kubernetes plugin then authenticates with --kubeconfig.")
	fs.StringVar(&o.ClusterDomain, "cluster-domain", o.ClusterDomain, "The cluster's DNS domain (built-in Corefile).")
	fs.IntVar(&o.Port, "dns-port", o.Port, "The UDP and TCP port DNS is served on (built-in Corefile), and the kube-dns endpoints' port.")
	fs.StringVar(&o.HealthBindAddress, "health-bind-address", o.HealthBindAddress, "The [ip]:port of /health (built-in Corefile).")
	fs.StringVar(&o.ReadyBindAddress, "ready-bind-address", o.ReadyBindAddress, "The [ip]:port of /ready (built-in Corefile).")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "The [ip]:port of /metrics (built-in Corefile), and the kube-dns endpoints' metrics port.")
	fs.StringVar(&o.Upstream, "upstream", o.Upstream, "Where names outside the cluster domain go (built-in Corefile): a resolv.conf whose nameservers forward uses, or space-separated ip[:port] addresses.")
	fs.BoolVar(&o.RegisterService, "register-service", o.RegisterService, "Keep the kube-dns Service and this instance's EndpointSlice (kube-dns-<node>) in the API; the slice is deleted on a clean stop.")
	fs.StringVar(&o.ServiceNamespace, "service-namespace", o.ServiceNamespace, "The namespace of the DNS Service.")
	fs.StringVar(&o.ServiceName, "service-name", o.ServiceName, "The name of the DNS Service.")
	fs.StringVar(&o.ClusterIP, "cluster-ip", o.ClusterIP, "The DNS Service's cluster IP (the kubelet's --cluster-dns); by convention the tenth address of the service range.")
	fs.StringVar(&o.AdvertiseAddress, "advertise-address", o.AdvertiseAddress, "This node's address, put in this instance's EndpointSlice (required with --register-service).")
	fs.DurationVar(&o.LeaseDuration, "lease-duration", o.LeaseDuration, "With --register-service: the duration of this instance's Lease skiff-dns-<node> (whole seconds). Other instances delete the EndpointSlice of an instance whose Lease they saw unchanged for longer than its duration (one that crashed).")
	fs.DurationVar(&o.LeaseRenewInterval, "lease-renew-interval", o.LeaseRenewInterval, "With --register-service: how often this instance renews its Lease and looks for the EndpointSlices of instances whose Lease expired.")
	fs.StringVar(&o.HostnameOverride, "hostname-override", o.HostnameOverride, "The node's name (names this instance's EndpointSlice). Empty: the host name.")
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.Client.Validate()...)
	if o.Conf != "" {
		if _, err := os.Stat(o.Conf); err != nil {
			errs = append(errs, fmt.Errorf("--conf: %w", err))
		}
	}
	if msgs := validation.IsDNS1123Subdomain(o.ClusterDomain); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--cluster-domain %q: %s", o.ClusterDomain, strings.Join(msgs, "; ")))
	}
	if o.Port < 1 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("--dns-port %d is not a port", o.Port))
	}
	for flag, v := range map[string]string{"--health-bind-address": o.HealthBindAddress, "--ready-bind-address": o.ReadyBindAddress, "--metrics-bind-address": o.MetricsBindAddress} {
		if _, err := portOf(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
		}
	}
	if o.RegisterService {
		if ip := net.ParseIP(o.ClusterIP); ip == nil || ip.To4() == nil {
			errs = append(errs, fmt.Errorf("--cluster-ip %q is not an IPv4 address", o.ClusterIP))
		}
		if ip := net.ParseIP(o.AdvertiseAddress); ip == nil || ip.To4() == nil || ip.IsUnspecified() {
			errs = append(errs, fmt.Errorf("--advertise-address %q is not an IPv4 address (needed with --register-service)", o.AdvertiseAddress))
		}
		if msgs := validation.IsDNS1035Label(o.ServiceName); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--service-name %q: %s", o.ServiceName, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsDNS1123Label(o.ServiceNamespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--service-namespace %q: %s", o.ServiceNamespace, strings.Join(msgs, "; ")))
		}
		if o.LeaseDuration < time.Second || o.LeaseDuration%time.Second != 0 {
			errs = append(errs, fmt.Errorf("--lease-duration %v is not a whole number of seconds of at least 1s", o.LeaseDuration))
		}
		if o.LeaseRenewInterval <= 0 || o.LeaseRenewInterval >= o.LeaseDuration {
			errs = append(errs, fmt.Errorf("--lease-renew-interval %v must be positive and shorter than --lease-duration %v", o.LeaseRenewInterval, o.LeaseDuration))
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

// portOf is the port of an [ip]:port address.
func portOf(addr string) (int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("%q is not [ip]:port", addr)
	}
	if host != "" && net.ParseIP(host) == nil {
		return 0, fmt.Errorf("%q: %q is not an IP address", addr, host)
	}
	var p int
	if _, err := fmt.Sscan(port, &p); err != nil || p < 0 || p > 65535 {
		return 0, fmt.Errorf("%q: %q is not a port", addr, port)
	}
	return p, nil
}
