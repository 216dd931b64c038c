package cni

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"skiff.dev/kubelet/pkg/pod"
)

func newTestNetwork(t *testing.T, bridge string) *Network {
	t.Helper()
	dir := t.TempDir()
	n, err := New(Options{
		BinDirs: []string{"/usr/lib/cni"}, ConfDir: filepath.Join(dir, "net.d"), CacheDir: filepath.Join(dir, "cache"),
		NetNSDir: filepath.Join(dir, "netns"), IPAMDir: filepath.Join(dir, "ipam"), BridgeName: bridge,
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestConfList(t *testing.T) {
	n := newTestNetwork(t, "skiff0")
	if _, err := n.ConfList("10.244.1.0/33"); err == nil {
		t.Error("invalid CIDR accepted")
	}
	data, err := n.ConfList("10.244.1.0/24")
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Name    string           `json:"name"`
		Plugins []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		t.Fatal(err)
	}
	if conf.Name != "skiff" || len(conf.Plugins) != 2 {
		t.Fatalf("conf = %s", data)
	}
	br := conf.Plugins[0]
	if br["type"] != "bridge" || br["bridge"] != "skiff0" || br["isGateway"] != true || br["ipMasq"] != false {
		t.Errorf("bridge plugin = %v", br)
	}
	ipam := br["ipam"].(map[string]any)
	if ipam["type"] != "host-local" || !strings.Contains(string(data), `"subnet": "10.244.1.0/24"`) {
		t.Errorf("ipam = %v", ipam)
	}
	if conf.Plugins[1]["type"] != "portmap" {
		t.Errorf("second plugin = %v", conf.Plugins[1])
	}
}

func TestNewRejectsBadBridgeName(t *testing.T) {
	for _, name := range []string{"", "a-bridge-name-too-long"} {
		if _, err := New(Options{BridgeName: name, BinDirs: []string{"/x"}}); err == nil {
			t.Errorf("bridge name %q accepted", name)
		}
	}
}

func TestStatusBeforePodCIDR(t *testing.T) {
	n := newTestNetwork(t, "skiff0")
	if err := n.Status(context.Background()); !errors.Is(err, ErrNotReady) {
		t.Errorf("Status = %v, want ErrNotReady", err)
	}
	if _, err := n.SetUp(context.Background(), pod.PodNetwork{UID: "u"}); !errors.Is(err, ErrNotReady) {
		t.Errorf("SetUp = %v, want ErrNotReady", err)
	}
}

// TestSetUpTearDown uses the real plugins on a bridge of its own.
func TestSetUpTearDown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		t.Skip("needs the CNI plugins in /usr/lib/cni (Debian package containernetworking-plugins)")
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	bridge := "skt" + hex.EncodeToString(b)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", bridge).Run() })
	n := newTestNetwork(t, bridge)
	ctx := context.Background()
	cidr := "10.244.251.0/24"
	if err := n.SetPodCIDR(cidr); err != nil {
		t.Fatal(err)
	}
	if err := n.Status(ctx); err != nil {
		t.Fatalf("Status = %v", err)
	}
	pn := pod.PodNetwork{UID: "uid-setup-test", Name: "p", Namespace: "ns"}
	sb, err := n.SetUp(ctx, pn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.TearDown(ctx, pn) })
	_, ipnet, _ := net.ParseCIDR(cidr)
	if len(sb.IPs) != 1 || !ipnet.Contains(net.ParseIP(sb.IPs[0])) || !isNetNS(sb.NetNSPath) {
		t.Fatalf("sandbox = %+v", sb)
	}
	lease := filepath.Join(n.opts.IPAMDir, "skiff", sb.IPs[0])
	if _, err := os.Stat(lease); err != nil {
		t.Errorf("IPAM lease: %v", err)
	}
	uids, err := n.Sandboxes()
	if err != nil || len(uids) != 1 || uids[0] != pn.UID {
		t.Errorf("Sandboxes = %v, %v", uids, err)
	}
	// A second SetUp (a restarted kubelet) finds the same sandbox.
	again, err := n.SetUp(ctx, pn)
	if err != nil || again.IPs[0] != sb.IPs[0] {
		t.Errorf("second SetUp = %+v, %v; want the same address", again, err)
	}
	if err := n.TearDown(ctx, pn); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sb.NetNSPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("netns left: %v", err)
	}
	if _, err := os.Stat(lease); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lease left: %v", err)
	}
	// Tearing down twice is fine.
	if err := n.TearDown(ctx, pn); err != nil {
		t.Errorf("second TearDown = %v", err)
	}
}

// TestSetUpFindsSandboxBeforePodCIDR: a restarted kubelet finds a pod's
// sandbox again before it learns the pod CIDR, from the conflist on disk.
func TestSetUpFindsSandboxBeforePodCIDR(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		t.Skip("needs the CNI plugins in /usr/lib/cni (Debian package containernetworking-plugins)")
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	bridge := "skt" + hex.EncodeToString(b)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", bridge).Run() })
	n := newTestNetwork(t, bridge)
	ctx := context.Background()
	if err := n.SetPodCIDR("10.244.252.0/24"); err != nil {
		t.Fatal(err)
	}
	pn := pod.PodNetwork{UID: "uid-restart-test", Name: "p", Namespace: "ns"}
	sb, err := n.SetUp(ctx, pn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.TearDown(ctx, pn) })
	restarted, err := New(n.opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := restarted.SetUp(ctx, pn)
	if err != nil || again.IPs[0] != sb.IPs[0] {
		t.Errorf("SetUp after restart = %+v, %v; want %v", again, err, sb.IPs)
	}
	if _, err := restarted.SetUp(ctx, pod.PodNetwork{UID: "new-pod"}); !errors.Is(err, ErrNotReady) {
		t.Errorf("a new pod before the pod CIDR: %v, want ErrNotReady", err)
	}
}
