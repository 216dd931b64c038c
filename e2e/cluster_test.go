package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/certs"
	cmapp "skiff.dev/controller-manager/app"
	kubeletapp "skiff.dev/kubelet/app"
	"skiff.dev/kubelet/test/harness"
	schedapp "skiff.dev/scheduler/app"
)

// The test's addresses. The node's uplink and the outside namespace share
// TEST-NET-2 (RFC 5737), which no real network uses; both ends are
// namespaces of the test's own.
const (
	nodeName    = "node-1"
	nodeIP      = "198.51.100.2"
	outsideIP   = "198.51.100.1"
	uplink      = "uplink0"
	bridge      = "skiff0"
	clusterCIDR = "10.244.0.0/16"
	serviceCIDR = "10.96.0.0/16"
)

// cluster is one node with every daemon, in this process's network
// namespace.
type cluster struct {
	ts         *testserver.TestServer
	client     kubernetes.Interface
	kubeconfig string
	ctd        *harness.Containerd
	registry   string
	// outside is the name of the namespace standing for the world beyond
	// the machine.
	outside string
	dir     string
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Getenv(inNetnsEnv) == "" {
		t.Skip("needs root: the tests run in a network namespace of their own")
	}
	harness.RequireTools(t)
	for _, p := range []string{"iptables", "iptables-save", "iptables-restore", "unshare"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("needs %s (Debian packages iptables, util-linux)", p)
		}
	}
}

// run runs a command and fails the test when it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// setupNetwork gives this namespace an uplink to a second namespace, the
// "outside", with the default route through it. The outside counts, in
// its raw table, every packet that arrives from the node for a service
// address or from a pod address: on a real machine those would have left
// it.
func setupNetwork(t *testing.T) string {
	t.Helper()
	outside := "skiff-e2e-out-" + harness.RandHex(3)
	run(t, "ip", "netns", "add", outside)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", outside).Run() })
	// The previous test's outside namespace is deleted lazily by the
	// kernel, and its veth pair with it: remove this end now (the pair
	// goes with it), so that the name is free.
	_ = exec.Command("ip", "link", "del", uplink).Run()
	run(t, "ip", "link", "add", uplink, "type", "veth", "peer", "name", "uplink1", "netns", outside)
	run(t, "ip", "addr", "add", nodeIP+"/24", "dev", uplink)
	run(t, "ip", "link", "set", uplink, "up")
	run(t, "ip", "-n", outside, "addr", "add", outsideIP+"/24", "dev", "uplink1")
	run(t, "ip", "-n", outside, "link", "set", "uplink1", "up")
	run(t, "ip", "-n", outside, "link", "set", "lo", "up")
	run(t, "ip", "route", "replace", "default", "via", outsideIP)
	for _, rule := range [][]string{
		{"-d", serviceCIDR, "-m", "comment", "--comment", "service-packets-outside"},
		{"-s", clusterCIDR, "-m", "comment", "--comment", "pod-packets-outside"},
	} {
		run(t, "ip", append([]string{"netns", "exec", outside, "iptables", "-t", "raw", "-A", "PREROUTING", "-i", "uplink1"}, append(rule, "-j", "DROP")...)...)
	}
	return outside
}

// outsidePackets is how many packets the outside counted under comment.
func (c *cluster) outsidePackets(t *testing.T, comment string) int {
	t.Helper()
	out := run(t, "ip", "netns", "exec", c.outside, "iptables", "-t", "raw", "-L", "PREROUTING", "-v", "-x", "-n")
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "/* "+comment+" */") {
			var n int
			if _, err := fmt.Sscan(strings.Fields(line)[0], &n); err != nil {
				t.Fatalf("counter of %s: %v in %q", comment, err, line)
			}
			return n
		}
	}
	t.Fatalf("no rule %q in the outside namespace:\n%s", comment, out)
	return 0
}

