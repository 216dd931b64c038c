// Command bench measures pod start-up on one skiff-kubelet: the time from
// a pod's create request until the watch shows it Running with all its
// containers running, for pods whose image is already on the node; and,
// beside it, the runtime's own floor: "ctr run --rm <image> /bin/true" on
// the same containerd, one at a time, and "ctr run -d" of as many
// containers as the burst has pods, all at once. Each shape starts once
// the kubelet has torn down the previous one's pods. It starts its own
// containerd, registry, API server and kubelet (as the end-to-end tests
// do) and removes them at the end.
//
//	cd kubelet && go run ./test/bench [-pods 50] [-sequential 20] [-ctr-runs 20]
//
// It needs root and the packages the end-to-end tests need.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/tracing/tracingtest"
	"skiff.dev/kubelet/app"
	"skiff.dev/kubelet/pkg/logs"
	"skiff.dev/kubelet/test/harness"
)

const (
	nodeName  = "node-1"
	image     = "docker.io/library/busybox:latest"
	namespace = "default"
)

func main() {
	if logs.IsDriver(os.Args) {
		os.Exit(logs.DriverMain(os.Args[2]))
	}
	pods := flag.Int("pods", 50, "pods created at once (burst)")
	sequential := flag.Int("sequential", 20, "pods created one after another, each once the previous runs")
	ctrRuns := flag.Int("ctr-runs", 20, "runs of ctr run --rm for the runtime's floor")
	parallel := flag.Int("parallel", 10, "concurrent create requests in the burst")
	logFile := flag.String("log-file", "", "keep the kubelet's and API server's log in this file (default: a temporary file)")
	verbosity := flag.String("v", "0", "log verbosity")
	idle := flag.Int("idle", 0, "instead of the start-up phases: run this many pods and measure the CPU the kubelet's process and containerd use while they idle")
	idleWindow := flag.Duration("idle-window", 60*time.Second, "how long the idle CPU is measured")
	traced := flag.Bool("tracing", false, "run the API server and the kubelet with --tracing-endpoint, exporting every span to an OTLP collector in this process (tracing's cost)")
	flag.Parse()
	idlePods, idleFor, tracingOn = *idle, *idleWindow, *traced
	m := &harness.Main{}
	defer m.Close()
	if err := run(m, *pods, *sequential, *ctrRuns, *parallel, *logFile, *verbosity); err != nil {
		m.Fatal(err)
	}
}

