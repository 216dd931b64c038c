package netsafety

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	goiptables "github.com/coreos/go-iptables/iptables"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/wait"

	"skiff.dev/proxy/pkg/netnstest"
)

func TestMain(m *testing.M) { netnstest.Main(m) }

func cidr(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

// TestServiceRoute: the service CIDR is routed to skiff-svc0 (up, no
// address, proto 115); ensuring twice is harmless; removal takes both
// away; a host connect() to a cluster IP finds a route (no EHOSTUNREACH
// or ENETUNREACH as a blackhole would give) and the packet goes nowhere.
func TestServiceRoute(t *testing.T) {
	netnstest.Require(t)
	svc := cidr("10.96.0.0/16")
	for i := 0; i < 2; i++ {
		if err := EnsureServiceRoute(svc); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = RemoveServiceRoute() })
	if ok, err := HasServiceRoute(svc); err != nil || !ok {
		t.Fatalf("HasServiceRoute = %v, %v", ok, err)
	}
	link, err := netlink.LinkByName(DummyInterface)
	if err != nil {
		t.Fatal(err)
	}
	if addrs, _ := netlink.AddrList(link, netlink.FAMILY_V4); len(addrs) != 0 {
		t.Fatalf("%s has addresses %v", DummyInterface, addrs)
	}
	out, err := exec.Command("ip", "route", "show", "10.96.0.0/16").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "dev "+DummyInterface) || !strings.Contains(string(out), "proto 115") {
		t.Fatalf("ip route show 10.96.0.0/16: %q, %v", out, err)
	}
	routes, err := netlink.RouteGet(net.ParseIP("10.96.7.7"))
	if err != nil || len(routes) == 0 || routes[0].LinkIndex != link.Attrs().Index {
		t.Fatalf("route to 10.96.7.7: %+v, %v; want via %s", routes, err, DummyInterface)
	}
	// A datagram socket connects (route found) and its send goes to the
	// port-less interface.
	c, err := net.Dial("udp", "10.96.7.7:53")
	if err != nil {
		t.Fatalf("connect to a cluster IP: %v", err)
	}
	c.Close()

	if err := RemoveServiceRoute(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := HasServiceRoute(svc); ok {
		t.Fatal("route still there after RemoveServiceRoute")
	}
	if _, err := netlink.LinkByName(DummyInterface); err == nil {
		t.Fatalf("%s still there", DummyInterface)
	}
	if err := RemoveServiceRoute(); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
}

// TestEgressGuard: the guard chain holds the rules, FORWARD jumps to it
// first (even when another rule was inserted before it), and removal
// leaves nothing.
func TestEgressGuard(t *testing.T) {
	netnstest.Require(t)
	ipt, err := goiptables.New()
	if err != nil {
		t.Fatal(err)
	}
	g := Guard{ClusterCIDR: cidr("10.244.0.0/16"), ServiceCIDR: cidr("10.96.0.0/16"), AllowInterfaces: []string{"skiff0", "veth-n2"}}
	if err := EnsureEgressGuard(ipt, g); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = RemoveEgressGuard(ipt) })
	for _, r := range g.Rules() {
		if ok, err := ipt.Exists("filter", GuardChain, r...); err != nil || !ok {
			t.Fatalf("guard rule %q: %v, %v", r, ok, err)
		}
	}
	wantChecks := [][]string{
		{"-o", "skiff0", "-m", "comment", "--comment", "skiff egress guard: allowed interface", "-j", "RETURN"},
		{"-s", "10.244.0.0/16", "-m", "comment", "--comment", "skiff egress guard: cluster traffic leaving by another interface", "-j", "DROP"},
		{"-d", "10.96.0.0/16", "-m", "comment", "--comment", "skiff egress guard: service traffic not DNATed", "-j", "DROP"},
	}
	for _, r := range wantChecks {
		if err := exec.Command("iptables", append([]string{"-w", "-C", GuardChain}, r...)...).Run(); err != nil {
			t.Errorf("iptables -C %s %s: %v", GuardChain, strings.Join(r, " "), err)
		}
	}
	// Something else puts itself first; the next ensure moves the guard
	// back in front, once.
	if err := ipt.Insert("filter", "FORWARD", 1, "-j", "ACCEPT"); err != nil {
		t.Fatal(err)
	}
	if err := EnsureEgressGuard(ipt, g); err != nil {
		t.Fatal(err)
	}
	rules, _ := ipt.List("filter", "FORWARD")
	if len(rules) != 3 || !strings.HasSuffix(rules[1], "-j "+GuardChain) {
		t.Fatalf("FORWARD = %q; want the guard first, once", rules)
	}
	if err := RemoveEgressGuard(ipt); err != nil {
		t.Fatal(err)
	}
	if ok, _ := ipt.ChainExists("filter", GuardChain); ok {
		t.Fatal("guard chain still there")
	}
	rules, _ = ipt.List("filter", "FORWARD")
	for _, r := range rules {
		if strings.Contains(r, GuardChain) {
			t.Fatalf("FORWARD still jumps to the guard: %q", rules)
		}
	}
}

