//go:build multinode

// The multi-node suite (issue 25, make test-multinode): the production
// shape of docs/operations.md on this one machine. Three etcd members with
// TLS, two API servers, two controller managers and two schedulers with
// leader election, all from their deploy/systemd units
// (component-base/deploytest), and three nodes, each in a network
// namespace of its own with its own address on a bridge of this test's
// namespace (TestMain's), its own kubelet, proxy and iptables, joined with
// a bootstrap token (skiffctl token create, skiffctl join run inside the
// node's namespace, the kubelet's TLS bootstrap). One containerd serves
// every kubelet, a containerd namespace each (DESIGN.md). Several minutes,
// as root: not part of make test.

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/miekg/dns"
	"skiff.dev/component-base/deploytest"
	"skiff.dev/kubelet/test/harness"
)

// The machines' network: TEST-NET-3 (RFC 5737) on a bridge of the test's
// own namespace. The two API servers have the bridge's two addresses; the
// nodes are .11, .12 and .13.
const (
	mnBridge      = "mnbr0"
	mnAPI1        = "203.0.113.1"
	mnAPI2        = "203.0.113.2"
	mnClusterCIDR = "10.244.0.0/16"
	mnServiceCIDR = "10.96.0.0/16"
	// The leader elections' timing, shorter than the deploy defaults so
	// that a takeover is quick to show.
	mnLease, mnRenew, mnRetry = 6 * time.Second, 4 * time.Second, time.Second
	// How long a node may be silent before it is NotReady (more than the
	// kubelet's lease renewal, 10 s), and how long its pods tolerate that.
	mnGrace      = 20 * time.Second
	mnToleration = 5
)

type mnNode struct {
	name, ns, ip, dir string
	kubeletArgs       []string
	kubelet, proxy    *deploytest.Process
	dns               *deploytest.Process
}

// storage is the node's --local-path-dir, where the local-path
// provisioner makes the volumes of claims scheduled to it.
func (n *mnNode) storage() string { return filepath.Join(n.dir, "storage") }

type multiNode struct {
	dir, pki, mark string
	etcd           *deploytest.EtcdCluster
	apis           []*deploytest.Process
	cms, scheds    []*deploytest.Process
	nodes          []*mnNode
	cfg            *rest.Config
	client         kubernetes.Interface
	kubeconfig     string
	setup          time.Duration
}

// procs are every daemon the test started, for WaitFor's logs.
func (m *multiNode) procs() []*deploytest.Process {
	out := append([]*deploytest.Process(nil), m.etcd.Processes()...)
	out = append(out, m.apis...)
	out = append(out, m.cms...)
	out = append(out, m.scheds...)
	for _, n := range m.nodes {
		out = append(out, n.kubelet, n.proxy, n.dns)
	}
	var live []*deploytest.Process
	for _, p := range out {
		if p != nil {
			live = append(live, p)
		}
	}
	return live
}

// waitFor is deploytest.WaitFor with every daemon's log on failure; a
// daemon the test stopped on purpose does not count as having exited.
func (m *multiNode) waitFor(t *testing.T, what string, timeout time.Duration, cond func() error) {
	t.Helper()
	deploytest.WaitFor(t, what, timeout, m.procs(), cond)
}

func bin(name string) string { return filepath.Join(deploytest.Repo(), "bin", name) }

// forward accepts on listen and copies each connection to and from to.
func forward(t *testing.T, listen, to string) {
	t.Helper()
	l, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", to)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { _, _ = io.Copy(u, c) }()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
}

