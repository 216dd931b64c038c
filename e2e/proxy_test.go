package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"skiff.dev/kubelet/test/harness"
	proxyapp "skiff.dev/proxy/app"
	"skiff.dev/proxy/pkg/netsafety"
)

// proxyHealthz is where the test's proxy serves /healthz; the namespace is
// the test's own, so upstream's port is free.
const proxyHealthz = "127.0.0.1:10256"

// startProxy runs skiff-proxy as system:kube-proxy, with the egress guard
// allowing allow (nil: the default, the kubelet's bridge only); customize
// may change its options last.
func (c *cluster) startProxy(t *testing.T, allow []string, customize ...func(*proxyapp.Options)) (stop func()) {
	t.Helper()
	o := proxyapp.NewOptions()
	o.Client.Kubeconfig = filepath.Join(c.ts.Dir, "proxy.kubeconfig")
	o.HostnameOverride = nodeName
	o.ClusterCIDR, o.ServiceClusterIPRange = clusterCIDR, serviceCIDR
	o.HealthzBindAddress, o.MetricsBindAddress = proxyHealthz, "127.0.0.1:0"
	if allow != nil {
		o.EgressGuardInterfaces = allow
	}
	for _, f := range customize {
		f(o)
	}
	cfg, err := proxyapp.Setup(context.Background(), o)
	if err != nil {
		t.Fatalf("proxy setup: %v", err)
	}
	return startDaemon(t, "proxy", func(ctx context.Context) error { return proxyapp.Run(ctx, cfg) })
}

// waitProxyHealthy polls the proxy's /healthz until it answers 200.
func (c *cluster) waitProxyHealthy(t *testing.T) {
	t.Helper()
	harness.Poll(t, 30*time.Second, "the proxy's /healthz", func() (bool, string) {
		resp, err := http.Get("http://" + proxyHealthz + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

// cleanupProxy runs the proxy as `skiff-proxy --cleanup` does.
func (c *cluster) cleanupProxy(t *testing.T) {
	t.Helper()
	o := proxyapp.NewOptions()
	o.Cleanup = true
	o.HostnameOverride = nodeName
	cfg, err := proxyapp.Setup(context.Background(), o)
	if err != nil {
		t.Fatalf("proxy --cleanup setup: %v", err)
	}
	if err := proxyapp.Run(context.Background(), cfg); err != nil {
		t.Fatalf("proxy --cleanup: %v", err)
	}
}

// installServiceRoute routes the service range locally, as the proxy does
// first at its start, without any proxy rule.
func installServiceRoute(t *testing.T) {
	t.Helper()
	_, cidr, err := net.ParseCIDR(serviceCIDR)
	if err != nil {
		t.Fatal(err)
	}
	if err := netsafety.EnsureServiceRoute(cidr); err != nil {
		t.Fatalf("routing %s locally: %v", serviceCIDR, err)
	}
	if ok, err := netsafety.HasServiceRoute(cidr); !ok || err != nil {
		t.Fatal(fmt.Errorf("no service route after EnsureServiceRoute: %v", err))
	}
}