// inOutside calls fn with this thread in the outside namespace: sockets
// fn opens stay there.
func (c *cluster) inOutside(t *testing.T, fn func()) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	out, err := netns.GetFromName(c.outside)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := netns.Set(out); err != nil {
		t.Fatal(err)
	}
	fn()
	if err := netns.Set(self); err != nil {
		// This thread stays locked and dies with the goroutine.
		t.Fatalf("back to the node's namespace: %v", err)
	}
}

// getFromOutside fetches / from addr as a client outside the machine.
func (c *cluster) getFromOutside(t *testing.T, addr string) (string, error) {
	t.Helper()
	var conn net.Conn
	var err error
	c.inOutside(t, func() { conn, err = net.DialTimeout("tcp", addr, 2*time.Second) })
	if err != nil {
		return "", err
	}
	return httpGetOn(conn, addr)
}

// listenOutside opens a TCP listener in the outside namespace; each
// connection is answered with the address it came from.
func (c *cluster) listenOutside(t *testing.T) (addr string, seen <-chan string) {
	t.Helper()
	var l net.Listener
	var err error
	c.inOutside(t, func() { l, err = net.Listen("tcp", outsideIP+":0") })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	ch := make(chan string, 16)
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			from := conn.RemoteAddr().(*net.TCPAddr).IP.String()
			_, _ = conn.Write([]byte("from " + from + "\n"))
			_ = conn.Close()
			select {
			case ch <- from:
			default:
			}
		}
	}()
	return l.Addr().String(), ch
}

// startCluster brings up the network, a registry with busybox, the API
// server, the controller manager, the scheduler, containerd and the
// kubelet. The proxy is the test's to start.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	return startClusterWith(t, nil)
}

// startClusterWith is startCluster; customize may change the kubelet's
// options first.
func startClusterWith(t *testing.T, customize func(*kubeletapp.Options)) *cluster {
	t.Helper()
	return startClusterOpts(t, clusterOptions{kubelet: customize})
}

// clusterOptions change daemons' options before they start; a nil field
// keeps startCluster's.
type clusterOptions struct {
	apiserver         func(*server.Options)
	controllerManager func(*cmapp.Options)
	scheduler         func(*schedapp.Options)
	kubelet           func(*kubeletapp.Options)
}

