package iptables

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"skiff.dev/proxy/pkg/conntrack"
	"skiff.dev/proxy/pkg/netnstest"
	"skiff.dev/proxy/pkg/netsafety"
)

// The tests that touch the kernel run in a network namespace of their
// own (see netnstest); the others run anywhere.
func TestMain(m *testing.M) { netnstest.Main(m) }

// recordingKernel remembers the restore inputs.
type recordingKernel struct {
	Kernel
	mu       sync.Mutex
	restores [][]byte
}

func (k *recordingKernel) Restore(ctx context.Context, data []byte) error {
	k.mu.Lock()
	k.restores = append(k.restores, append([]byte(nil), data...))
	k.mu.Unlock()
	return k.Kernel.Restore(ctx, data)
}

func (k *recordingKernel) last() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.restores) == 0 {
		return ""
	}
	return string(k.restores[len(k.restores)-1])
}

// harness is a Proxier over hand-filled caches.
type harness struct {
	t        *testing.T
	services cache.Indexer
	slices   cache.Indexer
	kernel   *recordingKernel
	recorder *record.FakeRecorder
	p        *Proxier
}

func newHarness(t *testing.T, k Kernel) *harness {
	h := &harness{
		t:        t,
		services: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
		slices:   cache.NewIndexer(cache.MetaNamespaceKeyFunc, SliceIndexers()),
		kernel:   &recordingKernel{Kernel: k},
		recorder: record.NewFakeRecorder(100),
	}
	h.restart()
	return h
}

// restart replaces the Proxier by a new one over the same caches, as a
// restarted daemon would start.
func (h *harness) restart() {
	h.p = New(Options{
		Rules: *testRuleOptions(), MinSyncPeriod: 0, SyncPeriod: time.Minute,
		Services: corelisters.NewServiceLister(h.services), Slices: h.slices,
		Kernel: h.kernel, Recorder: h.recorder, Metrics: nil,
	})
	for _, o := range h.services.List() {
		h.p.serviceChanged(o)
	}
}

func (h *harness) set(objs ...interface{}) {
	h.t.Helper()
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *corev1.Service:
			err = h.services.Update(o)
			h.p.serviceChanged(o)
		case *discoveryv1.EndpointSlice:
			err = h.slices.Update(o)
			h.p.sliceChanged(o)
		}
		if err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *harness) remove(objs ...interface{}) {
	h.t.Helper()
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *corev1.Service:
			err = h.services.Delete(o)
			h.p.serviceChanged(o)
		case *discoveryv1.EndpointSlice:
			err = h.slices.Delete(o)
			h.p.sliceChanged(o)
		}
		if err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *harness) sync() SyncInfo {
	h.t.Helper()
	info := h.p.Sync(context.Background())
	if info.Err != nil {
		h.t.Fatalf("sync: %v", info.Err)
	}
	return info
}

func (h *harness) fullSync() SyncInfo {
	h.p.mu.Lock()
	h.p.needFull = true
	h.p.mu.Unlock()
	return h.sync()
}

func realKernel(t *testing.T) *ExecKernel {
	t.Helper()
	netnstest.Require(t)
	k, err := NewExecKernel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Cleanup(context.Background(), k); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return k
}

func save(t *testing.T, table string) string {
	t.Helper()
	out, err := exec.Command("iptables-save", "-t", table).CombinedOutput()
	if err != nil {
		t.Fatalf("iptables-save: %v: %s", err, out)
	}
	return string(out)
}

func check(t *testing.T, table, chain string, rule ...string) bool {
	t.Helper()
	err := exec.Command("iptables", append([]string{"-w", "-t", table, "-C", chain}, rule...)...).Run()
	return err == nil
}

func chainOf(prefix, portName string, proto corev1.Protocol, endpoint string) string {
	return prefix + hashFor(portName, proto, endpoint)
}