func startMultiNode(t *testing.T) *multiNode {
	t.Helper()
	requireRoot(t)
	for _, p := range []string{"/usr/bin/etcd", bin("skiff-kubelet"), bin("skiffctl")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing (make build; Debian's etcd-server): %v", p, err)
		}
	}
	started := time.Now()
	m := &multiNode{mark: "skiff-mn-" + harness.RandHex(3)}
	dir, err := os.MkdirTemp("", m.mark)
	if err != nil {
		t.Fatal(err)
	}
	m.dir, m.pki = dir, filepath.Join(dir, "pki")
	// The machine as it was, compared when everything below is cleaned up
	// (this cleanup is registered first, so it runs last).
	snap := &localCluster{home: dir, ctrdState: "/run/" + m.mark, netnsDir: "/run/netns/" + m.mark, cgroupRoot: "/" + m.mark}
	before := snap.snapshot(t)
	t.Cleanup(func() {
		after := snap.snapshot(t)
		if after != before {
			t.Errorf("the machine differs after the suite's cleanup:\n--- before\n%s\n--- after\n%s", before, after)
		}
		if out, _ := exec.Command("ip", "netns", "list").CombinedOutput(); strings.Contains(string(out), m.mark) {
			t.Errorf("network namespaces left: %s", out)
		}
	})
	t.Cleanup(func() {
		harness.UnmountUnder(t, dir)
		harness.RemoveCgroups(t, "/"+m.mark)
		if !t.Failed() {
			_ = os.RemoveAll(dir)
		} else {
			t.Logf("the daemons' logs are kept in %s", dir)
		}
	})

	// The machines' network.
	run(t, "ip", "link", "add", mnBridge, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", mnBridge).Run() })
	run(t, "ip", "link", "set", mnBridge, "addrgenmode", "none")
	run(t, "ip", "addr", "add", mnAPI1+"/24", "dev", mnBridge)
	run(t, "ip", "addr", "add", mnAPI2+"/24", "dev", mnBridge)
	run(t, "ip", "link", "set", mnBridge, "up")
	for i := 1; i <= 3; i++ {
		n := &mnNode{name: fmt.Sprintf("n%d", i), ns: fmt.Sprintf("%s-n%d", m.mark, i), ip: fmt.Sprintf("203.0.113.1%d", i), dir: filepath.Join(dir, fmt.Sprintf("n%d", i))}
		if err := os.MkdirAll(n.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		veth := fmt.Sprintf("mnv%d", i)
		run(t, "ip", "netns", "add", n.ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n.ns).Run() })
		run(t, "ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", n.ns)
		t.Cleanup(func() { _ = exec.Command("ip", "link", "del", veth).Run() })
		run(t, "ip", "link", "set", veth, "addrgenmode", "none")
		run(t, "ip", "link", "set", veth, "master", mnBridge, "up")
		run(t, "ip", "-n", n.ns, "addr", "add", n.ip+"/24", "dev", "eth0")
		run(t, "ip", "-n", n.ns, "link", "set", "eth0", "up")
		run(t, "ip", "-n", n.ns, "link", "set", "lo", "up")
		run(t, "ip", "-n", n.ns, "route", "add", "default", "via", mnAPI1)
		run(t, "ip", "netns", "exec", n.ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
		m.nodes = append(m.nodes, n)
	}

	// One skiffctl certs run: the cluster's PKI, the etcd members', the
	// kubeconfigs of the control plane and the kubelets' serving pairs.
	run(t, bin("skiffctl"), "certs", "--dir", m.pki, "--kubeconfig-dir", dir,
		"--server", "https://"+mnAPI1+":6443", "--apiserver-san", mnAPI2,
		"--node", "n1", "--node", "n2", "--node", "n3",
		"--node-ip", "n1=203.0.113.11", "--node-ip", "n2=203.0.113.12", "--node-ip", "n3=203.0.113.13",
		"--etcd-member", "cp1=127.0.0.1", "--etcd-member", "cp2=127.0.0.1", "--etcd-member", "cp3=127.0.0.1")
	m.kubeconfig = filepath.Join(dir, "admin.kubeconfig")

	m.etcd = deploytest.NewEtcdCluster(t, filepath.Join(dir, "etcd"), m.pki, deploytest.FreePorts(t, 6))
	m.etcd.Start(t)

	for i, addr := range []string{mnAPI1, mnAPI2} {
		flags := filepath.Join(dir, fmt.Sprintf("apiserver-%d.yaml", i+1))
		writeFile(t, flags, fmt.Sprintf(`etcd-servers: [%s]
advertise-address: %s
bind-address: %s
secure-port: 6443
authorization-mode: [Node, RBAC]
service-cluster-ip-range: %s
enable-bootstrap-token-auth: true
anonymous-auth: true
audit-log-path: %s
`, strings.Join(m.etcd.ClientURLs(), ", "), addr, addr, mnServiceCIDR, filepath.Join(dir, fmt.Sprintf("audit-%d.log", i+1))))
		m.apis = append(m.apis, deploytest.StartUnit(t, fmt.Sprintf("apiserver-%d", i+1), "skiff-apiserver.service",
			[][2]string{{"/etc/skiff/apiserver.yaml", flags}, {"/etc/skiff/", dir + "/"}}, nil, nil, nil, dir))
	}
	admin := deploytest.TLSClient(t, filepath.Join(m.pki, "ca.crt"), filepath.Join(m.pki, "admin.crt"), filepath.Join(m.pki, "admin.key"))
	for _, addr := range []string{mnAPI1, mnAPI2} {
		m.waitFor(t, addr+" ready", 90*time.Second, func() error { _, err := deploytest.Get(admin, "https://"+addr+":6443/readyz"); return err })
	}
	m.cfg, err = clientcmd.BuildConfigFromFlags("", m.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	m.client = kubernetes.NewForConfigOrDie(m.cfg)

	leader := fmt.Sprintf("leader-elect: true\nleader-elect-lease-duration: %s\nleader-elect-renew-deadline: %s\nleader-elect-retry-period: %s\nbind-address: 127.0.0.1\nsecure-port: 0\n", mnLease, mnRenew, mnRetry)
	for i := 1; i <= 2; i++ {
		flags := filepath.Join(dir, fmt.Sprintf("controller-manager-%d.yaml", i))
		writeFile(t, flags, leader+fmt.Sprintf(`allocate-node-cidrs: true
cluster-cidr: %s
node-cidr-mask-size: 24
service-cluster-ip-range: %s
controllers: ["*", bootstrapsigner, tokencleaner]
approve-kubelet-serving-csrs: true
node-monitor-grace-period: %s
node-monitor-period: 1s
`, mnClusterCIDR, mnServiceCIDR, mnGrace))
		m.cms = append(m.cms, deploytest.StartUnit(t, fmt.Sprintf("controller-manager-%d", i), "skiff-controller-manager.service",
			[][2]string{{"/etc/skiff/controller-manager.yaml", flags}, {"/etc/skiff/", dir + "/"}}, nil, nil, nil, dir))
		flags = filepath.Join(dir, fmt.Sprintf("scheduler-%d.yaml", i))
		writeFile(t, flags, leader)
		m.scheds = append(m.scheds, deploytest.StartUnit(t, fmt.Sprintf("scheduler-%d", i), "skiff-scheduler.service",
			[][2]string{{"/etc/skiff/scheduler.yaml", flags}, {"/etc/skiff/", dir + "/"}}, nil, nil, nil, dir))
	}

	// Images: a registry on loopback, reached by the nodes at the bridge's
	// address.
	ctd := harness.StartContainerd(t)
	registry := harness.StartRegistry(t)
	harness.PushImage(t, harness.BuildBusyboxImage(t), registry, "library/busybox")
	mirror := fmt.Sprintf("%s:%d", mnAPI1, harness.FreePort(t))
	forward(t, mirror, registry)
	regFile := filepath.Join(dir, "registries.yaml")
	writeFile(t, regFile, fmt.Sprintf("mirrors:\n  docker.io:\n    endpoint:\n      - \"http://%s\"\n", mirror))

	// Join: one token, the printed command run on each node. The node
	// daemons run in the node's network namespace with nsenter --net (ip
	// netns exec would also mount a sysfs of the namespace's own, without
	// the cgroup filesystem the kubelet needs).
	join := strings.Fields(run(t, bin("skiffctl"), "--kubeconfig", m.kubeconfig, "token", "create", "--ttl", "30m", "--server", "https://"+mnAPI1+":6443"))
	if len(join) < 2 || join[1] != "join" {
		t.Fatalf("skiffctl token create printed %q", join)
	}
	for _, n := range m.nodes {
		boot := filepath.Join(n.dir, "bootstrap-kubelet.kubeconfig")
		run(t, "nsenter", append([]string{"--net=/run/netns/" + n.ns, bin("skiffctl")}, append(join[1:],
			"--bootstrap-kubeconfig", boot, "--ca-file", filepath.Join(n.dir, "ca.crt"), "--discovery-timeout", "60s")...)...)
		n.kubeletArgs = []string{"nsenter", "--net=/run/netns/" + n.ns, bin("skiff-kubelet"),
			"--bootstrap-kubeconfig=" + boot,
			"--kubeconfig=" + filepath.Join(n.dir, "kubelet.kubeconfig"),
			"--cert-dir=" + filepath.Join(n.dir, "pki"),
			"--rotate-certificates",
			// The serving pair from skiffctl certs, as the kubelet unit
			// has it (docs/operations.md); the client identity comes
			// from the TLS bootstrap.
			"--tls-cert-file=" + filepath.Join(m.pki, "kubelet-"+n.name+".crt"),
			"--tls-private-key-file=" + filepath.Join(m.pki, "kubelet-"+n.name+".key"),
			"--client-ca-file=" + filepath.Join(n.dir, "ca.crt"),
			"--node-name=" + n.name, "--node-ip=" + n.ip, "--address=" + n.ip, "--port=10250",
			"--containerd-address=" + ctd.Address, "--containerd-root=" + ctd.Dir,
			"--containerd-namespace=" + n.ns,
			"--root-dir=" + filepath.Join(n.dir, "kubelet"), "--netns-dir=" + filepath.Join(n.dir, "netns"),
			"--cgroup-root=/" + m.mark + "/" + n.name,
			"--registries-config=" + regFile, "--disable-default-registry-endpoint",
			"--cluster-cidr=" + mnClusterCIDR, "--manage-node-routes",
			"--local-path-dir=" + n.storage(), "--eviction-hard=memory.available<100Mi",
			"--cluster-dns=" + clusterDNS, "--cluster-domain=cluster.local",
			"--node-status-update-frequency=1s",
		}
		n.kubelet = deploytest.StartProcess(t, "kubelet-"+n.name, dir, nil, n.kubeletArgs...)
		n.proxy = deploytest.StartProcess(t, "proxy-"+n.name, dir, nil, "nsenter", "--net=/run/netns/"+n.ns, bin("skiff-proxy"),
			"--kubeconfig="+filepath.Join(dir, "proxy.kubeconfig"), "--hostname-override="+n.name,
			"--cluster-cidr="+mnClusterCIDR, "--service-cluster-ip-range="+mnServiceCIDR,
			"--egress-guard-allow-interfaces=skiff0,eth0", "--healthz-bind-address="+n.ip+":10256", "--metrics-bind-address=127.0.0.1:10249")
		// The cluster DNS on every worker from its unit and a flags file
		// as docs/operations.md has it (advertise-address: the node's);
		// names outside the cluster go to the test's bridge, where nothing
		// answers.
		flags := filepath.Join(n.dir, "dns.yaml")
		writeFile(t, flags, fmt.Sprintf(`advertise-address: %s
hostname-override: %s
cluster-ip: %s
cluster-domain: cluster.local
dns-port: 53
upstream: "%s:53"
health-bind-address: 127.0.0.1:8080
ready-bind-address: 127.0.0.1:8181
metrics-bind-address: 127.0.0.1:9153
`, n.ip, n.name, clusterDNS, mnAPI1))
		n.dns = deploytest.StartUnit(t, "dns-"+n.name, "skiff-dns.service",
			[][2]string{{"/etc/skiff/dns.yaml", flags}, {"/etc/skiff/", dir + "/"}}, nil, nil, []string{"nsenter", "--net=/run/netns/" + n.ns}, dir)
	}
	for _, n := range m.nodes {
		m.waitFor(t, n.name+" Ready with a pod CIDR", 120*time.Second, func() error { return m.nodeReady(n.name, true) })
	}
	m.setup = time.Since(started)
	t.Logf("set-up: %.1f s (3 etcd members, 2 API servers, 2 controller managers, 2 schedulers, 3 joined nodes Ready)", m.setup.Seconds())
	return m
}

// nodeReady is nil when the Node's Ready condition is ready (True, or not
// True when ready is false) and, ready, it has a pod CIDR.
func (m *multiNode) nodeReady(name string, ready bool) error {
	n, err := m.client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if (c.Status == corev1.ConditionTrue) != ready {
				return fmt.Errorf("Ready=%s (%s)", c.Status, c.Message)
			}
			if ready && n.Spec.PodCIDR == "" {
				return fmt.Errorf("no pod CIDR")
			}
			// Ready to take pods: the node lifecycle controller has also
			// lifted the taints of a node not ready.
			for _, taint := range n.Spec.Taints {
				if ready && (taint.Key == corev1.TaintNodeNotReady || taint.Key == corev1.TaintNodeUnreachable) {
					return fmt.Errorf("still tainted %s", taint.ToString())
				}
			}
			return nil
		}
	}
	return fmt.Errorf("no Ready condition")
}

