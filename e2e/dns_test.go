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
  hostAliases:
  - ip: 192.0.2.77
    hostnames: [alias.example, alias2.example]
  dnsConfig:
    options:
    - {name: timeout, value: "2"}
  containers:
  - name: client
    image: busybox
    command: ["sleep", "3600"]
`

// dnsRecordsManifest is what the spec's table is asked about on the
// running cluster: a headless Service with a StatefulSet's pod db-0 (the
// controller gives it hostname db-0 and subdomain db; its dnsPolicy None
// with a dnsConfig of its own), a ClusterIP Service with a named port, an
// ExternalName Service.
const dnsRecordsManifest = `apiVersion: v1
kind: Service
metadata:
  name: db
spec:
  clusterIP: None
  selector: {app: db}
  ports:
  - {name: pg, port: 5432, protocol: TCP}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 1
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      terminationGracePeriodSeconds: 1
      dnsPolicy: None
      dnsConfig:
        nameservers: [192.0.2.99]
        searches: [example.test]
        options:
        - {name: ndots, value: "1"}
      containers:
      - name: db
        image: busybox
        command: ["sleep", "3600"]
        ports:
        - {name: pg, containerPort: 5432}
---
apiVersion: v1
kind: Service
metadata:
  name: webnamed
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 80, protocol: TCP}
---
apiVersion: v1
kind: Service
metadata:
  name: ext