// TestEgressGuardDrops forwards real packets in the namespace: a veth
// pair stands for a pod's link and a second one for an uplink that is
// not allowed; a packet from the cluster CIDR routed out of the uplink
// is counted by the guard's DROP rule, not sent.
func TestEgressGuardDrops(t *testing.T) {
	netnstest.Require(t)
	ipt, err := goiptables.New()
	if err != nil {
		t.Fatal(err)
	}
	// "up0" is an uplink towards 198.51.100.0/24 (not allowed).
	up := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "up0"}, PeerName: "up1"}
	if err := netlink.LinkAdd(up); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netlink.LinkDel(up) })
	for _, n := range []string{"up0", "up1"} {
		l, _ := netlink.LinkByName(n)
		if err := netlink.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	l, _ := netlink.LinkByName("up0")
	a, _ := netlink.ParseAddr("198.51.100.1/24")
	if err := netlink.AddrAdd(l, a); err != nil {
		t.Fatal(err)
	}
	if err := SetSysctls(Sysctls(true)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward"); strings.TrimSpace(string(b)) != "1" {
		t.Fatalf("ip_forward = %q", b)
	}
	g := Guard{ClusterCIDR: cidr("10.244.0.0/16"), ServiceCIDR: cidr("10.96.0.0/16"), AllowInterfaces: []string{"skiff0"}}
	if err := EnsureEgressGuard(ipt, g); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = RemoveEgressGuard(ipt) })
	// Inject a forwarded packet: send from a socket bound to a cluster
	// address on "pod0" (a veth whose peer we write into).
	pod := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "pod0"}, PeerName: "pod1"}
	if err := netlink.LinkAdd(pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netlink.LinkDel(pod) })
	for _, n := range []string{"pod0", "pod1"} {
		l, _ := netlink.LinkByName(n)
		if err := netlink.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	pod0, _ := netlink.LinkByName("pod0")
	pa, _ := netlink.ParseAddr("10.244.0.1/24")
	if err := netlink.AddrAdd(pod0, pa); err != nil {
		t.Fatal(err)
	}
	// A raw IP packet written on pod1 arrives on pod0 and is forwarded
	// towards 198.51.100.7 through up0.
	sendRaw(t, "pod1", "10.244.0.5", "198.51.100.7")
	if n := dropCount(t, "10.244.0.0/16"); n == 0 {
		out, _ := exec.Command("iptables-save", "-c", "-t", "filter").CombinedOutput()
		t.Fatalf("the guard did not drop the forwarded packet:\n%s", out)
	}
}

// dropCount reads the packet counter of the guard's "-s cidr" DROP rule.
func dropCount(t *testing.T, src string) int {
	t.Helper()
	out, err := exec.Command("iptables", "-w", "-L", GuardChain, "-v", "-n", "-x").CombinedOutput()
	if err != nil {
		t.Fatalf("iptables -L: %v: %s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 7 && f[2] == "DROP" && f[7] == src {
			var n int
			_, _ = fmt.Sscan(f[0], &n)
			return n
		}
	}
	t.Fatalf("no DROP rule for %s in:\n%s", src, out)
	return 0
}

// sendRaw writes one UDP-in-IPv4 packet from src to dst as an Ethernet
// frame on ifname, so that it arrives on ifname's peer.
func sendRaw(t *testing.T, ifname, src, dst string) {
	t.Helper()
	link, err := netlink.LinkByName(ifname)
	if err != nil {
		t.Fatal(err)
	}
	peer, err := netlink.LinkByName("pod0")
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_IP)))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	ip := ipv4UDP(net.ParseIP(src).To4(), net.ParseIP(dst).To4())
	frame := append(append(append([]byte{}, peer.Attrs().HardwareAddr...), link.Attrs().HardwareAddr...), 0x08, 0x00)
	frame = append(frame, ip...)
	sa := &unix.SockaddrLinklayer{Ifindex: link.Attrs().Index, Protocol: htons(unix.ETH_P_IP), Halen: 6}
	copy(sa.Addr[:], peer.Attrs().HardwareAddr)
	if err := unix.Sendto(fd, frame, 0, sa); err != nil {
		t.Fatal(err)
	}
	// The kernel handles the frame on veth receive; poll for the counter
	// with a deadline.
	_ = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return dropCount(t, "10.244.0.0/16") > 0, nil })
}

// TestKeepServiceRoute: a route deleted by another program (as the
// kubelet's route controller deletes routes of protocol 115 it does not
// know) is put back at once.
func TestRouteKeeper(t *testing.T) {
	netnstest.Require(t)
	svc := cidr("10.96.0.0/16")
	if err := EnsureServiceRoute(svc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = RemoveServiceRoute() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	errs := make(chan error, 10)
	keeper, err := NewRouteKeeper(svc, func(err error) { errs <- err })
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- keeper.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RouteKeeper: %v", err)
		}
	}()
	// Delete the route three times, each time after it came back.
	deleted := 0
	err = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		ok, err := HasServiceRoute(svc)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, nil
		}
		if deleted == 3 {
			return true, nil
		}
		out, err := exec.Command("ip", "route", "del", "10.96.0.0/16").CombinedOutput()
		if err != nil {
			return false, fmt.Errorf("ip route del: %v: %s", err, out)
		}
		deleted++
		return false, nil
	})
	if err != nil {
		t.Fatalf("the route did not come back after being deleted (%d deletions): %v", deleted, err)
	}
	select {
	case err := <-errs:
		t.Fatalf("putting the route back: %v", err)
	default:
	}
}
