package pod

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestPodDNS is upstream's table of dnsPolicy and dnsConfig cases
// (pkg/kubelet/network/dns), as the resolv.conf the pod gets.
func TestPodDNS(t *testing.T) {
	dir := t.TempDir()
	hostResolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(hostResolv, []byte("# the node's\nnameserver 192.0.2.53\nnameserver 192.0.2.54 ; second\nsearch corp.example. lab.example\noptions timeout:2 attempts:3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clusterDNS := []net.IP{net.ParseIP("10.96.0.10")}
	long := func(n int, c byte) string { return strings.Repeat(string(c), n) }
	var manySearches []string
	for i := 0; i < 40; i++ {
		manySearches = append(manySearches, "s"+string(rune('a'+i%26))+strings.Repeat("x", i)+".example")
	}
	tests := []struct {
		name         string
		clusterDNS   []net.IP
		resolvConf   string
		policy       corev1.DNSPolicy
		hostNetwork  bool
		dnsConfig    *corev1.PodDNSConfig
		want         string
		wantWarnings []string
	}{
		{
			name: "ClusterFirst", clusterDNS: clusterDNS, resolvConf: hostResolv, policy: corev1.DNSClusterFirst,
			want: "search ns1.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example\nnameserver 10.96.0.10\noptions ndots:5\n",
		},
		{
			name: "empty policy is ClusterFirst", clusterDNS: clusterDNS, resolvConf: hostResolv,
			want: "search ns1.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example\nnameserver 10.96.0.10\noptions ndots:5\n",
		},
		{
			name: "ClusterFirst on the host network falls back to Default", clusterDNS: clusterDNS, resolvConf: hostResolv,
			policy: corev1.DNSClusterFirst, hostNetwork: true,
			want: "search corp.example lab.example\nnameserver 192.0.2.53\nnameserver 192.0.2.54\noptions attempts:3 timeout:2\n",
		},
		{
			name: "ClusterFirstWithHostNet on the host network", clusterDNS: clusterDNS, resolvConf: hostResolv,
			policy: corev1.DNSClusterFirstWithHostNet, hostNetwork: true,
			want: "search ns1.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example\nnameserver 10.96.0.10\noptions ndots:5\n",
		},
		{
			name: "ClusterFirstWithHostNet off the host network", clusterDNS: clusterDNS, resolvConf: hostResolv,
			policy: corev1.DNSClusterFirstWithHostNet,
			want:   "search ns1.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example\nnameserver 10.96.0.10\noptions ndots:5\n",
		},
		{
			name: "ClusterFirst without --cluster-dns falls back to Default", resolvConf: hostResolv, policy: corev1.DNSClusterFirst,
			want:         "search corp.example lab.example\nnameserver 192.0.2.53\nnameserver 192.0.2.54\noptions attempts:3 timeout:2\n",
			wantWarnings: []string{"MissingClusterDNS"},
		},
		{
			name: "Default", clusterDNS: clusterDNS, resolvConf: hostResolv, policy: corev1.DNSDefault,
			want: "search corp.example lab.example\nnameserver 192.0.2.53\nnameserver 192.0.2.54\noptions attempts:3 timeout:2\n",
		},
		{
			name: "Default without --resolv-conf is localhost", clusterDNS: clusterDNS, policy: corev1.DNSDefault,
			want: "search .\nnameserver 127.0.0.1\n",
		},
		{
			name: "None takes dnsConfig alone", clusterDNS: clusterDNS, resolvConf: hostResolv, policy: corev1.DNSNone,
			dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.1"}, Searches: []string{"a.example"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "edns0"}}},
			want:      "search a.example\nnameserver 192.0.2.1\noptions edns0 ndots:2\n",
		},
		{
			name: "ClusterFirst with dnsConfig appends and overrides options", clusterDNS: clusterDNS, resolvConf: hostResolv, policy: corev1.DNSClusterFirst,
			dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.1", "10.96.0.10"}, Searches: []string{"a.example", "cluster.local"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("1")}, {Name: "single-request-reopen"}}},
			want: "search ns1.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example a.example\nnameserver 10.96.0.10\nnameserver 192.0.2.1\noptions ndots:1 single-request-reopen\n",
		},
		{
			name: "at most 3 nameservers", clusterDNS: clusterDNS, resolvConf: hostResolv, policy: corev1.DNSDefault,
			dnsConfig:    &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.1", "192.0.2.2"}},
			want:         "search corp.example lab.example\nnameserver 192.0.2.53\nnameserver 192.0.2.54\nnameserver 192.0.2.1\noptions attempts:3 timeout:2\n",
			wantWarnings: []string{"DNSConfigForming"},
		},
		{
			name: "at most 32 search paths", clusterDNS: clusterDNS, resolvConf: hostResolv, policy: corev1.DNSNone,
			dnsConfig:    &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.1"}, Searches: manySearches},
			want:         "search " + strings.Join(manySearches[:32], " ") + "\nnameserver 192.0.2.1\n",
			wantWarnings: []string{"DNSConfigForming"},
		},
		{
			name: "a search path longer than a DNS name is dropped", clusterDNS: clusterDNS, policy: corev1.DNSNone,
			dnsConfig:    &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.1"}, Searches: []string{long(254, 'a'), "b.example"}},
			want:         "search b.example\nnameserver 192.0.2.1\n",
			wantWarnings: []string{"DNSConfigForming"},
		},
		{
			name: "at most 2048 characters of search paths", clusterDNS: clusterDNS, policy: corev1.DNSNone,
			dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.1"}, Searches: []string{
				long(250, 'a'), long(250, 'b'), long(250, 'c'), long(250, 'd'), long(250, 'e'), long(250, 'f'), long(250, 'g'), long(250, 'h'), long(250, 'i')}},
			want:         "search " + strings.Join([]string{long(250, 'a'), long(250, 'b'), long(250, 'c'), long(250, 'd'), long(250, 'e'), long(250, 'f'), long(250, 'g'), long(250, 'h')}, " ") + "\nnameserver 192.0.2.1\n",
			wantWarnings: []string{"DNSConfigForming"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &DNSConfigurer{ClusterDNS: tt.clusterDNS, ClusterDomain: "cluster.local", ResolverConfig: tt.resolvConf}
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns1"},
				Spec: corev1.PodSpec{DNSPolicy: tt.policy, HostNetwork: tt.hostNetwork, DNSConfig: tt.dnsConfig}}
			cfg, warnings, err := c.PodDNS(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(cfg.ResolvConf()); got != tt.want {
				t.Errorf("resolv.conf\n%q\nwant\n%q", got, tt.want)
			}
			var reasons []string
			for _, w := range warnings {
				reasons = append(reasons, w.Reason)
			}
			if strings.Join(reasons, ",") != strings.Join(tt.wantWarnings, ",") {
				t.Errorf("warnings %v, want %v", warnings, tt.wantWarnings)
			}
		})
	}
}