// inNode calls fn with this thread in node n's network namespace.
func (m *multiNode) inNode(t *testing.T, n *mnNode, fn func()) {
	t.Helper()
	(&cluster{outside: n.ns}).inOutside(t, fn)
}

// getFrom fetches http://addr/ from node n's namespace.
func (m *multiNode) getFrom(t *testing.T, n *mnNode, addr string) (string, error) {
	t.Helper()
	var conn net.Conn
	var err error
	m.inNode(t, n, func() { conn, err = net.DialTimeout("tcp", addr, 2*time.Second) })
	if err != nil {
		return "", err
	}
	return httpGetOn(conn, addr)
}

// webDeployment serves its pod's name on 8080, its replicas spread over
// the nodes (topology spread), tolerating a lost node for mnToleration
// seconds.
func webDeployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					AutomountServiceAccountToken:  ptr.To(false),
					// One per node; a node with a taint the pod does not
					// tolerate for scheduling (a lost one) does not count.
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule,
						LabelSelector:    &metav1.LabelSelector{MatchLabels: labels},
						NodeTaintsPolicy: ptr.To(corev1.NodeInclusionPolicyHonor),
					}},
					Tolerations: []corev1.Toleration{
						{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](mnToleration)},
						{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](mnToleration)},
					},
					Containers: []corev1.Container{{
						Name: "web", Image: "busybox",
						Command: []string{"sh", "-c", "mkdir -p /www && echo $HOSTNAME > /www/index.html && exec httpd -f -p 8080 -h /www"},
						Ports:   []corev1.ContainerPort{{ContainerPort: 8080}},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
							PeriodSeconds: 1},
					}},
				},
			},
		},
	}
}

