//go:build walkthrough || multinode

// The README's walk-through and make up's failures, run against the real
// deploy/local-up.sh and local-down.sh, in this test binary's network
// namespace (TestMain) with a SKIFF_HOME of the test's own. Several
// minutes: make test-walkthrough, not make test.

package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"skiff.dev/kubelet/test/harness"
)

// The node's address: TEST-NET-1 (RFC 5737) on a veth pair of the test's
// own namespace; nothing is behind it.
const walkNodeIP = "192.0.2.2"

// repoRoot is the repository, the parent of e2e/.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// localCluster is where local-up.sh keeps one SKIFF_HOME's cluster.
type localCluster struct {
	root, home                      string
	ctrdState, netnsDir, cgroupRoot string
}

func newLocalCluster(t *testing.T) *localCluster {
	t.Helper()
	if os.Getenv(inNetnsEnv) == "" || os.Geteuid() != 0 {
		t.Skip("needs root: make up runs in a network namespace of the test's own")
	}
	harness.RequireTools(t)
	home, err := os.MkdirTemp("", "skiff-walk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(home) })
	sum := sha256.Sum256([]byte(home))
	suffix := "-" + hex.EncodeToString(sum[:])[:8]
	c := &localCluster{
		root: repoRoot(t), home: home,
		ctrdState: "/run/skiff-containerd" + suffix, netnsDir: "/run/skiff-netns" + suffix, cgroupRoot: "/skiff" + suffix,
	}
	// Whatever a test leaves, make down removes.
	t.Cleanup(func() {
		if out, err := c.script(t, nil, "deploy/local-down.sh"); err != nil {
			t.Logf("make down at cleanup: %v\n%s", err, out)
		}
	})
	return c
}

// nodeAddress gives the namespace a global address for the node, as a
// machine's network interface.
func nodeAddress(t *testing.T) {
	t.Helper()
	_ = exec.Command("ip", "link", "del", "node0").Run()
	run(t, "ip", "link", "add", "node0", "type", "veth", "peer", "name", "node0p")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", "node0").Run() })
	// No IPv6 link-local addresses: their duplicate address detection
	// would change the snapshot while a test runs.
	run(t, "ip", "link", "set", "node0", "addrgenmode", "none")
	run(t, "ip", "link", "set", "node0p", "addrgenmode", "none")
	run(t, "ip", "addr", "add", walkNodeIP+"/24", "dev", "node0")
	run(t, "ip", "link", "set", "node0", "up")
	run(t, "ip", "link", "set", "node0p", "up")
	// The snapshot taken before make up must not catch the pair's carrier
	// still coming up: its routes would read "linkdown" there and not
	// after make down.
	harness.Poll(t, 30*time.Second, "node0's carrier", func() (bool, string) {
		// ip, not /sys/class/net: sysfs shows the host's namespace.
		link, err := exec.Command("ip", "-o", "link", "show", "dev", "node0").CombinedOutput()
		return err == nil && strings.Contains(string(link), "LOWER_UP"), fmt.Sprintf("%s %v", link, err)
	})
}

// script runs bash with args in the repository with this SKIFF_HOME and
// env added.
func (c *localCluster) script(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Dir = c.root
	cmd.Env = append(append(os.Environ(), "SKIFF_HOME="+c.home, "PATH="+os.Getenv("PATH")+":/usr/local/go/bin"), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// snapshot is what of a cluster can be on the machine: its processes and
// containers (by their command lines and cgroups), mounts, node state
// directories and cgroups, and this namespace's links, addresses, routes
// and iptables rules and chains.
func (c *localCluster) snapshot(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	marks := []string{c.home, c.ctrdState, c.netnsDir}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	self := fmt.Sprint(os.Getpid())
	var found []string
	for _, p := range procs {
		if filepath.Base(p) == self {
			continue
		}
		cmdline, _ := os.ReadFile(p + "/cmdline")
		cgroup, _ := os.ReadFile(p + "/cgroup")
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		for _, m := range marks {
			if strings.Contains(line, m) {
				found = append(found, "process "+line)
			}
		}
		if strings.Contains(string(cgroup), c.cgroupRoot+"/") {
			found = append(found, "process in the pods' cgroups: "+line)
		}
	}
	sort.Strings(found)
	for _, f := range found {
		fmt.Fprintln(&b, f)
	}
	for _, m := range harness.MountsUnder("/") {
		for _, mark := range marks {
			if strings.HasPrefix(m, mark) {
				fmt.Fprintln(&b, "mount", m)
			}
		}
	}
	for _, p := range []string{c.ctrdState, c.netnsDir, "/sys/fs/cgroup" + c.cgroupRoot, "/sys/fs/cgroup/unified" + c.cgroupRoot, "/sys/fs/cgroup/memory" + c.cgroupRoot} {
		if _, err := os.Stat(p); err == nil {
			fmt.Fprintln(&b, "path", p)
		}
	}
	links := run(t, "ip", "-o", "link", "show")
	for _, l := range strings.Split(strings.TrimSpace(links), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			fmt.Fprintln(&b, "link", strings.TrimSuffix(strings.SplitN(f[1], "@", 2)[0], ":"))
		}
	}
	fmt.Fprint(&b, run(t, "ip", "-o", "addr", "show"))
	fmt.Fprint(&b, run(t, "ip", "-4", "route", "show", "table", "all"))
	fmt.Fprint(&b, run(t, "ip", "-6", "route", "show", "table", "all"))
	fmt.Fprint(&b, run(t, "ip", "rule", "show"))
	builtin := regexp.MustCompile(`^:(INPUT|FORWARD|OUTPUT|PREROUTING|POSTROUTING) ACCEPT`)
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(save).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", save, err, out)
		}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			l := sc.Text()
			if (strings.HasPrefix(l, ":") && !builtin.MatchString(l)) || strings.HasPrefix(l, "-A") {
				fmt.Fprintln(&b, save, strings.SplitN(l, " [", 2)[0])
			}
		}
	}
	return b.String()
}

