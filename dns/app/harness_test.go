package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/testserver"
)

// testNodeIP is the address the test instance advertises in its
// EndpointSlice; nothing is sent to it.
const testNodeIP = "192.0.2.53"

// upstream is a resolver on loopback standing for the node's resolvers:
// it answers A queries for names under example.test. with 192.0.2.10 and
// NXDOMAIN for everything else, and counts the queries it got for each
// name (CoreDNS's loop plugin sends its own probe, a random name, after
// a start).
type upstream struct {
	addr string

	mu    sync.Mutex
	names map[string]int
}

// asked is how many queries for name the upstream got.
func (u *upstream) asked(name string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.names[strings.ToLower(dns.Fqdn(name))]
}

func startUpstream(t testing.TB) *upstream {
	t.Helper()
	u := &upstream{names: map[string]int{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.addr = pc.LocalAddr().String()
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		u.mu.Lock()
		u.names[strings.ToLower(q.Name)]++
		u.mu.Unlock()
		if dns.IsSubDomain("example.test.", q.Name) {
			if q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: net.ParseIP("192.0.2.10")})
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
	return u
}

// freePort is a port that was free on 127.0.0.1 for both TCP and UDP a
// moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	for i := 0; i < 20; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		_ = l.Close()
		if err == nil {
			_ = pc.Close()
			return port
		}
	}
	t.Fatal("no port free for both TCP and UDP")
	return 0
}

// instance is a running skiff-dns.
type instance struct {
	cfg     *Config
	addr    string // DNS, UDP and TCP
	health  string
	ready   string
	metrics string
	stop    func()
}

// startDNS runs skiff-dns with the built-in Corefile, as system:skiff-dns,
// forwarding to up; customize may change the options first.
func startDNS(t testing.TB, ts *testserver.TestServer, up *upstream, customize func(*Options)) *instance {
	t.Helper()
	o := NewOptions()
	o.Client.Kubeconfig = filepath.Join(ts.Dir, "dns.kubeconfig")
	o.Port = freePort(t)
	o.HealthBindAddress = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	o.ReadyBindAddress = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	o.MetricsBindAddress = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	o.Upstream = up.addr
	o.AdvertiseAddress = testNodeIP
	o.HostnameOverride = "node-1"
	if customize != nil {
		customize(o)
	}
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background().WithName("skiff-dns")))
	cfg, err := Setup(ctx, o)
	if err != nil {
		cancel()
		t.Fatalf("skiff-dns setup: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	select {
	case <-cfg.Started():
	case err := <-done:
		cancel()
		t.Fatalf("skiff-dns: %v", err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("skiff-dns: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("skiff-dns did not stop within 30s")
		}
	}
	t.Cleanup(stop)
	return &instance{
		cfg: cfg, addr: fmt.Sprintf("127.0.0.1:%d", o.Port),
		health: o.HealthBindAddress, ready: o.ReadyBindAddress, metrics: o.MetricsBindAddress, stop: stop,
	}
}

// exchange sends one question over UDP.
func exchange(t testing.TB, addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	c := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s %s: %v", dns.TypeToString[qtype], name, err)
	}
	return r
}

// poll calls f until it returns true or the deadline passes.
func poll(t testing.TB, timeout time.Duration, what string, f func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, msg := f()
		last = msg
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out after %v waiting for %s: %s", timeout, what, last)
	}
}

// tcpProxy is a loopback TCP proxy to target that the test cuts (every
// connection through it, and each new one at once: the target is
// unreachable) and opens again. It keeps its listener while cut: a port
// given up and listened on again could meanwhile be taken by another
// process.
type tcpProxy struct {
	t      testing.TB
	target string
	addr   string
	ln     net.Listener

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startTCPProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &tcpProxy{t: t, target: target, addr: ln.Addr().String(), ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.pipe(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.close()
		p.wg.Wait()
	})
	return p
}

// open passes connections on again.
func (p *tcpProxy) open() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *tcpProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *tcpProxy) pipe(in net.Conn) {
	if !p.track(in) {
		in.Close()
		return
	}
	out, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(out) {
		if out != nil {
			out.Close()
		}
		in.Close()
		p.mu.Lock()
		delete(p.conns, in)
		p.mu.Unlock()
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
	in.Close()
	out.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}

// close cuts every connection, and each new one until open.
func (p *tcpProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// kubeconfigVia writes a copy of the kubeconfig at path whose server is
// addr (the same certificates: the proxy passes TLS through).
func kubeconfigVia(t testing.TB, path, addr string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + addr
	}
	out := filepath.Join(t.TempDir(), "via-proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// apiServerAddr is the host:port of the API server in the kubeconfig.
func apiServerAddr(t testing.TB, path string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			t.Fatal(err)
		}
		return u.Host
	}
	t.Fatalf("%s has no cluster", path)
	return ""
}