// readyPods waits until selector has want pods not being deleted, all
// Ready and none on avoid, and returns them. (A lost node's evicted pods
// stay, being deleted, until its kubelet is back.)
func (m *multiNode) readyPods(t *testing.T, selector string, want int, avoid string, timeout time.Duration) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	m.waitFor(t, fmt.Sprintf("%d Ready pods %s, none on %q", want, selector, avoid), timeout, func() error {
		list, err := m.client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		pods = pods[:0]
		var states []string
		live := 0
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				live++
			}
			states = append(states, fmt.Sprintf("%s on %q %s ready=%v", p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p)))
			if p.DeletionTimestamp == nil && podReady(&p) && p.Spec.NodeName != avoid {
				pods = append(pods, p)
			}
		}
		if len(pods) != want || live != want {
			return fmt.Errorf("%v", states)
		}
		return nil
	})
	return pods
}

func (m *multiNode) node(name string) *mnNode {
	for _, n := range m.nodes {
		if n.name == name {
			return n
		}
	}
	return nil
}

func TestMultiNode(t *testing.T) {
	m := startMultiNode(t)
	ctx := context.Background()

	t.Run("PodsAcrossNodesAndAService", func(t *testing.T) {
		// One pod per node: the scheduler places each by its node selector.
		for _, n := range m.nodes {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hello-" + n.name, Labels: map[string]string{"app": "hello", "node": n.name}},
				Spec: webDeployment("hello", 1).Spec.Template.Spec}
			p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": n.name}
			p.Spec.TopologySpreadConstraints = nil
			if _, err := m.client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		pods := m.readyPods(t, "app=hello", 3, "", 3*time.Minute)
		on := map[string]string{}
		for _, p := range pods {
			on[p.Spec.NodeName] = p.Name
		}
		if len(on) != 3 {
			t.Fatalf("the 3 pods are on %v, not one per node", on)
		}
		// Every node reaches every pod by its IP: its own over its bridge,
		// the others' through the routes to their pod CIDRs.
		for _, n := range m.nodes {
			for _, p := range pods {
				addr := net.JoinHostPort(p.Status.PodIP, "8080")
				m.waitFor(t, n.name+" reaches "+p.Name+" at "+addr, 30*time.Second, func() error {
					out, err := m.getFrom(t, n, addr)
					if err == nil && !strings.Contains(out, p.Name) {
						err = fmt.Errorf("answered %q", out)
					}
					return err
				})
			}
		}
		// A pod reaches the pods on the other nodes (kubectl exec through
		// the API server to the kubelet of its node).
		for _, from := range pods {
			for _, to := range pods {
				if from.Spec.NodeName == to.Spec.NodeName {
					continue
				}
				m.waitFor(t, fmt.Sprintf("%s (on %s) reaches %s (on %s)", from.Name, from.Spec.NodeName, to.Name, to.Spec.NodeName), 30*time.Second, func() error {
					out, err := (&cluster{kubeconfig: m.kubeconfig}).fromPod(t, from.Name, "http://"+net.JoinHostPort(to.Status.PodIP, "8080"))
					if err == nil && out != to.Name {
						err = fmt.Errorf("answered %q", out)
					}
					return err
				})
			}
		}
		// A Service answers from every node, with every pod behind it.
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hello"}, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "hello"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		}}
		svc, err := m.client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		addr := net.JoinHostPort(svc.Spec.ClusterIP, "80")
		for _, n := range m.nodes {
			seen := map[string]bool{}
			m.waitFor(t, "the Service from "+n.name+" answered by each pod", 60*time.Second, func() error {
				out, err := m.getFrom(t, n, addr)
				if err != nil {
					return err
				}
				for _, p := range pods {
					if out == p.Name {
						seen[p.Name] = true
					}
				}
				for _, p := range pods {
					if !seen[p.Name] {
						return fmt.Errorf("not yet answered by %s; seen %v", p.Name, seen)
					}
				}
				return nil
			})
		}
		m.dnsAnswers(t, svc, pods)
	})

	t.Run("NodePortsFromPodsOnEveryNode", func(t *testing.T) {
		m.nodePortsFromPods(t)
	})

	t.Run("StatefulSetClaimsOnTheirNodes", func(t *testing.T) {
		m.localPathStatefulSet(t)
	})

	t.Run("NodeLossReschedulesAndRejoins", func(t *testing.T) {
		if _, err := m.client.AppsV1().Deployments("default").Create(ctx, webDeployment("web", 3), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pods := m.readyPods(t, "app=web", 3, "", 2*time.Minute)
		// Three schedulable nodes, maxSkew 1: one replica on each.
		m.onePerNode(t, pods)
		lost := m.node(pods[0].Spec.NodeName)
		lostAt := time.Now()
		lost.kubelet.Stop()
		m.waitFor(t, lost.name+" NotReady", mnGrace+30*time.Second, func() error { return m.nodeReady(lost.name, false) })
		notReady := time.Since(lostAt)
		moved := m.readyPods(t, "app=web", 3, lost.name, 2*time.Minute)
		rescheduled := time.Since(lostAt)
		t.Logf("node loss: NotReady after %.1f s, its pods Ready on the other nodes after %.1f s (node-monitor-grace-period %s, tolerationSeconds %d)",
			notReady.Seconds(), rescheduled.Seconds(), mnGrace, mnToleration)
		for _, p := range moved {
			if p.Spec.NodeName == lost.name {
				t.Errorf("%s still on %s", p.Name, lost.name)
			}
		}
		// It comes back with --local-path-dir "": no local-path
		// provisioner on it (shown below).
		for i, a := range lost.kubeletArgs {
			if strings.HasPrefix(a, "--local-path-dir=") {
				lost.kubeletArgs[i] = "--local-path-dir="
			}
		}
		lost.kubelet = deploytest.StartProcess(t, "kubelet-"+lost.name, m.dir, nil, lost.kubeletArgs...)
		m.waitFor(t, lost.name+" Ready again", 90*time.Second, func() error { return m.nodeReady(lost.name, true) })
		n, err := m.client.CoreV1().Nodes().Get(ctx, lost.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, taint := range n.Spec.Taints {
			if taint.Effect == corev1.TaintEffectNoExecute {
				t.Errorf("%s rejoined with taint %v", lost.name, taint)
			}
		}
		// The replicas stay where they are: one node has two of them and
		// the rejoined one none, as upstream (the scheduler places pods;
		// it does not move running ones back).
		m.noLocalPath(t, lost)
	})

	t.Run("EtcdMemberAndAPIServerLostUnderLoad", func(t *testing.T) {
		m.writesSurvive(t)
	})

	t.Run("DrainRespectsPodDisruptionBudget", func(t *testing.T) {
		pods := m.readyPods(t, "app=web", 3, "", 2*time.Minute)
		node := pods[0].Spec.NodeName
		// A budget that allows no disruption: drain may not evict.
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		}}
		if _, err := m.client.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		m.waitFor(t, "the budget observed", 30*time.Second, func() error {
			p, err := m.client.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
			if err == nil && p.Status.ObservedGeneration != p.Generation {
				err = fmt.Errorf("not observed yet")
			}
			return err
		})
		drain := func(timeout string) (string, error) {
			out, err := exec.Command(bin("skiffctl"), "--kubeconfig", m.kubeconfig, "drain", node, "--force", "--ignore-daemonsets",
				"--grace-period", "0", "--timeout", timeout).CombinedOutput()
			return string(out), err
		}
		out, err := drain("8s")
		if err == nil {
			t.Fatalf("drain of %s succeeded against a budget that allows no disruption:\n%s", node, out)
		}
		if !strings.Contains(out, "disruption budget") {
			t.Errorf("drain's failure does not name the budget:\n%s", out)
		}
		if p, err := m.client.CoreV1().Pods("default").Get(ctx, pods[0].Name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
			t.Errorf("%s was evicted against the budget: %v", pods[0].Name, err)
		}
		// The budget gone, drain moves the pods.
		if err := m.client.PolicyV1().PodDisruptionBudgets("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if out, err := drain("90s"); err != nil {
			t.Fatalf("drain of %s: %v\n%s", node, err, out)
		}
		n, err := m.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil || !n.Spec.Unschedulable {
			t.Errorf("%s not cordoned after drain: %v", node, err)
		}
		m.readyPods(t, "app=web", 3, node, 2*time.Minute)
		if _, err := m.client.CoreV1().Pods("default").Get(ctx, "hello-"+node, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the bare pod hello-%s is still there after drain --force: %v", node, err)
		}
		run(t, bin("skiffctl"), "--kubeconfig", m.kubeconfig, "uncordon", node)
	})

	t.Run("LeadersLost", func(t *testing.T) {
		for _, c := range []struct {
			lease string
			procs []*deploytest.Process
		}{{"kube-controller-manager", m.cms}, {"kube-scheduler", m.scheds}} {
			m.takeOver(t, c.lease, c.procs)
		}
	})
}

