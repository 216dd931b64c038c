//go:build walkthrough || multinode

// make node-up and make node-down (deploy/local-node.sh), a step of
// TestWalkthrough on its make up's cluster.

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"skiff.dev/kubelet/test/harness"
)

// The node make node-up adds, and its address (local-node.sh: the first
// node gets 198.51.100.2 on skiff-nodes0).
const (
	secondNode   = "vm2"
	secondNodeIP = "198.51.100.2"
)

// nodeState lists what of make node-up's node NAME is on the machine
// outside what snapshot sees: its network namespace and the paths of its
// containerd state, pod network namespaces and cgroups.
func (c *localCluster) nodeState(t *testing.T, name string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(c.home))
	ns := "skiff-" + hex.EncodeToString(sum[:])[:8] + "-node-" + name
	var b strings.Builder
	for _, l := range strings.Split(run(t, "ip", "netns", "list"), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == ns {
			fmt.Fprintln(&b, "netns", f[0])
		}
	}
	suffix := "-node-" + name
	for _, p := range []string{"/run/netns/" + ns, c.ctrdState + suffix, c.netnsDir + suffix,
		"/sys/fs/cgroup" + c.cgroupRoot + suffix, "/sys/fs/cgroup/unified" + c.cgroupRoot + suffix, "/sys/fs/cgroup/memory" + c.cgroupRoot + suffix} {
		if _, err := os.Stat(p); err == nil {
			fmt.Fprintln(&b, "path", p)
		}
	}
	return b.String()
}

// settled is the machine's snapshot once it holds still: no pod is
// terminating (the walk-through's rollout leaves its old pods stopping for
// their grace period), no IPv6 address is still tentative (a new pod's
// veth), and two snapshots in a row are the same.
func (c *localCluster) settled(t *testing.T) string {
	t.Helper()
	var prev, snap string
	harness.Poll(t, 90*time.Second, "the machine to hold still (no pod terminating, no tentative address)", func() (bool, string) {
		pods, err := c.kubectlErr("get", "pods", "-A", "-o", "jsonpath={range .items[?(@.metadata.deletionTimestamp)]}{.metadata.name} {end}")
		if err != nil || strings.TrimSpace(pods) != "" {
			return false, fmt.Sprintf("terminating: %s %v", pods, err)
		}
		prev, snap = snap, c.snapshot(t)
		if strings.Contains(snap, "tentative") {
			return false, "an address is tentative"
		}
		return snap == prev, "the snapshot changed"
	})
	return snap
}

// kubectlErr runs the real kubectl against the cluster, for at most 40 s.
func (c *localCluster) kubectlErr(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/usr/bin/kubectl", append([]string{"--kubeconfig", filepath.Join(c.home, "admin.kubeconfig"), "--request-timeout", "20s"}, args...)...).CombinedOutput()
	return string(out), err
}

