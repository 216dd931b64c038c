package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/proxy/pkg/healthcheck"
	"skiff.dev/proxy/pkg/netnstest"
	"skiff.dev/proxy/pkg/netsafety"
)

func TestMain(m *testing.M) { netnstest.Main(m) }

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(*Options)
		wantErr string
	}{
		{name: "defaults", mod: func(*Options) {}},
		{name: "bad cluster CIDR", mod: func(o *Options) { o.ClusterCIDR = "10.244.0.0" }, wantErr: "--cluster-cidr"},
		{name: "IPv6 service range", mod: func(o *Options) { o.ServiceClusterIPRange = "fd00::/108" }, wantErr: "--service-cluster-ip-range"},
		{name: "masquerade bit", mod: func(o *Options) { o.MasqueradeBit = 32 }, wantErr: "--iptables-masquerade-bit"},
		{name: "min above sync period", mod: func(o *Options) { o.MinSyncPeriod = time.Hour }, wantErr: "--min-sync-period"},
		{name: "healthz address", mod: func(o *Options) { o.HealthzBindAddress = "localhost" }, wantErr: "--healthz-bind-address"},
		{name: "guard without interfaces", mod: func(o *Options) { o.EgressGuardInterfaces = nil }, wantErr: "--egress-guard"},
		{name: "guard off without interfaces", mod: func(o *Options) { o.EgressGuard, o.EgressGuardInterfaces = false, nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			tt.mod(o)
			err := o.Validate()
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate = %v, want an error naming %s", err, tt.wantErr)
			}
		})
	}
}

func save(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, table := range []string{"nat", "filter"} {
		out, err := exec.Command("iptables-save", "-t", table).CombinedOutput()
		if err != nil {
			t.Fatalf("iptables-save: %v: %s", err, out)
		}
		b.Write(out)
	}
	return b.String()
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDaemon runs skiff-proxy as system:kube-proxy against a real API
// server, in a network namespace of its own: the traffic safety is in
// place, hand-written EndpointSlices become rules, a Service that cannot
// be programmed gets a Warning event while the others are programmed,
// /healthz and /metrics answer, and --cleanup removes everything.
func TestDaemon(t *testing.T) {
	netnstest.Require(t)
	// The namespace has only loopback: the API server advertises a
	// documentation address (the kubernetes Service's endpoint, DNATed to
	// inside this namespace only).
	ts := testserver.Start(t, func(so *server.Options) { so.AdvertiseAddress = "192.0.2.10" })
	client := ts.Client
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	o := NewOptions()
	o.Client.Kubeconfig = filepath.Join(ts.Dir, "proxy.kubeconfig")
	o.HostnameOverride = "node-1"
	o.HealthzBindAddress, o.MetricsBindAddress = "127.0.0.1:0", "127.0.0.1:0"
	o.MinSyncPeriod = 100 * time.Millisecond
	cfg, err := Setup(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	defer stop()

	web := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("web")}}},
	}
	web, err = client.CoreV1().Services("default").Create(ctx, web, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bad"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	if bad, err = client.CoreV1().Services("default").Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server validates Services, so the bad input comes through
	// a slice whose port is out of range (a slice of a Service that does
	// exist).
	_, err = client.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-abc", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.244.0.5"}, NodeName: ptr.To("node-1"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
			{Addresses: []string{"10.244.1.5"}, NodeName: ptr.To("node-2"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "bad-abc", Labels: map[string]string{discoveryv1.LabelServiceName: "bad"}},
		AddressType: discoveryv1.AddressTypeIPv6,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80)}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"fd00::5"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	poll(t, "the rules of default/web", func() bool {
		s := save(t)
		return strings.Contains(s, "--to-destination 10.244.0.5:8080") && strings.Contains(s, "--to-destination 10.244.1.5:8080") &&
			strings.Contains(s, "-d "+web.Spec.ClusterIP+"/32")
	})
	poll(t, "the REJECT of default/bad", func() bool {
		return strings.Contains(save(t), `-d `+bad.Spec.ClusterIP+`/32 -p tcp -m comment --comment "default/bad:http has no endpoints"`)
	})
	poll(t, "the Warning event on the skipped slice", func() bool {
		ev, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range ev.Items {
			if e.InvolvedObject.Name == "bad-abc" && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "IPv4 only") {
				return true
			}
		}
		return false
	})

	// Traffic safety.
	if ok, err := netsafety.HasServiceRoute(mustCIDR(o.ServiceClusterIPRange)); err != nil || !ok {
		t.Fatalf("service route: %v, %v", ok, err)
	}
	if !strings.Contains(save(t), "-A FORWARD -m comment --comment \"skiff egress guard\" -j "+netsafety.GuardChain) {
		t.Fatal("FORWARD does not jump to the egress guard")
	}

	// Health and metrics.
	var code int
	var body string
	poll(t, "/healthz with a lastUpdated", func() bool {
		code, body = get(t, "http://"+cfg.HealthzServer.Addr()+"/healthz")
		var st healthcheck.Status
		return json.Unmarshal([]byte(body), &st) == nil && !st.LastUpdated.IsZero()
	})
	if code != http.StatusOK {
		t.Fatalf("/healthz = %d %q", code, body)
	}
	_, metrics := get(t, "http://"+cfg.MetricsServer.Addr()+"/metrics")
	for _, name := range []string{
		"kubeproxy_sync_proxy_rules_duration_seconds_count", "kubeproxy_sync_full_proxy_rules_duration_seconds_count",
		"kubeproxy_sync_partial_proxy_rules_duration_seconds", "kubeproxy_sync_proxy_rules_last_timestamp_seconds",
		`kubeproxy_sync_proxy_rules_iptables_total{table="nat"}`, `kubeproxy_sync_proxy_rules_iptables_total{table="filter"}`,
		"kubeproxy_network_programming_duration_seconds",
	} {
		if !strings.Contains(metrics, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}

	// Stop, then --cleanup.
	stop()
	if !strings.Contains(save(t), "SKIFF-SERVICES") {
		t.Fatal("stopping the daemon removed its rules; only --cleanup should")
	}
	co := NewOptions()
	co.Cleanup = true
	co.HostnameOverride = "node-1"
	ccfg, err := Setup(context.Background(), co)
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), ccfg); err != nil {
		t.Fatalf("--cleanup: %v", err)
	}
	if s := save(t); strings.Contains(s, "SKIFF-") || strings.Contains(s, "skiff") {
		t.Fatalf("iptables-save after --cleanup still names skiff:\n%s", s)
	}
	if _, err := netlink.LinkByName(netsafety.DummyInterface); err == nil || !errors.As(err, new(netlink.LinkNotFoundError)) {
		t.Fatalf("%s after --cleanup: %v", netsafety.DummyInterface, err)
	}
	if ok, _ := netsafety.HasServiceRoute(mustCIDR(o.ServiceClusterIPRange)); ok {
		t.Fatal("service route after --cleanup")
	}
	out, _ := exec.Command("ip", "route", "show", "proto", "115").CombinedOutput()
	if strings.TrimSpace(string(out)) != "" {
		t.Fatalf("routes of proto 115 after --cleanup: %s", out)
	}
	var _ kubernetes.Interface = client
}