// TestEtcHostsAliases: a pod's hosts file has its own name and its
// hostAliases; a hostNetwork pod's is the node's with its hostAliases.
func TestEtcHostsAliases(t *testing.T) {
	dir := t.TempDir()
	nodeHosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(nodeHosts, []byte("127.0.0.1 localhost\n192.0.2.9 the-node"), 0o644); err != nil {
		t.Fatal(err)
	}
	aliases := []corev1.HostAlias{{IP: "192.0.2.20", Hostnames: []string{"foo.local", "bar.local"}}}
	tests := []struct {
		name        string
		hostNetwork bool
		want        string
	}{
		{name: "pod network", want: "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n10.244.1.7\tp\n\n# Entries added by HostAliases.\n192.0.2.20\tfoo.local\tbar.local\n"},
		{name: "host network", hostNetwork: true, want: "127.0.0.1 localhost\n192.0.2.9 the-node\n\n# Entries added by HostAliases.\n192.0.2.20\tfoo.local\tbar.local\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &VolumesHook{Dir: t.TempDir(), NodeHosts: nodeHosts}
			p := testPod(corev1.RestartPolicyAlways, "busybox")
			p.Spec.HostAliases, p.Spec.HostNetwork = aliases, tt.hostNetwork
			s := NewState(p)
			s.Sandbox = &Sandbox{IPs: []string{"10.244.1.7"}}
			if err := h.etcFiles(s); err != nil {
				t.Fatal(err)
			}
			if got := read(t, s.EtcMounts[0].Source); got != tt.want {
				t.Errorf("hosts\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
