package certs

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// apiServerDNSNames are the names by which pods and in-cluster clients reach the
// API server through the kubernetes Service.
var apiServerDNSNames = []string{
	"localhost",
	"kubernetes",
	"kubernetes.default",
	"kubernetes.default.svc",
	"kubernetes.default.svc.cluster.local",
}

// host describes the machine Generate runs on.
type host struct {
	// name is the lower-cased hostname, the default node name.
	name string
	// ips are the addresses of the machine's up, non-loopback interfaces that
	// are unicast and not link-local.
	ips []net.IP
}

// discoverHost reads the hostname and interface addresses of this machine.
func discoverHost() (host, error) {
	name, err := os.Hostname()
	if err != nil {
		return host{}, fmt.Errorf("reading hostname: %w", err)
	}
	ips, err := interfaceIPs()
	if err != nil {
		return host{}, err
	}
	return host{name: strings.ToLower(name), ips: ips}, nil
}

// interfaceIPs returns the unicast, non-loopback, non-link-local addresses of
// the interfaces that are up. Down interfaces are skipped so that a dummy
// interface holding service addresses (as kube-proxy's kube-ipvs0) does not make
// every new Service a new SAN.
func interfaceIPs() ([]net.IP, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("listing network interfaces: %w", err)
	}
	var ips []net.IP
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			return nil, fmt.Errorf("listing addresses of %s: %w", iface.Name, err)
		}
		for _, addr := range addrs {
			ipNet, ok := addr.(*net.IPNet)
			if !ok || !ipNet.IP.IsGlobalUnicast() {
				continue
			}
			ips = append(ips, ipNet.IP)
		}
	}
	return ips, nil
}

// APIServerSANs returns every SAN the API server serving certificate gets for
// opts: loopback addresses and localhost, the kubernetes Service IP and names,
// the machine's hostname and interface addresses, the host of opts.Server and
// opts.APIServerSANs. Defaults are applied to opts first.
func APIServerSANs(opts Options) ([]string, error) {
	h, err := discoverHost()
	if err != nil {
		return nil, err
	}
	if err := opts.complete(h); err != nil {
		return nil, err
	}
	return apiServerSANs(opts, h)
}

func apiServerSANs(opts Options, h host) ([]string, error) {
	sans := []string{"127.0.0.1", "::1", opts.ServiceClusterIP}
	sans = append(sans, apiServerDNSNames...)
	if validation.IsDNS1123Subdomain(h.name) == nil {
		sans = append(sans, h.name)
	}
	for _, ip := range h.ips {
		sans = append(sans, ip.String())
	}
	serverHost, err := serverHostname(opts.Server)
	if err != nil {
		return nil, err
	}
	sans = append(sans, serverHost)
	sans = append(sans, opts.APIServerSANs...)
	return normalizeHosts(sans)
}

// kubeletSANs returns the SANs of node's kubelet serving certificate: the node
// name, localhost, 127.0.0.1 and the node's IPs. When no IP is given for the
// node this machine runs, the machine's interface addresses are used, since
// that is where its kubelet is reached.
func kubeletSANs(opts Options, h host, node string) ([]string, error) {
	sans := []string{node, "localhost", "127.0.0.1"}
	nodeIPs := opts.NodeIPs[node]
	if len(nodeIPs) == 0 && node == h.name {
		for _, ip := range h.ips {
			nodeIPs = append(nodeIPs, ip.String())
		}
	}
	sans = append(sans, nodeIPs...)
	return normalizeHosts(sans)
}

// serverHostname returns the host part of an API server URL.
func serverHostname(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", fmt.Errorf("invalid server URL %q: %w", server, err)
	}
	if u.Scheme != "https" {
		return "", fmt.Errorf("invalid server URL %q: scheme must be https", server)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("invalid server URL %q: no host", server)
	}
	return u.Hostname(), nil
}

// normalizeHosts cleans a list of SANs: IPs in canonical form, DNS names
// lower-cased and validated, duplicates removed, order kept.
func normalizeHosts(hosts []string) ([]string, error) {
	dns, ips, err := splitHosts(hosts)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(dns)+len(ips))
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return append(out, dns...), nil
}

// splitHosts sorts hosts into DNS names and IP addresses, dropping duplicates.
// An IPv6 address may be written in brackets.
func splitHosts(hosts []string) ([]string, []net.IP, error) {
	var (
		dns []string
		ips []net.IP
	)
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); ip != nil {
			if !slices.ContainsFunc(ips, ip.Equal) {
				ips = append(ips, ip)
			}
			continue
		}
		h = strings.ToLower(h)
		if errs := validation.IsDNS1123Subdomain(h); errs != nil {
			if werrs := validation.IsWildcardDNS1123Subdomain(h); werrs != nil {
				return nil, nil, fmt.Errorf("invalid SAN %q: not an IP address or DNS name: %s", h, strings.Join(errs, "; "))
			}
		}
		if !slices.Contains(dns, h) {
			dns = append(dns, h)
		}
	}
	return dns, ips, nil
}

// missingSANs returns the hosts that cert does not carry as SANs.
func missingSANs(cert *x509.Certificate, hosts []string) []string {
	var missing []string
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
				missing = append(missing, h)
			}
			continue
		}
		if !slices.ContainsFunc(cert.DNSNames, func(name string) bool { return strings.EqualFold(name, h) }) {
			missing = append(missing, h)
		}
	}
	return missing
}