// TestKernelAcceptsEveryGolden restores each golden file into the
// kernel: every rule the generator writes is one iptables accepts.
func TestKernelAcceptsEveryGolden(t *testing.T) {
	k := realKernel(t)
	data, err := os.ReadFile("testdata/all.golden")
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Restore(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	nat := save(t, "nat")
	for _, want := range []string{
		"-A SKIFF-SEP-", "--to-destination 10.244.1.70:5353", "-p sctp", "-m recent --rcheck --seconds 600 --reap --name SKIFF-SEP-",
		"-m statistic --mode random --probability 0.50000000000",
	} {
		if !strings.Contains(nat, want) {
			t.Errorf("iptables-save -t nat has no %q:\n%s", want, nat)
		}
	}
	if filter := save(t, "filter"); !strings.Contains(filter, "--reject-with icmp-port-unreachable") {
		t.Errorf("iptables-save -t filter has no REJECT:\n%s", filter)
	}
}

// TestKernelFullAndPartialSync: a full sync writes every chain and the
// jumps; after one endpoint changes, the next sync writes only that
// Service's chains and leaves the other's in place; a Service removed
// loses its chains.
func TestKernelFullAndPartialSync(t *testing.T) {
	h := newHarness(t, realKernel(t))
	a := svc("a", "10.96.0.10", []corev1.ServicePort{tcp("http", 80, 8080)})
	b := svc("b", "10.96.0.11", []corev1.ServicePort{tcp("http", 80, 8080)})
	h.set(a, b,
		slice("a", "a-1", tcpPort("http", 8080), ep{ip: "10.244.1.5", node: "node-b"}),
		slice("b", "b-1", tcpPort("http", 8080), ep{ip: "10.244.1.6", node: "node-b"}))
	info := h.sync()
	if !info.Full || info.Written != 2 {
		t.Fatalf("first sync: full %v, written %d; want a full sync writing 2 Services", info.Full, info.Written)
	}
	nat := save(t, "nat")
	sepA1 := chainOf(PrefixSEP, "ns/a:http", corev1.ProtocolTCP, "10.244.1.5:8080")
	sepB := chainOf(PrefixSEP, "ns/b:http", corev1.ProtocolTCP, "10.244.1.6:8080")
	for _, want := range []string{
		"-A " + sepA1 + " -p tcp -m comment --comment \"ns/a:http\" -m tcp -j DNAT --to-destination 10.244.1.5:8080",
		"-A " + sepB + " -p tcp -m comment --comment \"ns/b:http\" -m tcp -j DNAT --to-destination 10.244.1.6:8080",
	} {
		if !strings.Contains(nat, want) {
			t.Fatalf("after the full sync, iptables-save -t nat lacks %q:\n%s", want, nat)
		}
	}
	for _, j := range Jumps(true) {
		if !check(t, j.Table, j.From, j.Rule()...) {
			t.Errorf("jump %s/%s -> %s missing", j.Table, j.From, j.To)
		}
	}

	// One endpoint of a changes.
	h.set(slice("a", "a-1", tcpPort("http", 8080), ep{ip: "10.244.1.5", node: "node-b"}, ep{ip: "10.244.1.7", node: "node-b"}))
	info = h.sync()
	if info.Full || info.Written != 1 {
		t.Fatalf("second sync: full %v, written %d; want a partial sync writing 1 Service", info.Full, info.Written)
	}
	in := h.kernel.last()
	svcA, svcB := chainOf(PrefixSVC, "ns/a:http", corev1.ProtocolTCP, ""), chainOf(PrefixSVC, "ns/b:http", corev1.ProtocolTCP, "")
	if !strings.Contains(in, ":"+svcA+" ") || strings.Contains(in, ":"+svcB+" ") || strings.Contains(in, ":"+sepB+" ") {
		t.Fatalf("the partial restore should declare a's chains and not b's:\n%s", in)
	}
	nat = save(t, "nat")
	sepA2 := chainOf(PrefixSEP, "ns/a:http", corev1.ProtocolTCP, "10.244.1.7:8080")
	for _, want := range []string{
		"--to-destination 10.244.1.7:8080", "-A " + svcA + " -m comment --comment \"ns/a:http -> 10.244.1.7:8080\" -j " + sepA2,
		"-A " + sepB + " -p tcp -m comment --comment \"ns/b:http\" -m tcp -j DNAT --to-destination 10.244.1.6:8080",
	} {
		if !strings.Contains(nat, want) {
			t.Fatalf("after the partial sync, iptables-save -t nat lacks %q:\n%s", want, nat)
		}
	}

	// b goes: its chains are deleted by the next (partial) sync.
	h.remove(b)
	info = h.sync()
	if info.Full || len(info.Deleted) != 2 {
		t.Fatalf("third sync: full %v, deleted %v; want b's SVC and SEP chains deleted", info.Full, info.Deleted)
	}
	if nat = save(t, "nat"); strings.Contains(nat, svcB) || strings.Contains(nat, sepB) {
		t.Fatalf("b's chains are still there:\n%s", nat)
	}
}

// TestKernelFullSyncRepairs: a jump deleted by hand and a Service chain
// deleted by hand are back after the next full sync.
func TestKernelFullSyncRepairs(t *testing.T) {
	h := newHarness(t, realKernel(t))
	h.set(svc("a", "10.96.0.10", []corev1.ServicePort{tcp("http", 80, 8080)}),
		slice("a", "a-1", tcpPort("http", 8080), ep{ip: "10.244.1.5", node: "node-b"}))
	h.sync()
	jump := Jump{Table: TableNAT, From: "PREROUTING", To: ChainServices, Comment: "skiff service portals"}
	if out, err := exec.Command("iptables", append([]string{"-w", "-t", "nat", "-D", "PREROUTING"}, jump.Rule()...)...).CombinedOutput(); err != nil {
		t.Fatalf("deleting the jump by hand: %v: %s", err, out)
	}
	sep := chainOf(PrefixSEP, "ns/a:http", corev1.ProtocolTCP, "10.244.1.5:8080")
	if out, err := exec.Command("iptables", "-w", "-t", "nat", "-F", sep).CombinedOutput(); err != nil {
		t.Fatalf("flushing %s by hand: %v: %s", sep, err, out)
	}
	if check(t, jump.Table, jump.From, jump.Rule()...) {
		t.Fatal("the jump is still there after iptables -D")
	}
	if info := h.fullSync(); !info.Full {
		t.Fatal("want a full sync")
	}
	if !check(t, jump.Table, jump.From, jump.Rule()...) {
		t.Fatal("the full sync did not put the jump back")
	}
	if !check(t, "nat", sep, "-p", "tcp", "-m", "comment", "--comment", "ns/a:http", "-m", "tcp", "-j", "DNAT", "--to-destination", "10.244.1.5:8080") {
		t.Fatalf("the full sync did not rewrite %s:\n%s", sep, save(t, "nat"))
	}
}

// TestKernelSkipsBadInput: a Service with an unknown protocol and a slice
// of the wrong family are skipped with a Warning event; the other
// Services are programmed.
func TestKernelSkipsBadInput(t *testing.T) {
	h := newHarness(t, realKernel(t))
	bad := svc("bad", "10.96.0.30", []corev1.ServicePort{{Name: "x", Protocol: "ICMP", Port: 80}})
	good := svc("good", "10.96.0.31", []corev1.ServicePort{tcp("http", 80, 8080)})
	v6 := svc("v6", "10.96.0.32", []corev1.ServicePort{tcp("http", 80, 8080)})
	v6slice := slice("v6", "v6-1", tcpPort("http", 8080))
	v6slice.AddressType = discoveryv1.AddressTypeIPv6
	v6slice.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"fd00::1"}}}
	h.set(bad, good, v6, v6slice, slice("good", "good-1", tcpPort("http", 8080), ep{ip: "10.244.1.5", node: "node-b"}))
	h.sync()
	events := map[string]bool{}
	for len(h.recorder.Events) > 0 {
		events[<-h.recorder.Events] = true
	}
	wantEvents := []string{
		`Warning FailedToProgramProxyRules kube-proxy cannot program this Service: ports[0]: protocol "ICMP" is not TCP, UDP or SCTP`,
		`Warning FailedToProgramProxyRules kube-proxy cannot program this EndpointSlice: address type "IPv6": this proxy programs IPv4 only`,
	}
	for _, e := range wantEvents {
		if !events[e] {
			t.Errorf("no event %q; got %v", e, events)
		}
	}
	nat, filter := save(t, "nat"), save(t, "filter")
	if !strings.Contains(nat, "--to-destination 10.244.1.5:8080") {
		t.Fatalf("the good Service is not programmed:\n%s", nat)
	}
	if strings.Contains(nat, "10.96.0.30") || strings.Contains(filter, "10.96.0.30") {
		t.Fatalf("the bad Service has rules")
	}
	if !strings.Contains(filter, `"ns/v6:http has no endpoints"`) {
		t.Fatalf("the Service whose only slice was skipped should reject:\n%s", filter)
	}
}