func run(m *harness.Main, burst, sequential, ctrRuns, parallel int, logFile, verbosity string) error {
	harness.RequireTools(m)
	dir := m.TempDir()
	if logFile == "" {
		logFile = filepath.Join(dir, "klog.log")
	}
	quietLogs(logFile, verbosity)
	ctd := harness.StartContainerd(m)
	registry := harness.StartRegistry(m)
	harness.PushImage(m, harness.BuildBusyboxImage(m), registry, "library/busybox")
	if tracingOn {
		collector = tracingtest.Start(m)
		fmt.Printf("tracing to the collector at %s\n", collector.Endpoint())
	}
	ts, err := testserver.StartServer(filepath.Join(dir, "apiserver"), func(o *server.Options) {
		if collector != nil {
			o.Tracing.Endpoint = collector.Endpoint()
		}
	})
	if err != nil {
		return err
	}
	m.Cleanup(ts.TearDown)
	client := ts.Client
	ns := "skiff-bench-" + harness.RandHex(3)
	n := startKubelet(m, dir, ts, ctd, registry, ns)
	if err := makeReady(client); err != nil {
		return err
	}
	fmt.Println("warming up: pulling the image with one pod")
	if _, err := startPods(client, "warmup", 1, 1); err != nil {
		return err
	}
	if err := deleteAll(client, n); err != nil {
		return err
	}
	if idlePods > 0 {
		return idleCPU(client, ctd, idlePods, parallel, idleFor)
	}

	fmt.Printf("burst: %d pods created with %d concurrent requests\n", burst, parallel)
	burstLat, err := startPods(client, "burst", burst, parallel)
	if err != nil {
		return err
	}
	if err := deleteAll(client, n); err != nil {
		return err
	}
	fmt.Printf("sequential: %d pods, one at a time\n", sequential)
	var seqLat []time.Duration
	for i := 0; i < sequential; i++ {
		l, err := startPods(client, fmt.Sprintf("seq-%d", i), 1, 1)
		if err != nil {
			return err
		}
		seqLat = append(seqLat, l...)
	}
	if err := deleteAll(client, n); err != nil {
		return err
	}
	floor, err := ctrFloor(n, ctrRuns)
	if err != nil {
		return err
	}
	fmt.Printf("runtime floor of the burst: %d ctr run -d at once\n", burst)
	burstFloor, err := ctrBurstFloor(n, burst)
	if err != nil {
		return err
	}
	fmt.Println()
	fmt.Printf("%-44s %6s %8s %8s %8s\n", "what", "n", "p50", "p99", "max")
	report := func(name string, d []time.Duration) {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		fmt.Printf("%-44s %6d %8s %8s %8s\n", name, len(d), pct(d, 50), pct(d, 99), d[len(d)-1].Round(time.Millisecond))
	}
	report(fmt.Sprintf("pod create -> Running, burst of %d", burst), burstLat)
	report("pod create -> Running, one at a time", seqLat)
	report("ctr run --rm busybox /bin/true (floor)", floor)
	report(fmt.Sprintf("ctr run -d busybox sleep, burst of %d (floor)", burst), burstFloor)
	if collector != nil {
		fmt.Printf("spans received by the collector: %d in %d exports\n", len(collector.Spans()), collector.Requests())
	}
	return nil
}

// quietLogs sends klog (the kubelet's and the API server's) to a file.
func quietLogs(path, verbosity string) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	_ = fs.Set("log_file", path)
	_ = fs.Set("v", verbosity)
}

func pct(d []time.Duration, p int) time.Duration {
	i := (len(d)*p+99)/100 - 1
	if i < 0 {
		i = 0
	}
	return d[i].Round(time.Millisecond)
}

// startKubelet runs the kubelet with its production defaults (1 s pod
// sync period), on its own bridge, netns directory and containerd
// namespace.
func startKubelet(m *harness.Main, dir string, ts *testserver.TestServer, ctd *harness.Containerd, registry, ns string) node {
	bridge := "skb" + harness.RandHex(3)
	regFile := filepath.Join(dir, "registries.yaml")
	if err := os.WriteFile(regFile, []byte(fmt.Sprintf("mirrors:\n  docker.io:\n    endpoint:\n      - \"http://%s\"\n", registry)), 0o644); err != nil {
		m.Fatal(err)
	}
	o := app.NewOptions()
	o.Kubeconfig = filepath.Join(ts.Dir, "kubelet-"+nodeName+".kubeconfig")
	o.NodeName, o.NodeIP = nodeName, "127.0.0.1"
	o.ContainerdAddress, o.ContainerdNamespace = ctd.Address, ns
	o.RootDir, o.NetNSDir, o.BridgeName = filepath.Join(dir, "root"), filepath.Join(dir, "netns"), bridge
	o.CgroupRoot = "/" + ns // removed with the namespace by the containerd harness
	o.RegistriesConfig = regFile
	o.DisableDefaultRegistryEndpoint = true
	o.Address, o.Port = "127.0.0.1", 0
	o.NodeStatusUpdateFrequency = time.Second
	if collector != nil {
		o.Tracing.Endpoint = collector.Endpoint()
	}
	// The small logging driver, as make build installs it beside
	// skiff-kubelet.
	o.LogDriver = filepath.Join(dir, app.LogDriverName)
	if out, err := exec.Command("go", "build", "-o", o.LogDriver, "skiff.dev/kubelet/cmd/skiff-log-driver").CombinedOutput(); err != nil {
		m.Fatalf("building the logging driver: %v\n%s", err, out)
	}
	m.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", bridge).Run()
		harness.UnmountUnder(m, dir)
	})
	if out, _ := exec.Command("ip", "route", "show", "10.244.0.0/16").CombinedOutput(); len(out) == 0 {
		if err := exec.Command("ip", "route", "add", "blackhole", "10.244.0.0/16").Run(); err == nil {
			m.Cleanup(func() { _ = exec.Command("ip", "route", "del", "blackhole", "10.244.0.0/16").Run() })
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cfg, err := app.Setup(ctx, o)
	if err != nil {
		cancel()
		m.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg) }()
	m.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
		cfg.Close()
	})
	return node{containerd: ctd.Address, ns: ns, netnsDir: o.NetNSDir}
}