// sameAsBefore fails the test when the machine differs from before.
func (c *localCluster) sameAsBefore(t *testing.T, before string) {
	t.Helper()
	after := c.snapshot(t)
	if after == before {
		return
	}
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	in := func(s []string, x string) bool {
		for _, y := range s {
			if y == x {
				return true
			}
		}
		return false
	}
	var diff []string
	for _, l := range a {
		if !in(b, l) {
			diff = append(diff, "+ "+l)
		}
	}
	for _, l := range b {
		if !in(a, l) {
			diff = append(diff, "- "+l)
		}
	}
	t.Errorf("the machine is not as it was (+ left behind, - gone):\n%s", strings.Join(diff, "\n"))
}

func (c *localCluster) pids(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(c.home, "run", "*.pid"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		out[strings.TrimSuffix(filepath.Base(f), ".pid")] = strings.TrimSpace(string(b))
	}
	return out
}

func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// stub writes an executable shell script name into dir.
func stub(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestLocalUpFailures: each failure of make up says its cause and the
// log to read, exits non-zero, and leaves nothing started behind.
func TestLocalUpFailures(t *testing.T) {
	c := newLocalCluster(t)
	nodeAddress(t)
	if _, err := os.Stat(filepath.Join(c.root, "bin", "skiff-kubelet")); err != nil {
		t.Skip("needs bin/ (make build)")
	}
	before := c.snapshot(t)
	skip := []string{"SKIFF_SKIP_BUILD=1"}

	t.Run("not root", func(t *testing.T) {
		home := filepath.Join(t.TempDir(), "notroot")
		cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash", "deploy/local-up.sh")
		cmd.Dir = c.root
		cmd.Env = append(os.Environ(), "SKIFF_HOME="+home)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("make up as nobody succeeded:\n%s", out)
		}
		mustContain(t, string(out), "skiff up: must run as root")
		if _, err := os.Stat(home); err == nil {
			t.Errorf("make up as nobody made %s", home)
		}
	})

	t.Run("a port taken", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:10257")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		out, err := c.script(t, skip, "deploy/local-up.sh")
		if err == nil {
			t.Fatalf("make up succeeded with port 10257 taken:\n%s", out)
		}
		mustContain(t, out, "port 10257/tcp, which controller-manager needs, is taken by users:((", fmt.Sprintf("pid=%d", os.Getpid()))
		c.sameAsBefore(t, before)
	})

	t.Run("a package that cannot be installed", func(t *testing.T) {
		// dpkg-query says runc is missing; apt-get cannot find it, as on
		// a machine whose package lists lack it.
		stubs := t.TempDir()
		stub(t, stubs, "dpkg-query", `for last; do :; done
[ "$last" = runc ] && exit 1
echo "install ok installed"
`)
		stub(t, stubs, "apt-get", `[ "$1" = update ] && exit 0
for last; do :; done
echo "E: Unable to locate package $last" >&2
exit 100
`)
		out, err := c.script(t, append(skip, "PATH="+stubs+":"+os.Getenv("PATH")), "deploy/local-up.sh")
		if err == nil {
			t.Fatalf("make up succeeded without runc:\n%s", out)
		}
		mustContain(t, out, "skiff up: installing runc", "skiff up: cannot install the Debian package runc: E: Unable to locate package runc",
			"see "+c.home+"/logs/apt.log")
		c.sameAsBefore(t, before)
	})

	t.Run("a daemon that exits", func(t *testing.T) {
		// containerd exits at its start, after the control plane runs.
		stubs := t.TempDir()
		stub(t, stubs, "containerd", `echo "containerd: simulated failure: cannot open its database" >&2
exit 1
`)
		out, err := c.script(t, append(skip, "PATH="+stubs+":"+os.Getenv("PATH")), "deploy/local-up.sh")
		if err == nil {
			t.Fatalf("make up succeeded with a containerd that exits:\n%s", out)
		}
		mustContain(t, out, "skiff up: apiserver started", "skiff up: containerd exited while starting",
			"see "+c.home+"/logs/containerd.log", "simulated failure: cannot open its database",
			"skiff up: failed; stopping what was started", "skiff down: stopped apiserver")
		c.sameAsBefore(t, before)
	})
}