// TestKernelTraffic sends real connections, inside the namespace, to a
// cluster IP: without endpoints they are refused at once; with one they
// reach it; an established connection survives a restart of the proxy,
// whose first sync rewrites the rules without flushing them first.
func TestKernelTraffic(t *testing.T) {
	h := newHarness(t, realKernel(t))
	_, svcCIDR, _ := net.ParseCIDR("10.96.0.0/16")
	if err := netsafety.EnsureServiceRoute(svcCIDR); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netsafety.RemoveServiceRoute() })
	epIP := addEndpointAddress(t, "10.244.1.5")
	ln, err := net.Listen("tcp", epIP+":8080")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go echo(ln)

	web := svc("web", "10.96.0.10", []corev1.ServicePort{tcp("http", 80, 8080)})
	h.set(web)
	h.sync()
	start := time.Now()
	_, err = net.DialTimeout("tcp", "10.96.0.10:80", 5*time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dialing a Service without endpoints: %v, want connection refused", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the refusal took %v", d)
	}

	h.set(slice("web", "web-1", tcpPort("http", 8080), ep{ip: epIP, node: "node-b"}))
	h.sync()
	conn, err := net.DialTimeout("tcp", "10.96.0.10:80", 5*time.Second)
	if err != nil {
		t.Fatalf("dialing the Service: %v\n%s", err, save(t, "nat"))
	}
	defer conn.Close()
	roundTrip(t, conn, "before the restart")

	h.restart()
	if nat := save(t, "nat"); !strings.Contains(nat, "--to-destination "+epIP+":8080") {
		t.Fatalf("the rules are gone before the new proxier's first sync:\n%s", nat)
	}
	if info := h.sync(); !info.Full {
		t.Fatal("the first sync after a restart should be full")
	}
	roundTrip(t, conn, "after the restart")
	conn2, err := net.DialTimeout("tcp", "10.96.0.10:80", 5*time.Second)
	if err != nil {
		t.Fatalf("dialing the Service after the restart: %v", err)
	}
	defer conn2.Close()
	roundTrip(t, conn2, "new connection after the restart")
}