spec:
  type: ExternalName
  externalName: www.example.test
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
	// skiff-dns creates the Service beside serving; /ready does not wait
	// for it.
	harness.Poll(t, 30*time.Second, "the kube-dns Service", func() (bool, string) {
		svc, err := c.client.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return svc.Spec.ClusterIP == clusterDNS, svc.Spec.ClusterIP
	})
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
	writeFile(t, manifest, webRS+"---\n"+dnsClientPod+"---\n"+dnsRecordsManifest)
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
		!strings.Contains(resolv, "nameserver "+clusterDNS) || !strings.Contains(resolv, "options ndots:5 timeout:2") {
		t.Fatalf("the pod's resolv.conf (ClusterFirst, dnsConfig option timeout:2): %v\n%s", err, resolv)
	}
	client, err := c.client.CoreV1().Pods("default").Get(ctx, "client", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := c.inPod(t, "client", "cat /etc/hosts")
	if err != nil || !hasLine(hosts, client.Status.PodIP+"\tclient") || !hasLine(hosts, "192.0.2.77\talias.example\talias2.example") {
		t.Fatalf("the pod's /etc/hosts (its name, its hostAliases): %v\n%s", err, hosts)
	}
	c.checkRecords(t, client)

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

// checkRecords asks skiff-dns, through the kube-dns Service address,
// the spec's table of names about the running cluster's Services and
// pods (dnsRecordsManifest, the web ReplicaSet and the client pod), and
// checks db-0's own resolv.conf (dnsPolicy None) and /etc/hosts (its
// hostname.subdomain FQDN).
func (c *cluster) checkRecords(t *testing.T, client *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	var db *corev1.Pod
	harness.Poll(t, 3*time.Minute, "db-0 ready", func() (bool, string) {
		var err error
		if db, err = c.client.CoreV1().Pods("default").Get(ctx, "db-0", metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		return podReady(db) && db.Status.PodIP != "", string(db.Status.Phase)
	})
	if out, err := c.inPod(t, "db-0", "cat /etc/resolv.conf"); err != nil || out != "search example.test\nnameserver 192.0.2.99\noptions ndots:1" {
		t.Errorf("db-0's resolv.conf (dnsPolicy None with a dnsConfig): %v\n%q", err, out)
	}
	if out, err := c.inPod(t, "db-0", "cat /etc/hosts"); err != nil || !hasLine(out, db.Status.PodIP+"\tdb-0.db.default.svc.cluster.local\tdb-0") {
		t.Errorf("db-0's /etc/hosts (hostname and subdomain): %v\n%s", err, out)
	}

	ask := func(name string, qtype uint16) (*dns.Msg, error) {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), qtype)
		r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, clusterDNS+":53")
		return r, err
	}
	// The endpoints of db and webnamed come from the endpointslice
	// controller; wait for them.
	harness.Poll(t, time.Minute, "db-0.db.default.svc.cluster.local", func() (bool, string) {
		r, err := ask("db-0.db.default.svc.cluster.local", dns.TypeA)
		if err != nil {
			return false, err.Error()
		}
		return len(dnsAnswers(r)) == 1, r.String()
	})
	webIP, namedIP := c.clusterIP(t, "web"), c.clusterIP(t, "webnamed")
	webRev, _ := dns.ReverseAddr(webIP)
	dbRev, _ := dns.ReverseAddr(db.Status.PodIP)
	dashed := strings.ReplaceAll(client.Status.PodIP, ".", "-")
	for _, tt := range []struct {
		qname string
		qtype uint16
		rcode int
		want  []string
	}{
		{"web.default.svc.cluster.local", dns.TypeA, dns.RcodeSuccess, []string{webIP}},
		{"webnamed.default.svc.cluster.local", dns.TypeA, dns.RcodeSuccess, []string{namedIP}},
		{"web.default.svc.cluster.local", dns.TypeAAAA, dns.RcodeSuccess, nil}, // NODATA
		{"_http._tcp.webnamed.default.svc.cluster.local", dns.TypeSRV, dns.RcodeSuccess, []string{"80 webnamed.default.svc.cluster.local."}},
		{"_nope._tcp.webnamed.default.svc.cluster.local", dns.TypeSRV, dns.RcodeNameError, nil},
		{"db.default.svc.cluster.local", dns.TypeA, dns.RcodeSuccess, []string{db.Status.PodIP}},
		{"db-0.db.default.svc.cluster.local", dns.TypeA, dns.RcodeSuccess, []string{db.Status.PodIP}},
		{"_pg._tcp.db.default.svc.cluster.local", dns.TypeSRV, dns.RcodeSuccess, []string{"5432 db-0.db.default.svc.cluster.local."}},
		{"ext.default.svc.cluster.local", dns.TypeCNAME, dns.RcodeSuccess, []string{"CNAME www.example.test."}},
		{"ext.default.svc.cluster.local", dns.TypeA, dns.RcodeSuccess, []string{"192.0.2.10", "CNAME www.example.test."}},
		{dashed + ".default.pod.cluster.local", dns.TypeA, dns.RcodeSuccess, []string{client.Status.PodIP}},
		{webRev, dns.TypePTR, dns.RcodeSuccess, []string{"PTR web.default.svc.cluster.local."}},
		{dbRev, dns.TypePTR, dns.RcodeSuccess, []string{"PTR db-0.db.default.svc.cluster.local."}},
		{"nosuch.default.svc.cluster.local", dns.TypeA, dns.RcodeNameError, nil},
		{"web.nosuchns.svc.cluster.local", dns.TypeA, dns.RcodeNameError, nil},
		{"kubernetes.default.svc.cluster.local", dns.TypeA, dns.RcodeSuccess, []string{"10.96.0.1"}},
	} {
		r, err := ask(tt.qname, tt.qtype)
		if err != nil {
			t.Errorf("%s %s: %v", dns.TypeToString[tt.qtype], tt.qname, err)
			continue
		}
		got := dnsAnswers(r)
		if r.Rcode != tt.rcode || strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s %s: %s %q, want %s %q", dns.TypeToString[tt.qtype], tt.qname,
				dns.RcodeToString[r.Rcode], got, dns.RcodeToString[tt.rcode], tt.want)
			continue
		}
		if len(tt.want) == 0 && (len(r.Ns) == 0 || r.Ns[0].Header().Rrtype != dns.TypeSOA) {
			t.Errorf("%s %s: no SOA with the negative answer:\n%s", dns.TypeToString[tt.qtype], tt.qname, r)
		}
	}
}

// dnsAnswers are r's answers, sorted, as the table writes them.
func dnsAnswers(r *dns.Msg) []string {
	var out []string
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			out = append(out, rr.A.String())
		case *dns.SRV:
			out = append(out, fmt.Sprintf("%d %s", rr.Port, rr.Target))
		case *dns.CNAME:
			out = append(out, "CNAME "+rr.Target)
		case *dns.PTR:
			out = append(out, "PTR "+rr.Ptr)
		default:
			out = append(out, rr.String())
		}
	}
	sort.Strings(out)
	return out
}

// hasLine reports whether out has line as one of its lines.
func hasLine(out, line string) bool {
	for _, l := range strings.Split(out, "\n") {
		if l == line {
			return true
		}
	}
	return false
}