// walkthroughBlocks are the shell blocks of the README's "Walk-through"
// section, in order.
func walkthroughBlocks(t *testing.T, root string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	in, inBlock := false, false
	var cur []string
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			in = l == "## Walk-through"
		case in && !inBlock && l == "```sh":
			inBlock, cur = true, nil
		case in && inBlock && l == "```":
			inBlock = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case inBlock:
			cur = append(cur, l)
		}
	}
	return blocks
}

// TestWalkthrough runs the README's walk-through as written, block by
// block in one shell's state, and checks what each block shows; make up
// twice; and after make down, a machine as it was before make up.
func TestWalkthrough(t *testing.T) {
	c := newLocalCluster(t)
	nodeAddress(t)
	blocks := walkthroughBlocks(t, c.root)
	if len(blocks) != 5 {
		t.Fatalf("the README's walk-through has %d shell blocks, want 5 (up, curl, delete, rollout, down):\n%s", len(blocks), strings.Join(blocks, "\n---\n"))
	}
	before := c.snapshot(t)
	state := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(state, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	assign := regexp.MustCompile(`(?m)^(?:export )?([A-Za-z_][A-Za-z0-9_]*)=`)
	var vars []string
	// step runs block i in a shell that has the earlier blocks' variables.
	step := func(i int) string {
		t.Helper()
		for _, m := range assign.FindAllStringSubmatch(blocks[i], -1) {
			vars = append(vars, m[1])
		}
		script := fmt.Sprintf("set -euo pipefail\nsource %s\n%s\ndeclare -p %s >%s\n", state, blocks[i], strings.Join(vars, " "), state)
		start := time.Now()
		out, err := c.script(t, nil, "-c", script)
		t.Logf("block %d (%s):\n%s\n%s", i+1, time.Since(start).Round(time.Second), blocks[i], out)
		if err != nil {
			t.Fatalf("block %d failed: %v", i+1, err)
		}
		return out
	}
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("/usr/bin/kubectl", append([]string{"--kubeconfig", filepath.Join(c.home, "admin.kubeconfig"), "--request-timeout", "20s"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	shellVar := func(name string) string {
		t.Helper()
		out, err := exec.Command("bash", "-c", fmt.Sprintf("source %s; printf %%s \"$%s\"", state, name)).CombinedOutput()
		if err != nil || len(out) == 0 {
			t.Fatalf("$%s after the blocks: %q, %v", name, out, err)
		}
		return string(out)
	}

	// make up, the manifests, their pods Ready.
	out := step(0)
	mustContain(t, out, "skiff up: node ", "skiff up: Services answer: kubernetes.default (10.96.0.1) through the proxy, kube-dns (10.96.0.10)",
		"skiff up: the cluster is up", "deployment.apps/web created", "replicaset.apps/my-replicaset created", "service/web created")

	// make up again does no harm: the same daemons, still answering. This
	// time dpkg-query says runc is missing, so make up's install path runs
	// the real apt-get (update, then install runc: already there, so
	// nothing is downloaded) and goes on.
	pids := c.pids(t)
	stubs := t.TempDir()
	stub(t, stubs, "dpkg-query", `for last; do :; done
[ "$last" = runc ] && exit 1
echo "install ok installed"
`)
	again, err := c.script(t, []string{"SKIFF_SKIP_BUILD=1", "PATH=" + stubs + ":" + os.Getenv("PATH")}, "-c", "make up")
	if err != nil {
		t.Fatalf("make up again: %v\n%s", err, again)
	}
	mustContain(t, again, "skiff up: installing runc (apt-get, log "+c.home+"/logs/apt.log)",
		"skiff up: apiserver already running", "skiff up: kubelet already running", "skiff up: the cluster is up")
	aptLog, err := os.ReadFile(filepath.Join(c.home, "logs", "apt.log"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, string(aptLog), "runc is already the newest version")
	if now := c.pids(t); fmt.Sprint(now) != fmt.Sprint(pids) {
		t.Errorf("make up again changed the daemons: %v, then %v", pids, now)
	}
	if len(pids) != 8 {
		t.Errorf("daemons = %v, want 8 (apiserver, controller-manager, scheduler, containerd, registry, proxy, dns, kubelet)", pids)
	}

	// An image the mirrors lack: ErrImagePull naming make up's mirror, the
	// public registry never asked.
	kubectl("run", "not-mirrored", "--image=nginx:1.27", "--restart=Never")
	want := "pulling docker.io/library/nginx:1.27 from mirror http://127.0.0.1:5000/v2; the default endpoint https://registry-1.docker.io/v2 is disabled"
	harness.Poll(t, 60*time.Second, "a Failed pull naming the mirror", func() (bool, string) {
		got := kubectl("get", "events", "--field-selector", "involvedObject.name=not-mirrored,reason=Failed", "-o", "jsonpath={.items[*].message}")
		return strings.Contains(got, want), got
	})
	kubectl("delete", "pod", "not-mirrored", "--grace-period=0")

	// A pod answers through the Service.
	out = step(1)
	answer := regexp.MustCompile(`(?m)^v1 ((?:web|my-replicaset)-[a-z0-9-]+)$`).FindStringSubmatch(out)
	if answer == nil {
		t.Fatalf("no answer \"v1 <pod>\" from the Service:\n%s", out)
	}
	kubectl("get", "pod", answer[1])

	// A deleted pod is replaced.
	out = step(2)
	deleted := shellVar("pod")
	mustContain(t, out, fmt.Sprintf("pod %q deleted", deleted))
	harness.Poll(t, 60*time.Second, "two Ready pods of my-replicaset, none of them "+deleted, func() (bool, string) {
		got := kubectl("get", "pods", "-l", "app=my-app", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`)
		lines := strings.Split(strings.TrimSpace(got), "\n")
		ready := 0
		for _, l := range lines {
			if strings.HasPrefix(l, deleted+" ") {
				return false, got
			}
			if strings.HasSuffix(l, " True") {
				ready++
			}
		}
		return ready == 2 && len(lines) == 2, got
	})

	// The rolling update to v2.
	out = step(3)
	mustContain(t, out, `deployment "web" successfully rolled out`)
	if !regexp.MustCompile(`(?m)^v2 web-[a-z0-9-]+$`).MatchString(out) {
		t.Errorf("no answer from a v2 pod:\n%s", out)
	}
	if got := kubectl("get", "deployment", "web", "-o", "jsonpath={.status.updatedReplicas} {.status.availableReplicas} {.spec.template.spec.containers[0].image}"); got != "2 2 127.0.0.1:5000/examples/web:v2" {
		t.Errorf("deployment after the rollout: %q", got)
	}

	// A pod with a mounted claim (the default class, local-path) runs
	// while make down runs: mounts of the cluster exist (its containers'
	// root filesystems) and none is left afterwards.
	claimPod := filepath.Join(t.TempDir(), "claim.yaml")
	writeFile(t, claimPod, `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: kept
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 16Mi
---
apiVersion: v1
kind: Pod
metadata:
  name: with-claim
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "echo kept >/data/f; exec sleep 3600"]
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    persistentVolumeClaim:
      claimName: kept
`)
	kubectl("apply", "-f", claimPod)
	harness.Poll(t, 2*time.Minute, "with-claim Running with its claim Bound", func() (bool, string) {
		got := kubectl("get", "pod/with-claim", "pvc/kept", "-o", `jsonpath={.items[0].status.phase} {.items[1].status.phase}`)
		return got == "Running Bound", got
	})
	if got := kubectl("exec", "with-claim", "--", "cat", "/data/f"); strings.TrimSpace(got) != "kept" {
		t.Fatalf("with-claim's /data/f: %q", got)
	}
	if m := c.mountsOfCluster(t); len(m) == 0 {
		t.Fatalf("no mount of the cluster in /proc/self/mountinfo while with-claim runs: the check after make down would show nothing")
	} else {
		t.Logf("%d mounts of the cluster before make down, e.g. %s", len(m), m[0])
	}

	// make node-up and node-down (nodeup_test.go); the node it adds again
	// is left for make down.
	nodeLeft := c.nodeUpStep(t)

	// make down: nothing of the cluster is left.
	out = step(4)
	mustContain(t, out, "skiff down: stopped kubelet", "skiff down: removed the containers of containerd namespace", "skiff down: done")
	if m := c.mountsOfCluster(t); len(m) > 0 {
		t.Errorf("mounts left after make down:\n%s", strings.Join(m, "\n"))
	}
	c.sameAsBefore(t, before)
	if s := nodeLeft(); s != "" {
		t.Errorf("left of node %s after make down:\n%s", secondNode, s)
	}
}

// mountsOfCluster are the lines of /proc/self/mountinfo whose mount point
// or root lies under one of skiff's paths for this SKIFF_HOME: its state
// (the local-path volumes under storage/ included), containerd's state,
// the pods' network namespaces.
func (c *localCluster) mountsOfCluster(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		for _, mark := range []string{c.home, c.ctrdState, c.netnsDir} {
			// Fields 4 and 5: the root within its filesystem, the mount point.
			if f[4] == mark || strings.HasPrefix(f[4], mark+"/") || f[3] == mark || strings.HasPrefix(f[3], mark+"/") {
				out = append(out, l)
				break
			}
		}
	}
	return out
}
