package routes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
)

func node(name, ip string, cidrs ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if ip != "" {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: ip}}
	}
	n.Spec.PodCIDRs = cidrs
	if len(cidrs) > 0 {
		n.Spec.PodCIDR = cidrs[0]
	}
	return n
}

func TestDesired(t *testing.T) {
	got := Desired("a", []*corev1.Node{
		node("a", "192.0.2.1", "10.244.1.0/24"),
		node("b", "192.0.2.2", "10.244.2.0/24", "fd00:10:244:2::/64"),
		node("c", "", "10.244.3.0/24"),
		node("d", "192.0.2.4"),
		node("e", "2001:db8::5", "10.244.5.0/24"),
	})
	if len(got) != 1 || got[0].Node != "b" || got[0].Dst.String() != "10.244.2.0/24" || !got[0].Via.Equal(net.ParseIP("192.0.2.2")) {
		t.Errorf("Desired = %+v, want only node b's IPv4 pod CIDR via its InternalIP", got)
	}
}

// testNetns makes a network namespace of the test's own with a veth pair
// in it, one end holding 192.0.2.1/24 (the node's address), and returns a
// netlink handle in it; it is deleted at the end.
func testNetns(t *testing.T) *netlink.Handle {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces)")
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	name := "skiff-rt-" + hex.EncodeToString(b)
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", name).Run() })
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Close() })
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "node0"}, PeerName: "peer0"}
	if err := h.LinkAdd(veth); err != nil {
		t.Fatal(err)
	}
	addr, _ := netlink.ParseAddr("192.0.2.1/24")
	if err := h.AddrAdd(veth, addr); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"node0", "peer0"} {
		l, err := h.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// routeTable is the namespace's main IPv4 table as "dst via gw proto N",
// "dst dev proto N" or "blackhole dst proto N" lines.
func routeTable(t *testing.T, h *netlink.Handle) string {
	t.Helper()
	rs, err := h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: unix.RT_TABLE_MAIN}, netlink.RT_FILTER_TABLE)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rs {
		if r.Dst == nil || r.Dst.String() == "192.0.2.0/24" {
			continue // the link's own prefix
		}
		switch {
		case r.Type == unix.RTN_BLACKHOLE:
			lines = append(lines, fmt.Sprintf("blackhole %s proto %d", r.Dst, r.Protocol))
		case r.Gw == nil:
			lines = append(lines, fmt.Sprintf("%s dev proto %d", r.Dst, r.Protocol))
		default:
			lines = append(lines, fmt.Sprintf("%s via %s proto %d", r.Dst, r.Gw, r.Protocol))
		}
	}
	return strings.Join(lines, "\n")
}

