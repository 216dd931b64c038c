package app

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"

	"skiff.dev/apiserver/pkg/testserver"
)

// corefileFile is a Corefile of the operator's for --conf: a server on
// port with ready on ready, the kubernetes plugin with a TTL the test
// picks (without kubeapi), forwarding to the test's upstream, and reload
// every 2 s (with 1 s of jitter: 1.5 to 2.5 s).
type corefileFile struct {
	t          testing.TB
	path       string
	port       int
	ready      string
	kubeconfig string
	upstream   string
}

func newCorefileFile(t testing.TB, ts *testserver.TestServer, up *upstream) *corefileFile {
	t.Helper()
	return &corefileFile{
		t: t, path: filepath.Join(t.TempDir(), "Corefile"),
		port: freePort(t), ready: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		kubeconfig: filepath.Join(ts.Dir, "dns.kubeconfig"), upstream: up.addr,
	}
}

// reloadDue is longer than the files' reload interval with its largest
// jitter.
const reloadDue = 3 * time.Second

func (c *corefileFile) write(ttl int) {
	c.t.Helper()
	body := fmt.Sprintf(`.:%d {
    ready %s
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig %s
        fallthrough in-addr.arpa ip6.arpa
        ttl %d
    }
    forward . %s
    reload 2s 1s
}
`, c.port, c.ready, c.kubeconfig, ttl, c.upstream)
	if err := os.WriteFile(c.path, []byte(body), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// moveTo makes the next write's server listen on another free port.
func (c *corefileFile) moveTo() {
	c.t.Helper()
	c.port = freePort(c.t)
}

// addr is the DNS address of the last write.
func (c *corefileFile) addr() string { return fmt.Sprintf("127.0.0.1:%d", c.port) }

// start runs skiff-dns with --conf naming the file.
func (c *corefileFile) start(t testing.TB, ts *testserver.TestServer, up *upstream) *instance {
	t.Helper()
	return startDNS(t, ts, up, func(o *Options) {
		o.Conf, o.Port, o.ReadyBindAddress, o.RegisterService = c.path, c.port, c.ready, false
	})
}

// waitTTL waits until inst answers for kubernetes.default with the TTL
// ttl.
func waitTTL(t testing.TB, inst *instance, ttl uint32, timeout time.Duration) {
	t.Helper()
	poll(t, timeout, fmt.Sprintf("an answer with the TTL %d", ttl), func() (bool, string) {
		r := exchange(t, inst.addr, "kubernetes.default.svc.cluster.local", dns.TypeA)
		return len(r.Answer) == 1 && r.Answer[0].Header().Ttl == ttl, r.String()
	})
}

// answersAt says whether a DNS server answers on addr (UDP).
func answersAt(addr string) error {
	m := new(dns.Msg)
	m.SetQuestion("kubernetes.default.svc.cluster.local.", dns.TypeA)
	c := &dns.Client{Net: "udp", Timeout: 300 * time.Millisecond}
	_, _, err := c.Exchange(m, addr)
	return err
}

// TestStoppedInstancesStayStopped: a process runs several skiff-dns
// instances one after another (as this package's tests do), each with
// a Corefile file that reloads every 2 s. An instance stopped while a
// reload is due (its file changed to another port just before), and one
// whose file changes to another port after it stopped, stay stopped past
// their reload interval: nothing restarts them (on either port), and
// nothing stops their servers a second time (CoreDNS's Server.Stop run
// twice panics: "sync: negative WaitGroup counter"). The instance that
// runs after them reloads its own file, and only it.
func TestStoppedInstancesStayStopped(t *testing.T) {
	ts := testserver.Start(t, nil)
	up := startUpstream(t)

	a := newCorefileFile(t, ts, up)
	a.write(7)
	aInst := a.start(t, ts, up)
	a.moveTo()
	a.write(9)
	aInst.stop()

	b := newCorefileFile(t, ts, up)
	b.write(7)
	bInst := b.start(t, ts, up)
	bInst.stop()
	b.moveTo()
	b.write(9)

	stopped := []string{aInst.addr, a.addr(), bInst.addr, b.addr()}
	// An assertion over a span of time, not a wait for a state: past the
	// reload interval, neither stopped instance serves again.
	for end := time.Now().Add(reloadDue); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		for _, addr := range stopped {
			if err := answersAt(addr); err == nil {
				t.Fatalf("a stopped instance answers on %s", addr)
			}
		}
	}

	c := newCorefileFile(t, ts, up)
	c.write(7)
	cInst := c.start(t, ts, up)
	first := cInst.cfg.Instance()
	waitTTL(t, cInst, 7, 30*time.Second)
	c.write(9)
	waitTTL(t, cInst, 9, 20*time.Second)
	// The new instance serves before Restart returns (it stops the old
	// one first).
	poll(t, 10*time.Second, "the reloaded instance in the Config", func() (bool, string) {
		return cInst.cfg.Instance() != first, "the Config still has the first instance"
	})
	for _, addr := range stopped {
		if err := answersAt(addr); err == nil {
			t.Errorf("a stopped instance answers on %s", addr)
		}
	}
	cInst.stop()
	if err := answersAt(cInst.addr); err == nil {
		t.Errorf("the last instance answers on %s after its stop", cInst.addr)
	}
}
