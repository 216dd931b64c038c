package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
)

const testNS = "records"

// world is what the records test writes to the API server: the
// endpoints are the test's, as the endpointslice controller would write
// them.
type world struct {
	web, db, ext *corev1.Service
}

func writeWorld(t testing.TB, c kubernetes.Interface) world {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mk := func(s *corev1.Service) *corev1.Service {
		t.Helper()
		out, err := c.CoreV1().Services(testNS).Create(ctx, s, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating Service %s: %v", s.Name, err)
		}
		return out
	}
	var w world
	w.web = mk(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{
			{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)},
			{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53},
		}},
	})
	w.db = mk(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{
			{Name: "pg", Protocol: corev1.ProtocolTCP, Port: 5432},
		}},
	})
	w.ext = mk(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.test"},
	})
	slice := func(svc, name string, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) {
		t.Helper()
		_, err := c.DiscoveryV1().EndpointSlices(testNS).Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				discoveryv1.LabelServiceName: svc, discoveryv1.LabelManagedBy: "records-test"}},
			AddressType: discoveryv1.AddressTypeIPv4, Endpoints: eps, Ports: ports,
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating EndpointSlice %s: %v", name, err)
		}
	}
	ep := func(ip, hostname string, ready bool) discoveryv1.Endpoint {
		e := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}
		if hostname != "" {
			e.Hostname = ptr.To(hostname)
		}
		return e
	}
	slice("web", "web-1", []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080)}},
		ep("10.244.0.5", "", true))
	// A StatefulSet's pods db-0 and db-1 (subdomain db), one not ready,
	// and a pod without a hostname.
	slice("db", "db-1", []discoveryv1.EndpointPort{{Name: ptr.To("pg"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](5432)}},
		ep("10.244.1.10", "db-0", true), ep("10.244.1.11", "db-1", false), ep("10.244.1.12", "", true))
	return w
}

func answers(r *dns.Msg) []string {
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
		case *dns.TXT:
			out = append(out, "TXT "+strings.Join(rr.Txt, " "))
		default:
			out = append(out, rr.String())
		}
	}
	sort.Strings(out)
	return out
}