func TestSyncInANetworkNamespace(t *testing.T) {
	h := testNetns(t)
	_, cluster, _ := net.ParseCIDR("10.244.0.0/16")
	c, err := New(Options{NodeName: "a", ClusterCIDR: cluster, Handle: h})
	if err != nil {
		t.Fatal(err)
	}
	// A route someone else made is never touched.
	_, other, _ := net.ParseCIDR("10.244.9.0/24")
	if err := h.RouteAdd(&netlink.Route{Dst: other, Gw: net.ParseIP("192.0.2.9"), Table: unix.RT_TABLE_MAIN}); err != nil {
		t.Fatal(err)
	}
	// Nor is skiff-proxy's device route for the service range, though it
	// carries the same protocol number.
	_, svc, _ := net.ParseCIDR("10.96.0.0/16")
	node0, err := h.LinkByName("node0")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.RouteAdd(&netlink.Route{LinkIndex: node0.Attrs().Index, Dst: svc, Protocol: Protocol, Table: unix.RT_TABLE_MAIN}); err != nil {
		t.Fatal(err)
	}
	nodes := []*corev1.Node{node("a", "192.0.2.1", "10.244.1.0/24"), node("b", "192.0.2.2", "10.244.2.0/24"), node("c", "192.0.2.3")}
	if err := c.Sync(nodes); err != nil {
		t.Fatal(err)
	}
	want := "10.244.2.0/24 via 192.0.2.2 proto 115\n10.244.9.0/24 via 192.0.2.9 proto 3\nblackhole 10.244.0.0/16 proto 115\n10.96.0.0/16 dev proto 115"
	if got := routeTable(t, h); !sameLines(got, want) {
		t.Fatalf("routes after the first sync:\n%s\nwant:\n%s", got, want)
	}
	// b goes, c gets a pod CIDR, b's address changes: the routes follow.
	nodes = []*corev1.Node{node("a", "192.0.2.1", "10.244.1.0/24"), node("c", "192.0.2.3", "10.244.3.0/24"), node("d", "192.0.2.4", "10.244.2.0/24")}
	if err := c.Sync(nodes); err != nil {
		t.Fatal(err)
	}
	want = "10.244.2.0/24 via 192.0.2.4 proto 115\n10.244.3.0/24 via 192.0.2.3 proto 115\n10.244.9.0/24 via 192.0.2.9 proto 3\nblackhole 10.244.0.0/16 proto 115\n10.96.0.0/16 dev proto 115"
	if got := routeTable(t, h); !sameLines(got, want) {
		t.Fatalf("routes after the nodes changed:\n%s\nwant:\n%s", got, want)
	}
	// A node whose address is not on a connected network: an error that
	// names it, and the other routes are still made.
	nodes = append(nodes, node("far", "198.51.100.7", "10.244.7.0/24"))
	err = c.Sync(nodes)
	if err == nil || !strings.Contains(err.Error(), "node far") {
		t.Errorf("an unreachable node's route: %v, want an error naming it", err)
	}
	if got := routeTable(t, h); !sameLines(got, want) {
		t.Errorf("routes after a failed route:\n%s\nwant:\n%s", got, want)
	}
	// Every other node gone: only the blackhole (kept) and the foreign route.
	if err := c.Sync([]*corev1.Node{node("a", "192.0.2.1", "10.244.1.0/24")}); err != nil {
		t.Fatal(err)
	}
	want = "10.244.9.0/24 via 192.0.2.9 proto 3\nblackhole 10.244.0.0/16 proto 115\n10.96.0.0/16 dev proto 115"
	if got := routeTable(t, h); !sameLines(got, want) {
		t.Errorf("routes with no other node:\n%s\nwant:\n%s", got, want)
	}
}

func TestRunFollowsNodes(t *testing.T) {
	h := testNetns(t)
	_, cluster, _ := net.ParseCIDR("10.244.0.0/16")
	// A blackhole made by someone else (make up, the tests) is enough.
	if err := h.RouteAdd(&netlink.Route{Dst: cluster, Type: unix.RTN_BLACKHOLE, Table: unix.RT_TABLE_MAIN}); err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{NodeName: "a", ClusterCIDR: cluster, Handle: h})
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset(node("a", "192.0.2.1", "10.244.1.0/24"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, client) }()
	t.Cleanup(func() { cancel(); <-done })
	if _, err := client.CoreV1().Nodes().Create(ctx, node("b", "192.0.2.2", "10.244.2.0/24"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "10.244.2.0/24 via 192.0.2.2 proto 115\nblackhole 10.244.0.0/16 proto 3"
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return sameLines(routeTable(t, h), want), nil
	}); err != nil {
		t.Fatalf("routes after node b joined:\n%s\nwant:\n%s", routeTable(t, h), want)
	}
	if err := client.CoreV1().Nodes().Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want = "blackhole 10.244.0.0/16 proto 3"
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return sameLines(routeTable(t, h), want), nil
	}); err != nil {
		t.Fatalf("routes after node b left:\n%s\nwant:\n%s", routeTable(t, h), want)
	}
}

func sameLines(a, b string) bool {
	as, bs := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(as) != len(bs) {
		return false
	}
	seen := map[string]int{}
	for _, l := range as {
		seen[l]++
	}
	for _, l := range bs {
		if seen[l] == 0 {
			return false
		}
		seen[l]--
	}
	return true
}