// addEndpointAddress puts ip on an interface of the test namespace,
// standing in for a pod.
func addEndpointAddress(t *testing.T, ip string) string {
	t.Helper()
	link := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "ep0"}} // this kernel has no dummy interfaces
	if err := netlink.LinkAdd(link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netlink.LinkDel(link) })
	addr, _ := netlink.ParseAddr(ip + "/32")
	if err := netlink.AddrAdd(link, addr); err != nil {
		t.Fatal(err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		t.Fatal(err)
	}
	return ip
}

func echo(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 64)
			for {
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
		}()
	}
}

func roundTrip(t *testing.T, c net.Conn, when string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatalf("%s: write: %v", when, err)
	}
	buf := make([]byte, 4)
	if _, err := c.Read(buf); err != nil || string(buf) != "ping" {
		t.Fatalf("%s: read %q, %v", when, buf, err)
	}
}

// TestKernelCleanup: Cleanup leaves no SKIFF- chain and no jump.
func TestKernelCleanup(t *testing.T) {
	h := newHarness(t, realKernel(t))
	h.set(svc("a", "10.96.0.10", []corev1.ServicePort{tcp("http", 80, 8080)}),
		slice("a", "a-1", tcpPort("http", 8080), ep{ip: "10.244.1.5", node: "node-b"}))
	h.sync()
	if err := Cleanup(context.Background(), h.kernel); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"nat", "filter"} {
		if s := save(t, table); strings.Contains(s, "SKIFF-") {
			t.Fatalf("iptables-save -t %s still names SKIFF- chains:\n%s", table, s)
		}
	}
}

// TestKernelStaleUDPConntrack: a UDP flow to a cluster IP is DNATed to an
// endpoint; when that endpoint goes, the sync deletes its conntrack
// entry, so the next datagram is not sent to the gone endpoint.
func TestKernelStaleUDPConntrack(t *testing.T) {
	h := newHarness(t, realKernel(t))
	h.p.o.DeleteConntrack = conntrack.Delete
	_, svcCIDR, _ := net.ParseCIDR("10.96.0.0/16")
	if err := netsafety.EnsureServiceRoute(svcCIDR); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netsafety.RemoveServiceRoute() })
	epIP := addEndpointAddress(t, "10.244.1.9")
	pc, err := net.ListenPacket("udp", epIP+":5353")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()

	dns := svc("dns", "10.96.0.53", []corev1.ServicePort{{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(5353)}})
	udpPort := []slicePort{{name: "dns", port: 5353, proto: corev1.ProtocolUDP}}
	h.set(dns, slice("dns", "dns-1", udpPort, ep{ip: epIP, node: "node-b"}))
	h.sync()
	c, err := net.Dial("udp", "10.96.0.53:53")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	_ = pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 8)
	if _, _, err := pc.ReadFrom(buf); err != nil {
		t.Fatalf("the endpoint got no datagram through the cluster IP: %v", err)
	}
	if n := udpEntries(t, epIP); n != 1 {
		t.Fatalf("%d conntrack entries DNATed to %s, want 1", n, epIP)
	}

	h.set(slice("dns", "dns-1", udpPort))
	h.sync()
	if n := udpEntries(t, epIP); n != 0 {
		t.Fatalf("%d conntrack entries DNATed to the removed endpoint %s remain", n, epIP)
	}
}