// startClusterOpts is startCluster with the daemons' options changed by
// co.
func startClusterOpts(t *testing.T, co clusterOptions) *cluster {
	t.Helper()
	requireRoot(t)
	c := &cluster{outside: setupNetwork(t)}
	c.ctd = harness.StartContainerd(t)
	c.registry = harness.StartRegistry(t)
	harness.PushImage(t, harness.BuildBusyboxImage(t), c.registry, "library/busybox")
	c.ts = testserver.Start(t, co.apiserver)
	c.client = c.ts.Client
	c.kubeconfig = c.ts.Kubeconfig

	dir, err := os.MkdirTemp("", "ske2e")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	t.Cleanup(func() {
		harness.UnmountUnder(t, dir)
		_ = os.RemoveAll(dir)
	})
	ctx := context.Background()

	cmOpts := cmapp.NewOptions()
	cmOpts.LeaderElection.LeaderElect = false
	cmOpts.Serving.BindAddress, cmOpts.Serving.Port = "127.0.0.1", 0
	cmOpts.Controllers = []string{"replicaset", "node-ipam", "garbage-collector", "endpointslice", "endpoint", "cronjob", "job", "daemonset", "statefulset", "ttl-after-finished", "replicationcontroller", "persistentvolume-binder", "persistentvolumeclaim-protection", "persistentvolume-protection", "ephemeral-volume", "persistentvolume-expander", "horizontalpodautoscaling"}
	cmOpts.Controller.ClusterCIDR = clusterCIDR
	if co.controllerManager != nil {
		co.controllerManager(cmOpts)
	}
	cm, err := cmapp.SetupWithConfig(ctx, cmOpts, c.ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	startDaemon(t, "controller-manager", func(ctx context.Context) error { return cmapp.Run(ctx, cm) })

	schedOpts := schedapp.NewOptions()
	schedOpts.LeaderElection.LeaderElect = false
	schedOpts.Serving.BindAddress, schedOpts.Serving.Port = "127.0.0.1", 0
	if co.scheduler != nil {
		co.scheduler(schedOpts)
	}
	sched, err := schedapp.SetupWithConfig(ctx, schedOpts, c.ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	startDaemon(t, "scheduler", func(ctx context.Context) error { return schedapp.Run(ctx, sched) })

	regFile := filepath.Join(dir, "registries.yaml")
	if err := os.WriteFile(regFile, []byte(fmt.Sprintf("mirrors:\n  docker.io:\n    endpoint:\n      - \"http://%s\"\n", c.registry)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The API server reaches the kubelet at the node's InternalIP: its
	// serving certificate names that address too.
	if _, err := certs.Generate(ctx, certs.Options{Dir: c.ts.PKIDir, KubeconfigDir: c.ts.Dir, Server: c.ts.URL,
		Nodes: []string{nodeName}, NodeIPs: map[string][]string{nodeName: {nodeIP}}}); err != nil {
		t.Fatalf("the kubelet's certificate for %s: %v", nodeIP, err)
	}
	ko := kubeletapp.NewOptions()
	ko.Kubeconfig = filepath.Join(c.ts.Dir, "kubelet-"+nodeName+".kubeconfig")
	ko.NodeName = nodeName
	ko.NodeIP = nodeIP
	ko.ContainerdAddress = c.ctd.Address
	ko.ContainerdNamespace = "skiff-e2e-" + harness.RandHex(3)
	ko.ContainerdRoot = c.ctd.Dir
	ko.RootDir = filepath.Join(dir, "kubelet")
	ko.LocalPathDir = filepath.Join(dir, "storage")
	ko.NetNSDir = filepath.Join(dir, "netns")
	ko.BridgeName = bridge
	ko.CgroupRoot = "/" + ko.ContainerdNamespace
	ko.RegistriesConfig = regFile
	ko.DisableDefaultRegistryEndpoint = true
	ko.Address, ko.Port = nodeIP, 0
	ko.NodeStatusUpdateFrequency = time.Second
	ko.SyncFrequency = 300 * time.Millisecond
	ko.ClientCAFile = filepath.Join(c.ts.PKIDir, "ca.crt")
	ko.TLSCertFile = filepath.Join(c.ts.PKIDir, "kubelet-"+nodeName+".crt")
	ko.TLSKeyFile = filepath.Join(c.ts.PKIDir, "kubelet-"+nodeName+".key")
	// Only the memory threshold: the tests must not depend on how full
	// this machine's disk is.
	ko.Eviction.Hard = "memory.available<100Mi"
	if co.kubelet != nil {
		co.kubelet(ko)
	}
	kctx := klog.NewContext(ctx, klog.Background().WithName("kubelet"))
	kcfg, err := kubeletapp.Setup(kctx, ko)
	if err != nil {
		t.Fatalf("kubelet setup: %v", err)
	}
	t.Cleanup(kcfg.Close)
	startDaemon(t, "kubelet", func(ctx context.Context) error { return kubeletapp.Run(ctx, kcfg) })
	return c
}

// startDaemon runs a daemon in-process until stop is called or the test
// ends.
func startDaemon(t *testing.T, name string, run func(ctx context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background().WithName(name)))
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not stop within 30s", name)
		}
	}
	t.Cleanup(stop)
	return stop
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// kubectl runs the real kubectl as the cluster's admin.
func (c *cluster) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.kubectlErr(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return out
}

func (c *cluster) kubectlErr(args ...string) (string, error) {
	cmd := exec.Command("/usr/bin/kubectl", append([]string{"--kubeconfig", c.kubeconfig, "--request-timeout", "30s"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
