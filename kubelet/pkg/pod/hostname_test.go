package pod

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodHostname(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, tc := range []struct {
		name, podName, hostname, want string
	}{
		{"short name", "web-0", "", "web-0"},
		{"spec.hostname wins", "web-0", "db", "db"},
		{"63 characters stay", long, "", long},
		// Upstream's conformance test: a 69-character pod name.
		{"longer is cut to 63", long + "bbbbbb", "", long},
		{"a trailing dash goes", strings.Repeat("a", 62) + "-bbb", "", strings.Repeat("a", 62)},
		{"trailing dashes and dots go", strings.Repeat("a", 60) + "-.-x.y", "", strings.Repeat("a", 60)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tc.podName}, Spec: corev1.PodSpec{Hostname: tc.hostname}}
			if got := podHostname(p); got != tc.want {
				t.Errorf("podHostname = %q (%d), want %q (%d)", got, len(got), tc.want, len(tc.want))
			}
		})
	}
}

// TestEtcHostsSubdomain: a pod with spec.subdomain (a StatefulSet's) gets
// its FQDN in /etc/hosts, "<ip> <hostname>.<subdomain>.<ns>.svc.<domain>
// <hostname>", as upstream's managedHostsFileContent; every pod off the
// host network gets /etc/hostname with its hostname.
func TestEtcHostsSubdomain(t *testing.T) {
	const header = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
	tests := []struct {
		name                string
		hostname, subdomain string
		hostNetwork         bool
		wantHosts           string
		wantHostname        string // "": no /etc/hostname mount
	}{
		{name: "no subdomain", wantHosts: header + "10.244.1.7\tweb-0\n", wantHostname: "web-0\n"},
		{name: "subdomain", subdomain: "nginx",
			wantHosts: header + "10.244.1.7\tweb-0.nginx.ns1.svc.cluster.local\tweb-0\n", wantHostname: "web-0\n"},
		{name: "hostname and subdomain", hostname: "db", subdomain: "nginx",
			wantHosts: header + "10.244.1.7\tdb.nginx.ns1.svc.cluster.local\tdb\n", wantHostname: "db\n"},
		{name: "host network keeps the node's hostname", subdomain: "nginx", hostNetwork: true, wantHosts: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &VolumesHook{Dir: t.TempDir(), DNS: DNSConfigurer{ClusterDomain: "cluster.local"}}
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns1", UID: "uid-1"},
				Spec: corev1.PodSpec{Hostname: tt.hostname, Subdomain: tt.subdomain, HostNetwork: tt.hostNetwork}}
			s := NewState(p)
			s.Sandbox = &Sandbox{IPs: []string{"10.244.1.7"}}
			if err := h.etcFiles(s); err != nil {
				t.Fatal(err)
			}
			mounts := map[string]string{}
			for _, m := range s.EtcMounts {
				mounts[m.Destination] = m.Source
			}
			if src, ok := mounts["/etc/hosts"]; ok != (tt.wantHosts != "") || ok && read(t, src) != tt.wantHosts {
				t.Errorf("/etc/hosts (mounted %v):\n%q\nwant\n%q", ok, readIf(t, src), tt.wantHosts)
			}
			if src, ok := mounts["/etc/hostname"]; ok != (tt.wantHostname != "") || ok && read(t, src) != tt.wantHostname {
				t.Errorf("/etc/hostname (mounted %v): %q, want %q", ok, readIf(t, src), tt.wantHostname)
			}
		})
	}
}

func readIf(t *testing.T, p string) string {
	if p == "" {
		return ""
	}
	return read(t, p)
}