// udpEntries counts the UDP conntrack entries whose reply comes from ip.
func udpEntries(t *testing.T, ip string) int {
	t.Helper()
	flows, err := netlink.ConntrackTableList(netlink.ConntrackTable, unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range flows {
		if f.Forward.Protocol == unix.IPPROTO_UDP && f.Reverse.SrcIP.String() == ip {
			n++
		}
	}
	return n
}

// TestKernelFullSyncLeavesMatchingChains: every golden case, restored
// into the kernel and read back with iptables-save, reads as the rules
// the generator wants (RuleKey sees through iptables-save's rewriting), so
// a full sync over unchanged rules rewrites no Service chain; a chain
// whose rules differ is rewritten.
func TestKernelFullSyncLeavesMatchingChains(t *testing.T) {
	k := realKernel(t)
	var svcs []*corev1.Service
	var slices []*discoveryv1.EndpointSlice
	for _, tt := range ruleCases() {
		svcs = append(svcs, tt.svcs...)
		slices = append(slices, tt.slices...)
	}
	snap := snapshotOf(t, svcs, slices)
	first := Write(snap, testRuleOptions(), Plan{Full: true})
	if err := k.Restore(context.Background(), first.Data); err != nil {
		t.Fatal(err)
	}
	nat := save(t, "nat")
	existing := ParseChains([]byte(nat))
	res := Write(snap, testRuleOptions(), Plan{Full: true, Existing: existing, Kernel: ParseRules([]byte(nat))})
	if res.Written != 0 {
		t.Fatalf("a full sync over its own rules rewrote %d Services:\n%s", res.Written, res.Data)
	}
	if res.Rules[TableNAT] != first.Rules[TableNAT] {
		t.Fatalf("nat rules counted %d, want %d", res.Rules[TableNAT], first.Rules[TableNAT])
	}
	// Change one endpoint chain's DNAT by hand: that Service is rewritten.
	sep := chainOf(PrefixSEP, "ns/web:http", corev1.ProtocolTCP, "10.244.1.5:8080")
	if out, err := exec.Command("iptables", "-w", "-t", "nat", "-R", sep, "2", "-p", "tcp", "-j", "DNAT", "--to-destination", "10.244.9.9:8080").CombinedOutput(); err != nil {
		t.Fatalf("iptables -R: %v: %s", err, out)
	}
	nat = save(t, "nat")
	res = Write(snap, testRuleOptions(), Plan{Full: true, Existing: ParseChains([]byte(nat)), Kernel: ParseRules([]byte(nat))})
	if res.Written != 1 || !strings.Contains(string(res.Data), ":"+sep+" ") {
		t.Fatalf("after a rule was replaced by hand, %d Services rewritten:\n%s", res.Written, res.Data)
	}
}

// TestKernelNodePortTraffic: a NodePort answers on 127.0.0.1 (with
// route_localnet) and on another local address, and the jump rules make
// it reachable from the host itself.
func TestKernelNodePortTraffic(t *testing.T) {
	h := newHarness(t, realKernel(t))
	if err := netsafety.SetSysctls(netsafety.Sysctls(true)); err != nil {
		t.Fatal(err)
	}
	_, svcCIDR, _ := net.ParseCIDR("10.96.0.0/16")
	if err := netsafety.EnsureServiceRoute(svcCIDR); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netsafety.RemoveServiceRoute() })
	epIP := addEndpointAddress(t, "10.244.1.6")
	ln, err := net.Listen("tcp", epIP+":8080")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go echo(ln)
	h.set(svc("np", "10.96.0.11", []corev1.ServicePort{tcp("", 80, 8080)}, nodePort(30080)),
		slice("np", "np-1", tcpPort("", 8080), ep{ip: epIP, node: "node-b"}))
	h.sync()
	for _, addr := range []string{"127.0.0.1:30080", epIP + ":30080", "10.96.0.11:80"} {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dialing %s: %v", addr, err)
		}
		roundTrip(t, c, addr)
		c.Close()
	}
}
