package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/vishvananda/netns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dnsapp "skiff.dev/dns/app"
	kubeletapp "skiff.dev/kubelet/app"
	"skiff.dev/kubelet/test/harness"
)

// clusterDNS is the kube-dns Service's address: the tenth of the
// service range.
const clusterDNS = "10.96.0.10"

// startUpstreamResolver runs, on loopback in the test's namespace, the
// resolver standing for the node's: A queries under example.test. get
// 192.0.2.10, everything else NXDOMAIN.
func startUpstreamResolver(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if q := r.Question[0]; dns.IsSubDomain("example.test.", q.Name) {
			if q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.ParseIP("192.0.2.10")})
			}
		} else {
			m.Rcode = dns.RcodeNameError
		}
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

// startDNS runs skiff-dns as system:skiff-dns with the built-in Corefile
// on port 53 of the node, forwarding to upstream; it returns its /ready
// address. customize may change its options last.
func (c *cluster) startDNS(t *testing.T, upstream string, customize ...func(*dnsapp.Options)) (ready string, stop func()) {
	t.Helper()
	o := dnsapp.NewOptions()
	o.Client.Kubeconfig = filepath.Join(c.ts.Dir, "dns.kubeconfig")
	o.HostnameOverride = nodeName
	o.AdvertiseAddress = nodeIP
	o.ClusterIP = clusterDNS
	o.Upstream = upstream
	o.HealthBindAddress, o.ReadyBindAddress, o.MetricsBindAddress = "127.0.0.1:8080", "127.0.0.1:8181", "127.0.0.1:9153"
	for _, f := range customize {
		f(o)
	}
	cfg, err := dnsapp.Setup(context.Background(), o)
	if err != nil {
		t.Fatalf("skiff-dns setup: %v", err)
	}
	return o.ReadyBindAddress, startDaemon(t, "skiff-dns", func(ctx context.Context) error { return dnsapp.Run(ctx, cfg) })
}

// inPod runs a shell command in pod through the real kubectl exec.
func (c *cluster) inPod(t *testing.T, pod, command string) (string, error) {
	t.Helper()
	out, err := c.kubectlErr("exec", pod, "--", "sh", "-c", command)
	out = strings.TrimSpace(out)
	if err != nil && !strings.Contains(out, "command terminated with exit code") {
		t.Fatalf("kubectl exec %s: %v: %s", pod, err, out)
	}
	if err != nil {
		return out, fmt.Errorf("%s", out)
	}
	return out, nil
}

const dnsClientPod = `apiVersion: v1
kind: Pod
metadata:
  name: client
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: client
    image: busybox
    command: ["sleep", "3600"]
`