// writesSurvive writes ConfigMaps through both API servers without pause,
// kills an etcd member and the second API server half-way, and checks that
// every acknowledged write is there and that a watcher, resumed on the
// first API server from the last resourceVersion it saw, got each write's
// ADDED event exactly once.
func (m *multiNode) writesSurvive(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ns = "default"
	cfg2 := rest.CopyConfig(m.cfg)
	cfg2.Host = "https://" + mnAPI2 + ":6443"
	clients := []kubernetes.Interface{m.client, kubernetes.NewForConfigOrDie(cfg2)}
	sel := "load=survive"

	start, err := clients[1].CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	// The watcher starts on the API server that is killed.
	var mu sync.Mutex
	events := map[string]int{}
	var lastRV string
	// What a watcher must never see: a resourceVersion not above the one
	// before it (a bookmark may repeat it), an event other than ADDED for
	// these ConfigMaps, an ERROR (410 Gone: events it can no longer get).
	var disorder, broken []string
	resumes := 0
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		rv := start.ResourceVersion
		last, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			mu.Lock()
			disorder = append(disorder, fmt.Sprintf("the list's resourceVersion %q: %v", rv, err))
			mu.Unlock()
			return
		}
		for i := 0; ctx.Err() == nil; i++ {
			w, err := clients[(i+1)%2].CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond): // a retry's pause
				}
				continue
			}
			if i > 0 {
				mu.Lock()
				resumes++
				mu.Unlock()
			}
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					// 410 Gone is events the watcher can no longer get:
					// a loss. Other errors are the stream broken (client-go
					// reports "unable to decode an event from the watch
					// stream" when its server dies or ctx ends): the
					// watch ends and resumes from rv.
					err := apierrors.FromObject(ev.Object)
					mu.Lock()
					if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
						disorder = append(disorder, fmt.Sprintf("ERROR from API server %d after resourceVersion %s: %v", 2-i%2, rv, err))
					} else if ctx.Err() == nil {
						broken = append(broken, fmt.Sprintf("API server %d after resourceVersion %s: %v", 2-i%2, rv, err))
					}
					mu.Unlock()
					continue
				}
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					continue
				}
				n, err := strconv.ParseUint(cm.ResourceVersion, 10, 64)
				mu.Lock()
				switch {
				case err != nil:
					disorder = append(disorder, fmt.Sprintf("%s %s: resourceVersion %q: %v", ev.Type, cm.Name, cm.ResourceVersion, err))
				case n < last || (n == last && ev.Type != watch.Bookmark):
					disorder = append(disorder, fmt.Sprintf("%s %s at resourceVersion %d after %d", ev.Type, cm.Name, n, last))
				case ev.Type != watch.Added && ev.Type != watch.Bookmark:
					disorder = append(disorder, fmt.Sprintf("%s %s at resourceVersion %d", ev.Type, cm.Name, n))
				}
				if err == nil && n > last {
					last = n
				}
				rv = cm.ResourceVersion
				if ev.Type == watch.Added {
					events[cm.Name]++
					lastRV = rv
				}
				mu.Unlock()
			}
			w.Stop()
		}
	}()

	var acked []string
	var failed int
	killAt := 150
	for i := 0; i < 300; i++ {
		if i == killAt {
			m.etcd.Process("cp3").Stop()
			m.apis[1].Stop()
			t.Logf("write %d: etcd member cp3 and API server %s killed", i, mnAPI2)
		}
		name := fmt.Sprintf("survive-%03d", i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"load": "survive"}}, Data: map[string]string{"i": fmt.Sprint(i)}}
		var err error
		for try := 0; try < 2; try++ {
			// Alternate between the servers; a client fails over to the
			// other one when its server does not answer.
			c := clients[(i+try)%2]
			wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
			_, err = c.CoreV1().ConfigMaps(ns).Create(wctx, cm, metav1.CreateOptions{})
			wcancel()
			if err == nil || apierrors.IsAlreadyExists(err) {
				err = nil
				break
			}
		}
		if err != nil {
			failed++
			continue
		}
		acked = append(acked, name)
	}
	if failed > len(acked)/10 {
		t.Errorf("%d of 300 writes failed: the cluster did not keep serving", failed)
	}
	list, err := m.client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, cm := range list.Items {
		have[cm.Name] = true
	}
	for _, name := range acked {
		if !have[name] {
			t.Errorf("acknowledged write %s is lost", name)
		}
	}
	m.waitFor(t, "the watcher to see every write", 30*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		for name := range have {
			if events[name] == 0 {
				return fmt.Errorf("no ADDED event for %s (last resourceVersion %s)", name, lastRV)
			}
		}
		return nil
	})
	cancel()
	<-watchDone
	mu.Lock()
	defer mu.Unlock()
	var repeated []string
	for name, n := range events {
		if n != 1 || !have[name] {
			repeated = append(repeated, fmt.Sprintf("%s×%d", name, n))
		}
	}
	sort.Strings(repeated)
	if len(repeated) > 0 {
		t.Errorf("events repeated (or of no write there): %v", repeated)
	}
	for _, name := range acked {
		if events[name] != 1 {
			t.Errorf("acknowledged write %s seen %d times by the watcher", name, events[name])
		}
	}
	if len(disorder) > 0 {
		t.Errorf("the watcher saw, across its %d resumptions:\n%s", resumes, strings.Join(disorder, "\n"))
	}
	if len(broken) > 0 {
		t.Logf("watch streams broken (then resumed): %v", broken)
	}
	if resumes == 0 {
		t.Errorf("the watcher never resumed: the API server it watched was not the one killed")
	}
	t.Logf("%d writes acknowledged, %d failed while the member and the server were lost; every one there, one ADDED event each, resourceVersions increasing across %d resumptions of the watch", len(acked), failed, resumes)
}