func makeReady(client kubernetes.Interface) error {
	patch := `{"spec":{"podCIDR":"10.244.77.0/24","podCIDRs":["10.244.77.0/24"]}}`
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if _, last = client.CoreV1().Nodes().Patch(ctx, nodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); last != nil {
			return false, nil
		}
		n, err := client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if last = err; err != nil {
			return false, nil
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("the node is not Ready after 60 s (last error: %v)", last)
	}
	return nil
}

func benchPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"bench": "1"}},
		Spec: corev1.PodSpec{
			NodeName:                      nodeName,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers:                    []corev1.Container{{Name: "c", Image: image, Command: []string{"sleep", "3600"}}},
		},
	}
}

// running says whether the pod is Running with every container running.
func running(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}

// startPods creates n pods (prefix-0...) with up to parallel requests in
// flight and returns, per pod, the time from the start of its create
// request to the watch event that shows it running.
func startPods(client kubernetes.Interface, prefix string, n, parallel int) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	w, err := client.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var mu sync.Mutex
	created := map[string]time.Time{}
	errs := make(chan error, n)
	sem := make(chan struct{}, parallel)
	go func() {
		for i := 0; i < n; i++ {
			sem <- struct{}{}
			go func(name string) {
				defer func() { <-sem }()
				start := time.Now()
				mu.Lock()
				created[name] = start
				mu.Unlock()
				if _, err := client.CoreV1().Pods(namespace).Create(ctx, benchPod(name), metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("creating %s: %w", name, err)
				}
			}(fmt.Sprintf("%s-%d", prefix, i))
		}
	}()
	seen := map[string]time.Duration{}
	for len(seen) < n {
		select {
		case err := <-errs:
			return nil, err
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, fmt.Errorf("watch ended with %d of %d pods running", len(seen), n)
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod || ev.Type == watch.Deleted || !running(p) {
				continue
			}
			if _, done := seen[p.Name]; done {
				continue
			}
			mu.Lock()
			start, ok := created[p.Name]
			mu.Unlock()
			if ok {
				seen[p.Name] = time.Since(start)
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("%d of %d pods running after 5 minutes", len(seen), n)
		}
	}
	out := make([]time.Duration, 0, n)
	for _, d := range seen {
		out = append(out, d)
	}
	return out, nil
}

// deleteAll deletes the benchmark's pods and waits until they are gone
// (the kubelet has torn them down and removed them from the API).
func deleteAll(client kubernetes.Interface, n node) error {
	ctx := context.Background()
	if err := client.CoreV1().Pods(namespace).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)},
		metav1.ListOptions{LabelSelector: "bench=1"}); err != nil {
		return err
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "bench=1"})
		last = err
		return err == nil && len(list.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("pods still there after 3 minutes: %v", last)
	}
	// Deleted with no grace period, the objects go at once; the kubelet
	// tears the pods down after. The next measurement starts on a node
	// that has finished: no container left, no network namespace.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := n.ctr("containers", "ls", "-q").CombinedOutput()
		if err != nil {
			last = fmt.Errorf("ctr containers ls: %v: %s", err, out)
			return false, nil
		}
		if ids := strings.Fields(string(out)); len(ids) > 0 {
			last = fmt.Errorf("containers %v", ids)
			return false, nil
		}
		ents, err := os.ReadDir(n.netnsDir)
		if err != nil && !os.IsNotExist(err) {
			return false, err
		}
		if len(ents) > 0 {
			last = fmt.Errorf("%d network namespaces in %s", len(ents), n.netnsDir)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the kubelet had not torn the pods down after 3 minutes: %v", last)
	}
	return nil
}