// TestDNS is issue 24 on a running cluster: skiff-dns on the node behind
// the kube-dns Service, the kubelet writing ClusterFirst pods'
// resolv.conf, and from inside a real pod: a short name through the
// search path, a Service by its name, a deleted Service's name gone
// within its TTL, an outside name through forward (to the test's own
// resolver on loopback).
func TestDNS(t *testing.T) {
	c := startClusterWith(t, func(o *kubeletapp.Options) { o.ClusterDNS = []string{clusterDNS} })
	ctx := context.Background()
	stopProxy := c.startProxy(t, nil)
	// The proxy's chains, egress guard and service route stay in the
	// namespace after it stops; the tests after this one start without
	// them, as TestServices leaves it.
	t.Cleanup(func() {
		stopProxy()
		c.cleanupProxy(t)
	})
	c.waitProxyHealthy(t)
	ready, stopDNS := c.startDNS(t, startUpstreamResolver(t))

	harness.Poll(t, time.Minute, "skiff-dns /ready", func() (bool, string) {
		resp, err := http.Get("http://" + ready + "/ready")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	svc, err := c.client.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != clusterDNS {
		t.Fatalf("kube-dns Service: %v %v", svc, err)
	}
	// From the node, through the Service address (the proxy's DNAT to
	// the node's port 53).
	harness.Poll(t, time.Minute, "kubernetes.default through "+clusterDNS, func() (bool, string) {
		m := new(dns.Msg)
		m.SetQuestion("kubernetes.default.svc.cluster.local.", dns.TypeA)
		r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, clusterDNS+":53")
		if err != nil {
			return false, err.Error()
		}
		return len(r.Answer) == 1 && r.Answer[0].(*dns.A).A.String() == "10.96.0.1", r.String()
	})

	manifest := filepath.Join(c.dir, "dns.yaml")
	writeFile(t, manifest, webRS+"---\n"+dnsClientPod)
	c.kubectl(t, "apply", "-f", manifest)
	c.kubectl(t, "expose", "rs", "web", "--port", "80", "--target-port", "80")
	webPods := c.readyPods(t, 2)
	harness.Poll(t, 3*time.Minute, "the client pod running", func() (bool, string) {
		p, err := c.client.CoreV1().Pods("default").Get(ctx, "client", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase)
	})

	resolv, err := c.inPod(t, "client", "cat /etc/resolv.conf")
	if err != nil || !strings.Contains(resolv, "search default.svc.cluster.local svc.cluster.local cluster.local") ||
		!strings.Contains(resolv, "nameserver "+clusterDNS) || !strings.Contains(resolv, "options ndots:5") {
		t.Fatalf("the pod's resolv.conf: %v\n%s", err, resolv)
	}

	// busybox's nslookup (1.35, its own resolver) applies the search path
	// to dotless names only: "kubernetes" goes through it, the dotted
	// "kubernetes.default" does not (as on any cluster; upstream's docs
	// use busybox 1.28 for that). libc's resolver, which wget uses,
	// applies ndots:5 and resolves "web.default" through the search path.
	// busybox's nslookup asks under every search domain and exits 1 when
	// any of them is NXDOMAIN: what counts is the answer it prints.
	for _, name := range []string{"kubernetes", "kubernetes.default.svc.cluster.local"} {
		out, _ := c.inPod(t, "client", "nslookup "+name)
		if !resolvedTo(out, "kubernetes.default.svc.cluster.local", "10.96.0.1") {
			t.Fatalf("nslookup %s in the pod:\n%s", name, out)
		}
		t.Logf("nslookup %s:\n%s", name, out)
	}

	// http://web and http://web.default reach the Service by name.
	names := map[string]bool{}
	for _, p := range webPods {
		names[p.Name] = true
	}
	for _, url := range []string{"http://web", "http://web.default"} {
		harness.Poll(t, 30*time.Second, "wget "+url+" from the pod", func() (bool, string) {
			body, err := c.inPod(t, "client", "timeout 3 wget -q -O - "+url)
			if err != nil {
				return false, err.Error()
			}
			return names[body], body
		})
	}

	// An outside name goes to the node's resolver (the test's own).
	if out, _ := c.inPod(t, "client", "nslookup www.example.test"); !resolvedTo(out, "www.example.test", "192.0.2.10") {
		t.Fatalf("nslookup www.example.test:\n%s", out)
	}

	// Figures: queries from the client pod's network namespace through
	// the Service address (docs/benchmarks.md).
	client, err := c.client.CoreV1().Pods("default").Get(ctx, "client", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, qname := range []string{"kubernetes.default.svc.cluster.local.", "www.example.test."} {
		qps, p50, p99 := c.queryFromPod(t, client, qname, 2, 2000)
		t.Logf("from a pod through %s:53, %s: %.0f queries/s, p50 %v, p99 %v (2 clients, 2000 queries each)", clusterDNS, qname, qps, p50, p99)
	}

	// A deleted Service's name is gone within its TTL.
	webIP := c.clusterIP(t, "web")
	if out, _ := c.inPod(t, "client", "nslookup web"); !resolvedTo(out, "web.default.svc.cluster.local", webIP) {
		t.Fatalf("nslookup web:\n%s", out)
	}
	c.kubectl(t, "delete", "service", "web")
	deleted := time.Now()
	harness.Poll(t, 45*time.Second, "web's name gone", func() (bool, string) {
		out, _ := c.inPod(t, "client", "nslookup web")
		return !resolvedTo(out, "web.default.svc.cluster.local", webIP) && strings.Contains(out, "can't find web.default.svc.cluster.local: NXDOMAIN"), out
	})
	if took := time.Since(deleted); took > 31*time.Second {
		t.Errorf("web's name went %v after the delete, past its 30 s TTL", took)
	}

	// A clean stop takes this instance out of the Service.
	stopDNS()
	if _, err := c.client.DiscoveryV1().EndpointSlices("kube-system").Get(ctx, dnsapp.SliceName("kube-dns", nodeName), metav1.GetOptions{}); err == nil {
		t.Errorf("skiff-dns's EndpointSlice is still there after its stop")
	}
}

// queryFromPod sends n A queries for qname from each of clients UDP
// sockets opened in pod's network namespace to the cluster DNS, and
// returns the rate and the p50 and p99 latency.
func (c *cluster) queryFromPod(t *testing.T, pod *corev1.Pod, qname string, clients, n int) (float64, time.Duration, time.Duration) {
	t.Helper()
	podNS, err := netns.GetFromPath(filepath.Join(c.dir, "netns", "skiff-"+string(pod.UID)))
	if err != nil {
		t.Fatalf("the pod's network namespace: %v", err)
	}
	defer podNS.Close()
	conns := make([]*dns.Conn, clients)
	func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		self, err := netns.Get()
		if err != nil {
			t.Fatal(err)
		}
		defer self.Close()
		if err := netns.Set(podNS); err != nil {
			t.Fatal(err)
		}
		for i := range conns {
			conns[i], err = dns.Dial("udp", clusterDNS+":53")
			if err != nil {
				break
			}
		}
		if err2 := netns.Set(self); err2 != nil {
			t.Fatalf("back to the node's namespace: %v", err2)
		}
		if err != nil {
			t.Fatalf("a socket in the pod's namespace: %v", err)
		}
	}()
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i, co := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer co.Close()
			m := new(dns.Msg)
			m.SetQuestion(qname, dns.TypeA)
			for j := 0; j < n; j++ {
				m.Id = dns.Id()
				t0 := time.Now()
				_ = co.SetDeadline(t0.Add(2 * time.Second))
				if err := co.WriteMsg(m); err != nil {
					t.Errorf("query: %v", err)
					return
				}
				r, err := co.ReadMsg()
				if err != nil || len(r.Answer) == 0 {
					t.Errorf("answer: %v %v", err, r)
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) == 0 {
		t.Fatal("no answers")
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return float64(len(all)) / elapsed.Seconds(), all[len(all)/2], all[len(all)*99/100]
}

// resolvedTo reports whether busybox nslookup's output has name with
// address addr.
func resolvedTo(out, name, addr string) bool {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.TrimSpace(strings.TrimPrefix(l, "Name:")) == name && strings.HasPrefix(l, "Name:") {
			for _, next := range lines[i+1:] {
				if !strings.HasPrefix(next, "Address") {
					break
				}
				if strings.TrimSpace(next[strings.Index(next, ":")+1:]) == addr {
					return true
				}
			}
		}
	}
	return false
}