// takeOver kills the holder of lease among procs and waits for another to
// hold it, within the lease duration and the retry periods of noticing it.
func (m *multiNode) takeOver(t *testing.T, lease string, procs []*deploytest.Process) {
	t.Helper()
	ctx := context.Background()
	get := func() (*coordinationv1.Lease, error) {
		return m.client.CoordinationV1().Leases("kube-system").Get(ctx, lease, metav1.GetOptions{})
	}
	var holder string
	m.waitFor(t, lease+" held", time.Minute, func() error {
		l, err := get()
		if err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return fmt.Errorf("no holder")
		}
		holder = *l.Spec.HolderIdentity
		return nil
	})
	// The holder is the process whose log says it acquired the lease.
	var leader *deploytest.Process
	for _, p := range procs {
		log, _ := os.ReadFile(p.LogFile())
		if strings.Contains(string(log), "successfully acquired lease") && !p.ExitedUnexpectedly() {
			if leader != nil {
				t.Fatalf("both %s and %s logged acquiring %s", leader.Name(), p.Name(), lease)
			}
			leader = p
		}
	}
	if leader == nil {
		t.Fatalf("no process logged acquiring %s (held by %s)", lease, holder)
	}
	killed := time.Now()
	leader.Stop()
	m.waitFor(t, lease+" taken over", mnLease+mnRetry+10*time.Second, func() error {
		l, err := get()
		if err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == holder {
			return fmt.Errorf("still held by %s", holder)
		}
		return nil
	})
	took := time.Since(killed)
	t.Logf("%s: leader %s killed, taken over after %.1f s (lease %s)", lease, leader.Name(), took.Seconds(), mnLease)
	// The standby takes over once the lease has not been renewed for the
	// lease duration since it last saw a renewal. It looks every retry
	// period plus client-go's jitter (wait.JitterUntil with factor 1.2: up
	// to 2.2 retry periods apart), so it may see the last renewal before
	// the kill up to that late, and the expiry up to that late again; a
	// second more for the API round trips on a loaded machine.
	poll := time.Duration(2.2 * float64(mnRetry))
	if limit := mnLease + 2*poll + time.Second; took > limit {
		t.Errorf("%s taken over after %v, more than %v (the lease duration %v, two polls of the standby and a second)", lease, took, limit, mnLease)
	}
}

// onePerNode fails the test unless pods are on as many nodes as there are
// pods, saying where each is and the nodes' taints and conditions (what
// the topology spread counted).
func (m *multiNode) onePerNode(t *testing.T, pods []corev1.Pod) {
	t.Helper()
	on := map[string][]string{}
	for _, p := range pods {
		on[p.Spec.NodeName] = append(on[p.Spec.NodeName], p.Name)
	}
	if len(on) == len(pods) {
		return
	}
	var nodes []string
	if list, err := m.client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{}); err == nil {
		for _, n := range list.Items {
			var conds []string
			for _, c := range n.Status.Conditions {
				conds = append(conds, fmt.Sprintf("%s=%s", c.Type, c.Status))
			}
			nodes = append(nodes, fmt.Sprintf("%s unschedulable=%v taints=%v %v", n.Name, n.Spec.Unschedulable, n.Spec.Taints, conds))
		}
	}
	t.Errorf("%d pods on %d nodes, not one per node: %v\nnodes: %s", len(pods), len(on), on, strings.Join(nodes, "\n"))
}

// dnsAnswers: every node's skiff-dns is an endpoint of kube-dns, and the
// Service's name resolves to its cluster IP from each node's namespace
// through the kube-dns address and from the pod on each node (its
// resolv.conf, the search path), which then reaches the Service by name.
func (m *multiNode) dnsAnswers(t *testing.T, svc *corev1.Service, pods []corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	m.waitFor(t, "kube-dns's endpoints: the three nodes' skiff-dns", 60*time.Second, func() error {
		slices, err := m.client.DiscoveryV1().EndpointSlices("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=kube-dns"})
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if ptr.Deref(e.Conditions.Ready, true) {
					for _, a := range e.Addresses {
						have[a] = true
					}
				}
			}
		}
		for _, n := range m.nodes {
			if !have[n.ip] {
				return fmt.Errorf("no ready endpoint %s (%s); have %v", n.ip, n.name, have)
			}
		}
		return nil
	})
	fqdn := svc.Name + "." + svc.Namespace + ".svc.cluster.local"
	for _, n := range m.nodes {
		m.waitFor(t, fqdn+" from "+n.name+"'s namespace through "+clusterDNS, 30*time.Second, func() error {
			var r *dns.Msg
			var err error
			m.inNode(t, n, func() {
				q := new(dns.Msg)
				q.SetQuestion(fqdn+".", dns.TypeA)
				r, _, err = (&dns.Client{Timeout: 2 * time.Second}).Exchange(q, clusterDNS+":53")
			})
			if err != nil {
				return err
			}
			if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
				return fmt.Errorf("answered %s", r)
			}
			if a, ok := r.Answer[0].(*dns.A); !ok || a.A.String() != svc.Spec.ClusterIP {
				return fmt.Errorf("answered %s, want %s", r.Answer[0], svc.Spec.ClusterIP)
			}
			return nil
		})
	}
	c := &cluster{kubeconfig: m.kubeconfig}
	names := map[string]bool{}
	for _, p := range pods {
		names[p.Name] = true
	}
	for _, p := range pods {
		m.waitFor(t, fmt.Sprintf("nslookup %s in %s (on %s)", svc.Name, p.Name, p.Spec.NodeName), 30*time.Second, func() error {
			out, _ := c.inPod(t, p.Name, "nslookup "+svc.Name)
			if !resolvedTo(out, fqdn, svc.Spec.ClusterIP) {
				return fmt.Errorf("%s", out)
			}
			return nil
		})
		m.waitFor(t, fmt.Sprintf("http://%s from %s (on %s)", svc.Name, p.Name, p.Spec.NodeName), 30*time.Second, func() error {
			body, err := c.inPod(t, p.Name, "timeout 3 wget -q -O - http://"+svc.Name)
			if err == nil && !names[body] {
				err = fmt.Errorf("answered %q", body)
			}
			return err
		})
	}
}