func (c *localCluster) kubectlOK(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.kubectlErr(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return out
}

// makeNode runs make node-up or node-down for the second node.
func (c *localCluster) makeNode(t *testing.T, target string) string {
	t.Helper()
	start := time.Now()
	out, err := c.script(t, nil, "-c", "make "+target+" NODE="+secondNode)
	t.Logf("make %s NODE=%s (%s):\n%s", target, secondNode, time.Since(start).Round(time.Second), out)
	if err != nil {
		t.Fatalf("make %s: %v", target, err)
	}
	return out
}

// nodeUpStep: make node-up adds a Ready node joined with a token; a pod
// bound to it (nodeName) answers a pod on make up's node, directly and
// through a Service, and reaches cluster DNS on make up's node; make
// node-down removes the node and leaves the machine as before node-up.
// Then node-up again, for make down (the next step) to remove: the
// returned check says what of the node is left after it.
func (c *localCluster) nodeUpStep(t *testing.T) (leftAfterDown func() string) {
	t.Helper()
	before := c.settled(t)
	if s := c.nodeState(t, secondNode); s != "" {
		t.Fatalf("the node's state is there before node-up:\n%s", s)
	}

	out := c.makeNode(t, "node-up")
	mustContain(t, out, "joined with a bootstrap token", fmt.Sprintf("node %s Ready", secondNode))
	nodes := c.kubectlOK(t, "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.addresses[?(@.type=="InternalIP")].address} {.status.conditions[?(@.type=="Ready")].status} {.spec.podCIDR}{"\n"}{end}`)
	var first, firstIP string
	for _, l := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 || f[2] != "True" {
			t.Fatalf("nodes: %q", nodes)
		}
		if f[0] == secondNode {
			if f[1] != secondNodeIP {
				t.Errorf("%s's InternalIP = %s, want %s", secondNode, f[1], secondNodeIP)
			}
		} else {
			first, firstIP = f[0], f[1]
		}
	}
	if first == "" || !strings.Contains(nodes, secondNode+" ") {
		t.Fatalf("want make up's node and %s, Ready: %q", secondNode, nodes)
	}
	// Its client identity came from the TLS bootstrap: the node's own
	// credentials, not make up's certificates.
	if csrs := c.kubectlOK(t, "get", "csr", "-o", "jsonpath={range .items[*]}{.spec.signerName} {.spec.username} {.status.conditions[0].type}{\"\\n\"}{end}"); !strings.Contains(csrs, "kubernetes.io/kube-apiserver-client-kubelet system:bootstrap:") ||
		!strings.Contains(csrs, "kubernetes.io/kubelet-serving system:node:"+secondNode+" Approved") {
		t.Errorf("the node's CSRs (client by its bootstrap token, serving approved): %s", csrs)
	}

	manifest := filepath.Join(t.TempDir(), "two-nodes.yaml")
	writeFile(t, manifest, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: on-second
  labels: {app: on-second}
spec:
  nodeName: %s
  terminationGracePeriodSeconds: 0
  containers:
  - name: web
    image: 127.0.0.1:5000/examples/web:v1
---
apiVersion: v1
kind: Pod
metadata:
  name: on-first
spec:
  nodeName: %s
  terminationGracePeriodSeconds: 0
  containers:
  - name: c
    image: 127.0.0.1:5000/library/busybox:latest
    command: ["sleep", "3600"]
---
apiVersion: v1
kind: Service
metadata:
  name: on-second
spec:
  type: NodePort
  selector: {app: on-second}
  ports:
  - port: 80
`, secondNode, first))
	c.kubectlOK(t, "apply", "-f", manifest)
	c.kubectlOK(t, "wait", "--for=condition=Ready", "pod/on-second", "pod/on-first", "--timeout=90s")
	podIP := c.kubectlOK(t, "get", "pod", "on-second", "-o", "jsonpath={.status.podIP}")
	cidr := c.kubectlOK(t, "get", "node", secondNode, "-o", "jsonpath={.spec.podCIDR}")
	if !strings.HasPrefix(podIP, strings.TrimSuffix(cidr, "0/24")) {
		t.Errorf("on-second's address %s is not in %s's pod CIDR %s", podIP, secondNode, cidr)
	}
	svcIP := c.kubectlOK(t, "get", "service", "on-second", "-o", "jsonpath={.spec.clusterIP}")
	answer := regexp.MustCompile(`(?m)^v1 on-second$`)
	for _, url := range []string{"http://" + podIP + "/", "http://" + svcIP + "/", "http://on-second.default.svc.cluster.local/"} {
		harness.Poll(t, 30*time.Second, "on-first reaches on-second at "+url, func() (bool, string) {
			// (Debian's busybox 1.35 wget crashes with -T.)
			got, err := c.kubectlErr("exec", "on-first", "--", "wget", "-qO-", url)
			return err == nil && answer.MatchString(got), got
		})
	}
	// The Service's NodePort at each node's address, from the pods on both
	// nodes. From on-second at make up's node's address, the request comes
	// back to the node it left (local-node.sh: hairpin).
	nodePort := c.kubectlOK(t, "get", "service", "on-second", "-o", "jsonpath={.spec.ports[0].nodePort}")
	for _, from := range []string{"on-first", "on-second"} {
		for _, ip := range []string{firstIP, secondNodeIP} {
			url := "http://" + net.JoinHostPort(ip, nodePort) + "/"
			harness.Poll(t, 30*time.Second, from+" reaches on-second at the NodePort "+url, func() (bool, string) {
				got, err := c.kubectlErr("exec", from, "--", "wget", "-qO-", url)
				return err == nil && answer.MatchString(got), got
			})
		}
	}
	// From the second node's pod: cluster DNS, served on make up's node.
	harness.Poll(t, 30*time.Second, "on-second resolves kubernetes.default through kube-dns", func() (bool, string) {
		got, err := c.kubectlErr("exec", "on-second", "--", "nslookup", "kubernetes.default.svc.cluster.local", "10.96.0.10")
		return err == nil && regexp.MustCompile(`Address: *10\.96\.0\.1$`).MatchString(strings.TrimSpace(got)), got
	})
	c.kubectlOK(t, "delete", "-f", manifest, "--grace-period=0", "--wait=true", "--timeout=60s")

	out = c.makeNode(t, "node-down")
	mustContain(t, out, "stopped node-"+secondNode+"-kubelet", "removed the containers of containerd namespace",
		"removed network namespace", "deleted Node "+secondNode, "removed bridge skiff-nodes0", fmt.Sprintf("node %s removed", secondNode))
	if got, err := c.kubectlErr("get", "node", secondNode); err == nil || !strings.Contains(got, "NotFound") {
		t.Errorf("Node %s after node-down: %v %s", secondNode, err, got)
	}
	// The proxy of make up's node removes the Service's rules at its next
	// sync; then the machine is as it was.
	_ = wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return c.snapshot(t) == before, nil
	})
	c.sameAsBefore(t, before)
	if s := c.nodeState(t, secondNode); s != "" {
		t.Errorf("left of node %s after node-down:\n%s", secondNode, s)
	}

	// Again, for make down.
	c.makeNode(t, "node-up")
	return func() string { return c.nodeState(t, secondNode) }
}

// TestWalkthroughNodeUpRefusals: make node-up without a cluster, with a
// name that is no DNS label, or local-node.sh without up or down, says
// why and fails; node-down of a node never added has nothing to do.
func TestWalkthroughNodeUpRefusals(t *testing.T) {
	c := newLocalCluster(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"up", secondNode}, "skiff node " + secondNode + ": no cluster in " + c.home + ": run make up first"},
		{[]string{"up", "Bad_Name"}, "skiff node: NODE=Bad_Name: a node name of lowercase letters, digits and '-'"},
		{[]string{"sideways", secondNode}, "skiff node: usage: local-node.sh up|down NAME"},
	} {
		out, err := c.script(t, nil, append([]string{"deploy/local-node.sh"}, tc.args...)...)
		if err == nil {
			t.Errorf("local-node.sh %v succeeded:\n%s", tc.args, out)
		}
		mustContain(t, out, tc.want)
	}
	if out, err := c.script(t, nil, "deploy/local-node.sh", "down", secondNode); err != nil {
		t.Errorf("node-down of a node never added: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(c.home, "nodes")); err == nil {
		t.Errorf("the refused node-up left %s", filepath.Join(c.home, "nodes"))
	}
}