// TestRecords asserts the names and answers of upstream's "Kubernetes
// DNS-Based Service Discovery" spec against skiff-dns on a real API
// server, as system:skiff-dns.
func TestRecords(t *testing.T) {
	ts := testserver.Start(t, nil)
	w := writeWorld(t, ts.Client)
	up := startUpstream(t)
	inst := startDNS(t, ts, up, nil)

	poll(t, 30*time.Second, "the web Service's A record", func() (bool, string) {
		r := exchange(t, inst.addr, "web.records.svc.cluster.local", dns.TypeA)
		return r.Rcode == dns.RcodeSuccess && len(r.Answer) == 1, r.String()
	})

	webIP := w.web.Spec.ClusterIP
	webRev, _ := dns.ReverseAddr(webIP)
	tests := []struct {
		name      string
		qname     string
		qtype     uint16
		wantRcode int
		want      []string
	}{
		{name: "ClusterIP Service A", qname: "web.records.svc.cluster.local", qtype: dns.TypeA, want: []string{webIP}},
		{name: "ClusterIP Service AAAA in an IPv4 cluster is NODATA", qname: "web.records.svc.cluster.local", qtype: dns.TypeAAAA, want: nil},
		{name: "SRV for a named TCP port", qname: "_http._tcp.web.records.svc.cluster.local", qtype: dns.TypeSRV, want: []string{"80 web.records.svc.cluster.local."}},
		{name: "SRV for a named UDP port", qname: "_dns._udp.web.records.svc.cluster.local", qtype: dns.TypeSRV, want: []string{"53 web.records.svc.cluster.local."}},
		{name: "SRV for a port the Service lacks is NXDOMAIN", qname: "_nope._tcp.web.records.svc.cluster.local", qtype: dns.TypeSRV, wantRcode: dns.RcodeNameError},
		{name: "headless Service A is its ready endpoints", qname: "db.records.svc.cluster.local", qtype: dns.TypeA, want: []string{"10.244.1.10", "10.244.1.12"}},
		{name: "headless pod by hostname.subdomain", qname: "db-0.db.records.svc.cluster.local", qtype: dns.TypeA, want: []string{"10.244.1.10"}},
		{name: "headless SRV names each ready endpoint", qname: "_pg._tcp.db.records.svc.cluster.local", qtype: dns.TypeSRV,
			want: []string{"5432 10-244-1-12.db.records.svc.cluster.local.", "5432 db-0.db.records.svc.cluster.local."}},
		{name: "ExternalName is a CNAME", qname: "ext.records.svc.cluster.local", qtype: dns.TypeCNAME, want: []string{"CNAME db.example.test."}},
		{name: "ExternalName A follows the CNAME upstream", qname: "ext.records.svc.cluster.local", qtype: dns.TypeA, want: []string{"192.0.2.10", "CNAME db.example.test."}},
		{name: "pod A record", qname: "10-244-3-4.records.pod.cluster.local", qtype: dns.TypeA, want: []string{"10.244.3.4"}},
		{name: "PTR of a Service's cluster IP", qname: webRev, qtype: dns.TypePTR, want: []string{"PTR web.records.svc.cluster.local."}},
		{name: "PTR of a headless endpoint with a hostname", qname: "10.1.244.10.in-addr.arpa.", qtype: dns.TypePTR, want: []string{"PTR db-0.db.records.svc.cluster.local."}},
		{name: "missing Service is NXDOMAIN", qname: "nosuch.records.svc.cluster.local", qtype: dns.TypeA, wantRcode: dns.RcodeNameError},
		{name: "missing namespace is NXDOMAIN", qname: "web.nosuchns.svc.cluster.local", qtype: dns.TypeA, wantRcode: dns.RcodeNameError},
		{name: "not-ready hostname is NXDOMAIN", qname: "db-1.db.records.svc.cluster.local", qtype: dns.TypeA, wantRcode: dns.RcodeNameError},
		{name: "schema version", qname: "dns-version.cluster.local", qtype: dns.TypeTXT, want: []string{"TXT 1.1.0"}},
		{name: "a name outside the cluster goes upstream", qname: "www.example.test", qtype: dns.TypeA, want: []string{"192.0.2.10"}},
		{name: "upstream's NXDOMAIN comes back", qname: "nosuch.invalid", qtype: dns.TypeA, wantRcode: dns.RcodeNameError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := exchange(t, inst.addr, tt.qname, tt.qtype)
			if r.Rcode != tt.wantRcode {
				t.Fatalf("rcode %s, want %s:\n%s", dns.RcodeToString[r.Rcode], dns.RcodeToString[tt.wantRcode], r)
			}
			if got := answers(r); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("answers %q, want %q:\n%s", got, tt.want, r)
			}
			inCluster := dns.IsSubDomain("cluster.local.", dns.Fqdn(tt.qname)) || dns.IsSubDomain("in-addr.arpa.", dns.Fqdn(tt.qname))
			if inCluster && (tt.wantRcode == dns.RcodeNameError || (tt.wantRcode == dns.RcodeSuccess && len(tt.want) == 0)) {
				// NXDOMAIN and NODATA carry the zone's SOA for negative
				// caching (RFC 2308).
				if len(r.Ns) == 0 || r.Ns[0].Header().Rrtype != dns.TypeSOA {
					t.Fatalf("no SOA in the authority section:\n%s", r)
				}
			}
		})
	}

	t.Run("TCP", func(t *testing.T) {
		m := new(dns.Msg)
		m.SetQuestion("web.records.svc.cluster.local.", dns.TypeA)
		r, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, inst.addr)
		if err != nil || len(r.Answer) != 1 {
			t.Fatalf("over TCP: %v %v", err, r)
		}
	})

	t.Run("a deleted Service's name goes within its TTL", func(t *testing.T) {
		r := exchange(t, inst.addr, "ext.records.svc.cluster.local", dns.TypeCNAME)
		if len(r.Answer) != 1 {
			t.Fatalf("no CNAME before the delete: %v", r)
		}
		ttl := time.Duration(r.Answer[0].Header().Ttl) * time.Second
		deleted := time.Now()
		if err := ts.Client.CoreV1().Services(testNS).Delete(context.Background(), "ext", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, ttl+5*time.Second, "NXDOMAIN for the deleted Service", func() (bool, string) {
			r := exchange(t, inst.addr, "ext.records.svc.cluster.local", dns.TypeCNAME)
			return r.Rcode == dns.RcodeNameError, r.String()
		})
		if took := time.Since(deleted); took > ttl+time.Second {
			t.Errorf("the name went %v after the delete; its TTL was %v", took, ttl)
		}
	})
}