// localPathStatefulSet is issue 23's "works the same on several nodes": a
// StatefulSet whose volumeClaimTemplates get the default class
// (local-path, WaitForFirstConsumer), its replicas spread one per node.
// Each claim is provisioned by the kubelet of the node its pod landed on:
// its PersistentVolume has that node's affinity and its directory is in
// that node's --local-path-dir and no other's. A deleted pod comes back on
// the same node and reads what its predecessor wrote. Deleting the set and
// its claims removes the volumes and their directories (Delete reclaim).
func (m *multiNode) localPathStatefulSet(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": "data"}
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](3), ServiceName: "data",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](0),
				AutomountServiceAccountToken:  ptr.To(false),
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
					MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
					LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
				}},
				Containers: []corev1.Container{{
					Name: "data", Image: "busybox",
					// The first pod of a claim writes an id; the later ones
					// keep it.
					Command:      []string{"sh", "-c", "[ -s /data/id ] || cat /proc/sys/kernel/random/uuid >/data/id; exec sleep 3600"},
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				}},
			}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("16Mi")}},
				},
			}},
		},
	}
	if _, err := m.client.AppsV1().StatefulSets("default").Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := m.readyPods(t, "app=data", 3, "", 3*time.Minute)
	m.onePerNode(t, pods)
	c := &cluster{kubeconfig: m.kubeconfig}
	type replica struct {
		node, id, dir string
	}
	replicas := map[string]replica{}
	for _, p := range pods {
		claim, err := m.client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data-"+p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(claim.Spec.StorageClassName, "") != "local-path" || claim.Status.Phase != corev1.ClaimBound {
			t.Fatalf("claim %s: class %v, phase %s; want local-path, Bound", claim.Name, claim.Spec.StorageClassName, claim.Status.Phase)
		}
		pv, err := m.client.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var affinity []string
		if pv.Spec.NodeAffinity != nil && pv.Spec.NodeAffinity.Required != nil {
			for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
				for _, e := range term.MatchExpressions {
					affinity = append(affinity, fmt.Sprintf("%s %s %v", e.Key, e.Operator, e.Values))
				}
			}
		}
		if want := fmt.Sprintf("%s In [%s]", corev1.LabelHostname, p.Spec.NodeName); len(affinity) != 1 || affinity[0] != want {
			t.Errorf("volume %s of %s (on %s) has node affinity %v, want %s", pv.Name, p.Name, p.Spec.NodeName, affinity, want)
		}
		if pv.Spec.Local == nil {
			t.Fatalf("volume %s is not a local volume: %+v", pv.Name, pv.Spec.PersistentVolumeSource)
		}
		dir := pv.Spec.Local.Path
		node := m.node(p.Spec.NodeName)
		if filepath.Dir(dir) != node.storage() {
			t.Errorf("volume %s's directory %s is not in %s's local path %s", pv.Name, dir, node.name, node.storage())
		}
		for _, other := range m.nodes {
			if other == node {
				continue
			}
			if _, err := os.Stat(filepath.Join(other.storage(), filepath.Base(dir))); err == nil {
				t.Errorf("%s's directory %s is also in %s's local path", claim.Name, filepath.Base(dir), other.name)
			}
		}
		id, err := c.inPod(t, p.Name, "cat /data/id")
		if err != nil || id == "" {
			t.Fatalf("%s's /data/id: %q, %v", p.Name, id, err)
		}
		onDisk, err := os.ReadFile(filepath.Join(dir, "id"))
		if err != nil || strings.TrimSpace(string(onDisk)) != id {
			t.Errorf("%s on %s: %s/id is %q (%v), the pod wrote %q", p.Name, node.name, dir, onDisk, err, id)
		}
		replicas[p.Name] = replica{node: node.name, id: id, dir: dir}
	}

	// A pod deleted comes back on its volume's node with its data.
	gone := pods[0]
	if err := m.client.CoreV1().Pods("default").Delete(ctx, gone.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	var back corev1.Pod
	m.waitFor(t, gone.Name+" back and Ready", 2*time.Minute, func() error {
		p, err := m.client.CoreV1().Pods("default").Get(ctx, gone.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.UID == gone.UID || p.DeletionTimestamp != nil || !podReady(p) {
			return fmt.Errorf("uid %s (was %s), on %q, %s, ready=%v", p.UID, gone.UID, p.Spec.NodeName, p.Status.Phase, podReady(p))
		}
		back = *p
		return nil
	})
	want := replicas[gone.Name]
	if back.Spec.NodeName != want.node {
		t.Errorf("%s came back on %s, its volume is on %s", gone.Name, back.Spec.NodeName, want.node)
	}
	if id, err := c.inPod(t, gone.Name, "cat /data/id"); err != nil || id != want.id {
		t.Errorf("%s came back reading %q (%v), its predecessor wrote %q", gone.Name, id, err, want.id)
	}
	t.Logf("3 claims provisioned one per node (%v); %s deleted came back on %s with its data", replicas, gone.Name, back.Spec.NodeName)

	// The set and its claims deleted: the volumes and their directories go.
	if err := m.client.AppsV1().StatefulSets("default").Delete(ctx, "data", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	m.waitFor(t, "the set's pods gone", 2*time.Minute, func() error {
		list, err := m.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=data"})
		if err == nil && len(list.Items) > 0 {
			err = fmt.Errorf("%d pods left", len(list.Items))
		}
		return err
	})
	for name := range replicas {
		if err := m.client.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "data-"+name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	m.waitFor(t, "the volumes and their directories removed", 2*time.Minute, func() error {
		pvs, err := m.client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(pvs.Items) > 0 {
			return fmt.Errorf("%d volumes left, the first %s %s", len(pvs.Items), pvs.Items[0].Name, pvs.Items[0].Status.Phase)
		}
		for name, r := range replicas {
			if _, err := os.Stat(r.dir); err == nil {
				return fmt.Errorf("%s's directory %s is still there", name, r.dir)
			}
		}
		return nil
	})
}

// noLocalPath shows --local-path-dir "" on node n (docs/storage.md): a
// claim of the default class whose pod the scheduler puts on n is handed
// to the local-path provisioner for n, and none runs there: it stays
// Pending, with no volume made for it and no directory on any node.
func (m *multiNode) noLocalPath(t *testing.T, n *mnNode) {
	t.Helper()
	ctx := context.Background()
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nowhere"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("16Mi")}},
	}}
	claim, err := m.client.CoreV1().PersistentVolumeClaims("default").Create(ctx, claim, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "nowhere"}, Spec: corev1.PodSpec{
		NodeSelector:                  map[string]string{corev1.LabelHostname: n.name},
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		AutomountServiceAccountToken:  ptr.To(false),
		Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "3600"},
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "nowhere"}}}},
	}}
	if _, err := m.client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = m.client.CoreV1().Pods("default").Delete(ctx, "nowhere", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		_ = m.client.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "nowhere", metav1.DeleteOptions{})
	}()
	// The scheduler chose n for the claim.
	m.waitFor(t, "the claim handed to the local-path provisioner for "+n.name, time.Minute, func() error {
		c, err := m.client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "nowhere", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.Annotations["volume.kubernetes.io/selected-node"] != n.name || c.Annotations["volume.kubernetes.io/storage-provisioner"] != "skiff.dev/local-path" {
			return fmt.Errorf("annotations %v", c.Annotations)
		}
		return nil
	})
	// And stays Pending: no kubelet provisions it. (A claim handed to a
	// node that has the provisioner is a volume within a second or two:
	// StatefulSetClaimsOnTheirNodes.)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := m.client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "nowhere", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Status.Phase != corev1.ClaimPending || c.Spec.VolumeName != "" {
			t.Fatalf("the claim for %s (--local-path-dir \"\") is %s, volume %q", n.name, c.Status.Phase, c.Spec.VolumeName)
		}
		if _, err := m.client.CoreV1().PersistentVolumes().Get(ctx, "pvc-"+string(claim.UID), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("a volume was made for the claim on %s (--local-path-dir \"\"): %v", n.name, err)
		}
		for _, other := range m.nodes {
			if dirs, _ := filepath.Glob(filepath.Join(other.storage(), "pvc-"+string(claim.UID)+"_*")); len(dirs) > 0 {
				t.Fatalf("a directory was made for the claim: %v", dirs)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second): // the next look
		}
	}
	p, err := m.client.CoreV1().Pods("default").Get(ctx, "nowhere", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase == corev1.PodRunning {
		t.Errorf("the pod of the unprovisioned claim runs on %q", p.Spec.NodeName)
	}
	t.Logf("%s with --local-path-dir \"\": its claim stayed Pending for 10 s, no volume, no directory", n.name)
}