// ctrBurstFloor is the runtime's own floor for the burst: n containers
// of the same image started at once with "ctr run -d" (which returns once
// the task runs) on the kubelet's containerd namespace, with neither the
// API server nor CNI. The burst's n creates reach the kubelet within tens
// of milliseconds, so its pods start together too. Each is timed from its
// ctr start; they are removed afterwards.
func ctrBurstFloor(nd node, n int) ([]time.Duration, error) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-ctr-burst-%d", i)
	}
	defer func() {
		_ = nd.ctr(append([]string{"tasks", "delete", "-f"}, ids...)...).Run()
		_ = nd.ctr(append([]string{"containers", "rm"}, ids...)...).Run()
	}()
	out := make([]time.Duration, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if b, err := nd.ctr("run", "-d", image, id, "sleep", "3600").CombinedOutput(); err != nil {
				errs <- fmt.Errorf("ctr run -d %s: %v: %s", id, err, b)
				return
			}
			out[i] = time.Since(start)
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return out, nil
}

// node is where the kubelet keeps what a pod leaves behind until it is
// torn down.
type node struct {
	containerd, ns, netnsDir string
}

// ctr is the ctr command on the kubelet's containerd and namespace.
func (n node) ctr(args ...string) *exec.Cmd {
	return exec.Command("ctr", append([]string{"-a", n.containerd, "-n", n.ns}, args...)...)
}

// ctrFloor times "ctr run --rm <image> <id> /bin/true" on the kubelet's
// containerd namespace (where the image is unpacked).
func ctrFloor(n node, runs int) ([]time.Duration, error) {
	var out []time.Duration
	for i := 0; i < runs; i++ {
		start := time.Now()
		cmd := n.ctr("run", "--rm", image, fmt.Sprintf("bench-ctr-%d", i), "/bin/true")
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ctr run: %v: %s", err, b)
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// The idle phase's flags.
var (
	// tracingOn runs the daemons with --tracing-endpoint to collector.
	tracingOn bool
	collector *tracingtest.Collector
	idlePods  int
	idleFor   time.Duration
)

// idleCPU starts n pods, lets them settle, and prints the CPU time this
// process (the kubelet, with the API server and etcd beside it, idle) and
// containerd use over the window, as a percentage of one core.
func idleCPU(client kubernetes.Interface, ctd *harness.Containerd, n, parallel int, window time.Duration) error {
	fmt.Printf("idle: %d pods\n", n)
	if _, err := startPods(client, "idle", n, parallel); err != nil {
		return err
	}
	ctdPID, err := pidOf(ctd.Dir)
	if err != nil {
		return err
	}
	// The start-up's status writes and node updates settle first.
	settle := time.NewTimer(15 * time.Second)
	<-settle.C
	self0, ctd0 := cpuTicks(os.Getpid()), cpuTicks(ctdPID)
	start := time.Now()
	t := time.NewTimer(window)
	<-t.C
	elapsed := time.Since(start)
	self1, ctd1 := cpuTicks(os.Getpid()), cpuTicks(ctdPID)
	pctOf := func(ticks int64) float64 { return float64(ticks) / 100 / elapsed.Seconds() * 100 }
	fmt.Printf("\n%d idle pods, %s window\n", n, elapsed.Round(time.Second))
	fmt.Printf("%-50s %6.1f%%\n", "kubelet process (with the API server, etcd) CPU", pctOf(self1-self0))
	fmt.Printf("%-50s %6.1f%%\n", "containerd CPU", pctOf(ctd1-ctd0))
	return nil
}

// pidOf finds the containerd whose command line names dir.
func pidOf(dir string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmd), "\x00")
		if filepath.Base(args[0]) == "containerd" && strings.Contains(string(cmd), dir) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no containerd process with %s on its command line", dir)
}

// cpuTicks is a process's user and system CPU time in clock ticks
// (1/100 s), from /proc/<pid>/stat.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}
