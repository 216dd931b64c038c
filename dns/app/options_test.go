package app

import (
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Options)
		wantErr string
	}{
		{name: "defaults with an address", change: func(o *Options) {}},
		{name: "no advertise address", change: func(o *Options) { o.AdvertiseAddress = "" }, wantErr: "--advertise-address"},
		{name: "no advertise address without the Service", change: func(o *Options) { o.AdvertiseAddress, o.RegisterService = "", false }},
		{name: "bad cluster IP", change: func(o *Options) { o.ClusterIP = "10.96.0" }, wantErr: "--cluster-ip"},
		{name: "bad domain", change: func(o *Options) { o.ClusterDomain = "Cluster_Local" }, wantErr: "--cluster-domain"},
		{name: "bad port", change: func(o *Options) { o.Port = 0 }, wantErr: "--dns-port"},
		{name: "bad metrics address", change: func(o *Options) { o.MetricsBindAddress = "9153" }, wantErr: "--metrics-bind-address"},
		{name: "lease duration not whole seconds", change: func(o *Options) { o.LeaseDuration = 1500 * time.Millisecond }, wantErr: "--lease-duration"},
		{name: "renewal not shorter than the lease", change: func(o *Options) { o.LeaseRenewInterval = o.LeaseDuration }, wantErr: "--lease-renew-interval"},
		{name: "no renewal", change: func(o *Options) { o.LeaseRenewInterval = 0 }, wantErr: "--lease-renew-interval"},
		{name: "missing Corefile", change: func(o *Options) { o.Conf = "/nonexistent/Corefile" }, wantErr: "--conf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			o.AdvertiseAddress = "192.0.2.1"
			tt.change(o)
			err := o.Validate()
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate() = %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

// TestDefaultCorefile: the built-in Corefile is k3s's, with the flags
// filled in, and names only plugins skiff-dns links.
func TestDefaultCorefile(t *testing.T) {
	o := NewOptions()
	o.Client.Kubeconfig = "/etc/skiff/dns.kubeconfig"
	got := DefaultCorefile(o)
	want := `.:53 {
    errors
    health :8080
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig /etc/skiff/dns.kubeconfig
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    kubeapi
    prometheus :9153
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance
}
`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	linked := map[string]bool{}
	for _, d := range Directives {
		linked[d] = true
	}
	for _, line := range strings.Split(got, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], ".") || f[0] == "}" || !strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "        ") {
			continue
		}
		if !linked[f[0]] {
			t.Errorf("the Corefile uses %q, which skiff-dns does not link", f[0])
		}
	}
}