// nodePortsFromPods checks the paths of upstream's NodePort conformance
// tests on several nodes: a pod reaches a NodePort at every node's
// address, whichever node the answering pod is on (its own, the addressed
// node, a third). One Service per pod, the pod its only endpoint, makes
// every path taken; with ClientIP session affinity over all three pods,
// each asker's answers from one node's NodePort come from one pod.
func (m *multiNode) nodePortsFromPods(t *testing.T) {
	ctx := context.Background()
	pods := m.readyPods(t, "app=hello", 3, "", time.Minute)
	c := &cluster{kubeconfig: m.kubeconfig}
	nodePort := func(name string, selector map[string]string, affinity corev1.ServiceAffinity) int32 {
		t.Helper()
		svc, err := m.client.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, Selector: selector, SessionAffinity: affinity,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.client.CoreV1().Services("default").Delete(ctx, name, metav1.DeleteOptions{}) })
		return svc.Spec.Ports[0].NodePort
	}
	type served struct {
		pod  corev1.Pod
		port int32
	}
	var single []served
	for _, p := range pods {
		single = append(single, served{p, nodePort("np-"+p.Spec.NodeName, map[string]string{"app": "hello", "node": p.Spec.NodeName}, corev1.ServiceAffinityNone)})
	}
	for _, from := range pods {
		for _, n := range m.nodes {
			for _, s := range single {
				url := "http://" + net.JoinHostPort(n.ip, strconv.Itoa(int(s.port)))
				m.waitFor(t, fmt.Sprintf("%s (on %s) reaches %s (on %s) at %s's NodePort %s", from.Name, from.Spec.NodeName, s.pod.Name, s.pod.Spec.NodeName, n.name, url), 30*time.Second, func() error {
					out, err := c.fromPod(t, from.Name, url)
					if err == nil && out != s.pod.Name {
						err = fmt.Errorf("answered %q", out)
					}
					return err
				})
			}
		}
	}
	sticky := nodePort("np-sticky", map[string]string{"app": "hello"}, corev1.ServiceAffinityClientIP)
	for _, from := range pods {
		for _, n := range m.nodes {
			url := "http://" + net.JoinHostPort(n.ip, strconv.Itoa(int(sticky)))
			var first string
			m.waitFor(t, fmt.Sprintf("%s (on %s) reaches %s's sticky NodePort %s", from.Name, from.Spec.NodeName, n.name, url), 30*time.Second, func() error {
				var err error
				first, err = c.fromPod(t, from.Name, url)
				return err
			})
			seen := answers(t, 5, func() (string, error) { return c.fromPod(t, from.Name, url) })
			if len(seen) != 1 || seen[first] != 5 {
				t.Errorf("%s (on %s) at %s's sticky NodePort: first %s, then %v; want every answer from %s", from.Name, from.Spec.NodeName, n.name, first, seen, first)
			}
		}
	}
}