// TestForwardCaches: a name outside the cluster domain is asked upstream
// once and then answered from the cache.
func TestForwardCaches(t *testing.T) {
	ts := testserver.Start(t, nil)
	up := startUpstream(t)
	inst := startDNS(t, ts, up, nil)
	r := exchange(t, inst.addr, "cached.example.test", dns.TypeA)
	if len(r.Answer) != 1 {
		t.Fatalf("no answer: %v", r)
	}
	before := up.asked("cached.example.test")
	for i := 0; i < 5; i++ {
		if r := exchange(t, inst.addr, "cached.example.test", dns.TypeA); len(r.Answer) != 1 {
			t.Fatalf("no answer from the cache: %v", r)
		}
	}
	if after := up.asked("cached.example.test"); after != before {
		t.Fatalf("upstream asked %d more times; the cache should have answered", after-before)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHealthReadyMetrics: /health, /ready (once the kubernetes plugin
// has synced) and CoreDNS's own metrics.
func TestHealthReadyMetrics(t *testing.T) {
	ts := testserver.Start(t, nil)
	up := startUpstream(t)
	inst := startDNS(t, ts, up, nil)
	poll(t, 30*time.Second, "/ready", func() (bool, string) {
		code, body := httpGet(t, "http://"+inst.ready+"/ready")
		return code == http.StatusOK, body
	})
	poll(t, 10*time.Second, "/health", func() (bool, string) {
		code, body := httpGet(t, "http://"+inst.health+"/health")
		return code == http.StatusOK, body
	})
	// The registry is the process's: count what this test adds.
	_, before := httpGet(t, "http://"+inst.metrics+"/metrics")
	exchange(t, inst.addr, "kubernetes.default.svc.cluster.local", dns.TypeA)
	exchange(t, inst.addr, "metrics.example.test", dns.TypeA)
	exchange(t, inst.addr, "metrics.example.test", dns.TypeA) // from the cache
	_, body := httpGet(t, "http://"+inst.metrics+"/metrics")
	for _, want := range []string{"coredns_dns_requests_total", "coredns_dns_request_duration_seconds", "coredns_cache_hits_total", "coredns_kubernetes_"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	for _, m := range []struct {
		name string
		min  float64
	}{
		{"coredns_dns_requests_total", 3},
		{"coredns_dns_request_duration_seconds_count", 3},
		{"coredns_cache_hits_total", 1},
	} {
		if d := metricSum(body, m.name) - metricSum(before, m.name); d < m.min {
			t.Errorf("%s grew by %v over 3 queries, want at least %v", m.name, d, m.min)
		}
	}
}

// metricSum adds up the samples of name (all label sets) in a Prometheus
// text exposition.
func metricSum(body, name string) float64 {
	var sum float64
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		f := strings.Fields(line[strings.LastIndex(line, "}")+1:])
		if len(f) == 0 {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(f[0], &v); err == nil {
			sum += v
		}
	}
	return sum
}

// TestBadInput: garbage, a truncated message, an oversized EDNS0 buffer
// and a query for another zone are answered (or dropped) as CoreDNS does,
// and the server keeps answering.
func TestBadInput(t *testing.T) {
	ts := testserver.Start(t, nil)
	up := startUpstream(t)
	inst := startDNS(t, ts, up, nil)
	conn, err := net.Dial("udp", inst.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	m := new(dns.Msg)
	m.SetQuestion("kubernetes.default.svc.cluster.local.", dns.TypeA)
	packed, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{
		[]byte("not a dns message"),
		{0, 1},
		packed[:len(packed)-3],
		append(append([]byte{}, packed...), make([]byte, 3000)...),
	} {
		if _, err := conn.Write(bad); err != nil {
			t.Fatal(err)
		}
	}
	// A header-only message (no question) is a FORMERR.
	hdr := new(dns.Msg)
	hdr.Id = 7
	r, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(hdr, inst.addr)
	if err != nil {
		t.Fatalf("question-less query: %v", err)
	}
	if r.Rcode != dns.RcodeFormatError && r.Rcode != dns.RcodeRefused && r.Rcode != dns.RcodeServerFailure {
		t.Errorf("question-less query: rcode %s", dns.RcodeToString[r.Rcode])
	}
	big := new(dns.Msg)
	big.SetQuestion("web.default.svc.cluster.local.", dns.TypeA)
	big.SetEdns0(65535, false)
	if _, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(big, inst.addr); err != nil {
		t.Errorf("EDNS0 65535: %v", err)
	}
	// Other zones: a name outside the cluster domain and the PTR of an
	// address no Service or pod has go to forward (the kubernetes plugin
	// falls through for in-addr.arpa), and upstream's answer comes back.
	for _, q := range []struct {
		name  string
		qtype uint16
		rcode int
	}{
		{"www.other.test", dns.TypeA, dns.RcodeNameError},
		{"200.2.0.192.in-addr.arpa", dns.TypePTR, dns.RcodeNameError},
		{"mx.example.test", dns.TypeMX, dns.RcodeSuccess}, // upstream's NODATA
	} {
		asked := up.asked(q.name)
		r := exchange(t, inst.addr, q.name, q.qtype)
		if r.Rcode != q.rcode || len(r.Answer) != 0 {
			t.Errorf("%s %s: %s with %d answers, want upstream's %s with none", dns.TypeToString[q.qtype], q.name,
				dns.RcodeToString[r.Rcode], len(r.Answer), dns.RcodeToString[q.rcode])
		}
		if up.asked(q.name) == asked {
			t.Errorf("%s %s was not forwarded", dns.TypeToString[q.qtype], q.name)
		}
	}
	poll(t, 10*time.Second, "an answer after the bad input", func() (bool, string) {
		r := exchange(t, inst.addr, "kubernetes.default.svc.cluster.local", dns.TypeA)
		return r.Rcode == dns.RcodeSuccess && len(r.Answer) == 1, r.String()
	})
}

// TestTruncation: an answer too large for a UDP message without EDNS0
// comes back truncated (TC set) and whole over TCP.
func TestTruncation(t *testing.T) {
	ts := testserver.Start(t, nil)
	ctx := context.Background()
	if _, err := ts.Client.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "many"},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var eps []discoveryv1.Endpoint
	for i := 1; i <= 100; i++ {
		eps = append(eps, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.9.%d", i)}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	if _, err := ts.Client.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "many-1", Labels: map[string]string{discoveryv1.LabelServiceName: "many"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: eps,
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	inst := startDNS(t, ts, startUpstream(t), nil)
	const name = "many.default.svc.cluster.local."
	poll(t, 30*time.Second, "the headless Service's records", func() (bool, string) {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		r, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, inst.addr)
		if err != nil {
			return false, err.Error()
		}
		return len(r.Answer) == 100, fmt.Sprintf("%d answers", len(r.Answer))
	})
	r := exchange(t, inst.addr, name, dns.TypeA)
	r.Compress = true
	if !r.Truncated || r.Len() > dns.MinMsgSize {
		t.Errorf("over UDP without EDNS0: TC=%v, %d bytes, %d answers; want TC and at most %d bytes", r.Truncated, r.Len(), len(r.Answer), dns.MinMsgSize)
	}
}

// TestAPIServerGone: with the API server unreachable (the loopback
// proxy between skiff-dns and the API server cuts every connection, and
// each new one at once), /ready turns 503 naming kubeapi and the error, while skiff-dns
// keeps answering from the kubernetes plugin's informer caches, for names
// it was never asked before too; with the proxy open again /ready is 200
// and new Services resolve.
func TestAPIServerGone(t *testing.T) {
	ts := testserver.Start(t, nil)
	w := writeWorld(t, ts.Client)
	kubeconfig := filepath.Join(ts.Dir, "dns.kubeconfig")
	proxy := startTCPProxy(t, apiServerAddr(t, kubeconfig))
	via := kubeconfigVia(t, kubeconfig, proxy.addr)
	inst := startDNS(t, ts, startUpstream(t), func(o *Options) {
		o.RegisterService = false
		o.Client.Kubeconfig = via
	})
	readyz := func() (int, string) { return httpGet(t, "http://"+inst.ready+"/ready") }
	poll(t, 30*time.Second, "/ready", func() (bool, string) {
		code, body := readyz()
		return code == http.StatusOK, body
	})
	if r := exchange(t, inst.addr, "web.records.svc.cluster.local", dns.TypeA); len(r.Answer) != 1 {
		t.Fatalf("web before the API server went: %v", r)
	}

	proxy.close()
	// kubeapi asks every 5 s, with a 3 s timeout.
	poll(t, 15*time.Second, "/ready 503 naming the API server", func() (bool, string) {
		code, body := readyz()
		return code == http.StatusServiceUnavailable && strings.HasPrefix(body, "kubeapi: the API server's /readyz:"), fmt.Sprint(code, " ", body)
	})
	if _, body := readyz(); strings.Contains(body, "kubernetes") && !strings.Contains(body, "kubeapi") {
		t.Errorf("/ready blames the kubernetes plugin: %s", body)
	}
	t.Logf("/ready with the API server unreachable: %s", func() string { _, b := readyz(); return b }())
	r := exchange(t, inst.addr, "web.records.svc.cluster.local", dns.TypeA)
	if got := answers(r); len(got) != 1 || got[0] != w.web.Spec.ClusterIP {
		t.Errorf("web with the API server gone: %v\n%s", got, r)
	}
	r = exchange(t, inst.addr, "db-0.db.records.svc.cluster.local", dns.TypeA)
	if got := answers(r); len(got) != 1 || got[0] != "10.244.1.10" {
		t.Errorf("db-0.db with the API server gone: %v\n%s", got, r)
	}
	r = exchange(t, inst.addr, "_pg._tcp.db.records.svc.cluster.local", dns.TypeSRV)
	if len(r.Answer) != 2 {
		t.Errorf("SRV of db with the API server gone:\n%s", r)
	}
	if code, _ := readyz(); code != http.StatusServiceUnavailable {
		t.Errorf("/ready %d while the API server is still unreachable", code)
	}

	proxy.open()
	poll(t, 15*time.Second, "/ready 200 again", func() (bool, string) {
		code, body := readyz()
		return code == http.StatusOK, fmt.Sprint(code, " ", body)
	})
	// The watches resume (client-go's back-off is at most 30 s).
	svc, err := ts.Client.CoreV1().Services(testNS).Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "after"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, 45*time.Second, "a Service created after the API server came back", func() (bool, string) {
		r := exchange(t, inst.addr, "after.records.svc.cluster.local", dns.TypeA)
		got := answers(r)
		return len(got) == 1 && got[0] == svc.Spec.ClusterIP, r.String()
	})
}

// TestCorefileFile: --conf reads a Corefile of the operator's (here with
// a 7 s TTL and without kubeapi), and the reload plugin restarts the
// server when the file changes (the TTL becomes 9 s), on the same port.
func TestCorefileFile(t *testing.T) {
	ts := testserver.Start(t, nil)
	up := startUpstream(t)
	cf := newCorefileFile(t, ts, up)
	cf.write(7)
	inst := cf.start(t, ts, up)
	waitTTL(t, inst, 7, 30*time.Second)
	if code, body := httpGet(t, "http://"+cf.ready+"/ready"); code != http.StatusOK {
		t.Errorf("/ready of the file's Corefile: %d %s", code, body)
	}
	cf.write(9)
	waitTTL(t, inst, 9, 20*time.Second)
	poll(t, 10*time.Second, "/ready after the reload", func() (bool, string) {
		code, body := httpGet(t, "http://"+cf.ready+"/ready")
		return code == http.StatusOK, body
	})
}
