//go:build tracingbench

// The cost of tracing on pod start through the whole path (issue 26): seed
// 003's ReplicaSet with 50 replicas, created through the API server, run by
// the controller manager, the scheduler and the kubelet on a real
// containerd, with --tracing-endpoint on every daemon and without it, in
// alternating runs. Minutes, as root: make bench-tracing, not make test.
// docs/benchmarks.md records its figures.

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/component-base/tracing/tracingtest"
	cmapp "skiff.dev/controller-manager/app"
	kubeletapp "skiff.dev/kubelet/app"
	schedapp "skiff.dev/scheduler/app"
)

// benchRun is one run's figures.
type benchRun struct {
	tracing bool
	load    string
	// createdToReady: each pod's start-up latency, from the watch's ADDED
	// event of the pod (its creation, to the millisecond where the
	// creationTimestamp has seconds) to the watch event with Ready=True.
	createdToReady []time.Duration
	// rsToReady: from the ReplicaSet's create request to each pod's Ready
	// seen through the watch (the controller's creates included).
	rsToReady []time.Duration
	// sli is the kubelet's kubelet_pod_start_sli_duration_seconds over the
	// burst: p50 and p99 by histogram_quantile of its buckets.
	sliP50, sliP99 float64
	// spans is how many spans the collector received, the daemons'
	// batches flushed as they stopped.
	spans int
	// others is the share of the cores that processes other than the
	// benchmark's took during the burst.
	others float64
	// cpu is the CPU time the benchmark's processes (the daemons,
	// containerd and the pods) took from the ReplicaSet's create until
	// every pod was Ready.
	cpu time.Duration
}

// TestTracingCost runs SKIFF_BENCH_PAIRS (default 3) pairs of runs, each a
// fresh cluster, one without tracing and one with every daemon exporting
// every span (--tracing-endpoint to an OTLP collector on loopback,
// --tracing-sampling-rate-per-million 1000000). In each, one pod of the
// image first (so that no run's burst pulls it), then seed 003's
// ReplicaSet (examples/replicaset.yaml) with SKIFF_BENCH_REPLICAS
// (default 50) replicas, until every pod is Ready.
func TestTracingCost(t *testing.T) {
	pairs, replicas := envInt(t, "SKIFF_BENCH_PAIRS", 3), envInt(t, "SKIFF_BENCH_REPLICAS", 50)
	seed := seedReplicaSet(t)
	var runs []*benchRun
	for i := 1; i <= pairs; i++ {
		// Off first in odd pairs, on first in even ones: a load that
		// grows or falls during the runs weighs on both alike.
		order := []bool{false, true}
		if i%2 == 0 {
			order = []bool{true, false}
		}
		for _, on := range order {
			name := fmt.Sprintf("pair%d/tracing=%v", i, on)
			r := &benchRun{tracing: on}
			runs = append(runs, r)
			if !t.Run(name, func(t *testing.T) {
				tracingCostRun(t, seed, int32(replicas), r)
				t.Logf("%s: created to Ready p50 %s, p99 %s", name, secs(quantile(r.createdToReady, 0.5)), secs(quantile(r.createdToReady, 0.99)))
			}) {
				t.FailNow()
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", benchMachine())
	fmt.Fprintf(&b, "\n| Pair | Tracing | Load (1 min) | Others' CPU | The cluster's CPU | Created to Ready: p50 / p99 | ReplicaSet create to Ready: p50 / p99 | kubelet_pod_start_sli_duration_seconds: p50 / p99 | Spans exported |\n|---|---|---|---|---|---|---|---|---|\n")
	for i, r := range runs {
		fmt.Fprintf(&b, "%s\n", r.row(i/2+1))
	}
	for _, on := range []bool{false, true} {
		var p50, p99, rs50, rs99, cpu []time.Duration
		for _, r := range runs {
			if r.tracing == on {
				cpu = append(cpu, r.cpu)
				p50, p99 = append(p50, quantile(r.createdToReady, 0.5)), append(p99, quantile(r.createdToReady, 0.99))
				rs50, rs99 = append(rs50, quantile(r.rsToReady, 0.5)), append(rs99, quantile(r.rsToReady, 0.99))
			}
		}
		fmt.Fprintf(&b, "median of the runs, tracing=%v: created to Ready %s / %s, ReplicaSet create to Ready %s / %s, the cluster's CPU %s\n",
			on, secs(quantile(p50, 0.5)), secs(quantile(p99, 0.5)), secs(quantile(rs50, 0.5)), secs(quantile(rs99, 0.5)), secs(quantile(cpu, 0.5)))
	}
	t.Log(b.String())
}

func (r benchRun) row(pair int) string {
	onoff, spans := "off", ""
	if r.tracing {
		onoff, spans = "on", strconv.Itoa(r.spans)
	}
	return fmt.Sprintf("| %d | %s | %s | %.0f%% | %.1f s | %s / **%s** | %s / %s | %.2f / %.2f s | %s |", pair, onoff, r.load, 100*r.others, r.cpu.Seconds(),
		secs(quantile(r.createdToReady, 0.5)), secs(quantile(r.createdToReady, 0.99)),
		secs(quantile(r.rsToReady, 0.5)), secs(quantile(r.rsToReady, 0.99)), r.sliP50, r.sliP99, spans)
}

// benchMachine describes where the figures were taken: TestPrometheus's
// summary without its Prometheus version.
func benchMachine() string {
	summary, _, _ := strings.Cut(machineSummary(), "; ")
	return summary
}

// benchCPU is the machine's busy CPU time and the benchmark's at one
// moment: this process (every daemon) and its children (containerd),
// containerd's shims of the kubelet's namespace, and the processes in
// its pods' cgroups.
type benchCPU struct {
	at         time.Time
	busy, mine time.Duration
}

func sampleBenchCPU(ctrdNamespace string) benchCPU {
	s := benchCPU{at: time.Now()}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		// cpu user nice system idle iowait irq softirq steal
		s.busy = ticks(strings.Fields(line), 2, 3, 4, 7, 8, 9)
	}
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	times := map[int]time.Duration{}
	mine := map[int]bool{os.Getpid(): true}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 > len(b) {
			continue
		}
		// After the command: state is field 3, ppid 4, utime and stime 14
		// and 15, the waited-for children's 16 and 17.
		f := strings.Fields(string(b[i+2:]))
		if len(f) < 15 {
			continue
		}
		parent[pid], _ = strconv.Atoi(f[1])
		times[pid] = ticks(f, 14-2, 15-2, 16-2, 17-2)
		if ctrdNamespace != "" {
			cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			cg, _ := os.ReadFile("/proc/" + e.Name() + "/cgroup")
			if bytes.Contains(cmd, []byte(ctrdNamespace)) || bytes.Contains(cg, []byte("/"+ctrdNamespace)) {
				mine[pid] = true
			}
		}
	}
	for pid, d := range times {
		for p, n := pid, 0; p > 1 && n < 64; p, n = parent[p], n+1 {
			if mine[p] {
				s.mine += d
				break
			}
		}
	}
	return s
}

// otherShare is the share of the cores that processes other than the
// benchmark's took between a and b.
func otherShare(a, b benchCPU) float64 {
	wall := b.at.Sub(a.at)
	if wall <= 0 {
		return 0
	}
	other := float64((b.busy-a.busy)-(b.mine-a.mine)) / float64(wall) / float64(runtime.NumCPU())
	return max(other, 0)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// quantile is the nearest-rank q-quantile of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// seedReplicaSet reads seed 003's ReplicaSet from examples/: its image is
// make up's web server, which the test's registry does not have, so the
// container runs the same server (busybox httpd on port 80, answering with
// its version and its pod's name) from busybox.
func seedReplicaSet(t *testing.T) *appsv1.ReplicaSet {
	f, err := os.Open(filepath.Join("..", "examples", "replicaset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs := &appsv1.ReplicaSet{}
	if err := yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(rs); err != nil {
		t.Fatalf("examples/replicaset.yaml: %v", err)
	}
	ctr := &rs.Spec.Template.Spec.Containers[0]
	ctr.Image = "busybox"
	ctr.Command = []string{"sh", "-c", `mkdir -p /tmp/www && echo "v1 $(hostname)" >/tmp/www/index.html && exec httpd -f -p 80 -h /tmp/www`}
	return rs
}

// tracingCostRun fills r with one run on a cluster of its own.
func tracingCostRun(t *testing.T, seed *appsv1.ReplicaSet, replicas int32, r *benchRun) {
	var co clusterOptions
	if r.tracing {
		col := tracingtest.Start(t)
		// After the daemons stopped (cleanups run last first), before the
		// collector does.
		t.Cleanup(func() { r.spans = len(col.Spans()) })
		endpoint := col.Endpoint()
		co = clusterOptions{
			apiserver: func(o *server.Options) {
				o.Tracing.Endpoint, o.Tracing.SamplingRatePerMillion = endpoint, 1_000_000
			},
			controllerManager: func(o *cmapp.Options) {
				o.Tracing.Endpoint, o.Tracing.SamplingRatePerMillion = endpoint, 1_000_000
			},
			scheduler: func(o *schedapp.Options) { o.Tracing.Endpoint, o.Tracing.SamplingRatePerMillion = endpoint, 1_000_000 },
			kubelet: func(o *kubeletapp.Options) {
				o.Tracing.Endpoint, o.Tracing.SamplingRatePerMillion = endpoint, 1_000_000
			},
		}
	}
	customize := co.kubelet
	var ctrdNamespace string
	co.kubelet = func(o *kubeletapp.Options) {
		if customize != nil {
			customize(o)
		}
		ctrdNamespace = o.ContainerdNamespace
	}
	c := startClusterOpts(t, co)
	ctx := context.Background()
	ns := seed.Namespace
	pods := c.client.CoreV1().Pods(ns)

	// The image, pulled once by a pod of its own, and the node Ready.
	warm := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "warm-up"}, Spec: *seed.Spec.Template.Spec.DeepCopy()}
	if _, err := pods.Create(ctx, warm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, c, ns, "metadata.name=warm-up", "", func(p []corev1.Pod) bool { return len(p) == 1 && podReady(&p[0]) }, 2*time.Minute)
	if err := pods.Delete(ctx, "warm-up", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, c, ns, "metadata.name=warm-up", "", func(p []corev1.Pod) bool { return len(p) == 0 }, time.Minute)
	sliBefore := kubeletHistogram(t, c, "kubelet_pod_start_sli_duration_seconds")

	sel := metav1.FormatLabelSelector(seed.Spec.Selector)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	load, _ := os.ReadFile("/proc/loadavg")
	r.load = strings.Fields(string(load) + " ?")[0]

	rs := seed.DeepCopy()
	rs.Spec.Replicas = ptr.To(replicas)
	cpu0 := sampleBenchCPU(ctrdNamespace)
	start := time.Now()
	if _, err := c.client.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	added, ready := map[string]time.Time{}, map[string]time.Time{}
	deadline := time.After(5 * time.Minute)
	for len(ready) < int(replicas) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the pod watch ended with %d of %d pods Ready", len(ready), replicas)
			}
			now := time.Now()
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod || ev.Type == watch.Deleted {
				if ev.Type == watch.Error {
					t.Fatalf("pod watch: %v", apierrors.FromObject(ev.Object))
				}
				continue
			}
			if _, seen := added[p.Name]; !seen {
				added[p.Name] = now
			}
			if _, seen := ready[p.Name]; !seen && podReady(p) {
				ready[p.Name] = now
			}
		case <-deadline:
			t.Fatalf("%d of %d pods Ready after 5 minutes", len(ready), replicas)
		}
	}
	cpu1 := sampleBenchCPU(ctrdNamespace)
	r.others, r.cpu = otherShare(cpu0, cpu1), cpu1.mine-cpu0.mine
	for name, at := range ready {
		r.createdToReady = append(r.createdToReady, at.Sub(added[name]))
		r.rsToReady = append(r.rsToReady, at.Sub(start))
	}
	r.sliP50, r.sliP99 = histogramQuantiles(t, sliBefore, kubeletHistogram(t, c, "kubelet_pod_start_sli_duration_seconds"))

	// Gone before the kubelet stops, so that it tears the pods down.
	if err := c.client.AppsV1().ReplicaSets(ns).Delete(ctx, rs.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{LabelSelector: sel}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, c, ns, "", sel, func(p []corev1.Pod) bool { return len(p) == 0 }, 3*time.Minute)
}

// waitPods polls the pods of ns matching the selectors until done says so.
func waitPods(t *testing.T, c *cluster, ns, fieldSel, labelSel string, done func([]corev1.Pod) bool, timeout time.Duration) {
	t.Helper()
	var last []corev1.Pod
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := c.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: fieldSel, LabelSelector: labelSel})
		if err != nil {
			return false, nil
		}
		last = l.Items
		return done(l.Items), nil
	}); err != nil {
		t.Fatalf("pods %s %s: %v (%d pods)", fieldSel, labelSel, err, len(last))
	}
}

// histogram is a Prometheus histogram's cumulative bucket counts by upper
// bound.
type histogram map[float64]float64

var fetchMu sync.Mutex

// kubeletHistogram reads the histogram name from the kubelet's /metrics,
// through the API server's nodes/proxy.
func kubeletHistogram(t *testing.T, c *cluster, name string) histogram {
	t.Helper()
	fetchMu.Lock()
	defer fetchMu.Unlock()
	body, err := c.client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", nodeName, "proxy", "metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("the kubelet's /metrics: %v", err)
	}
	families, err := new(expfmt.TextParser).TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("the kubelet's /metrics: %v", err)
	}
	f, ok := families[name]
	if !ok || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetHistogram() == nil {
		t.Fatalf("the kubelet's /metrics has no histogram %s", name)
	}
	h := histogram{}
	for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
		h[b.GetUpperBound()] = float64(b.GetCumulativeCount())
	}
	h[math.Inf(1)] = float64(f.GetMetric()[0].GetHistogram().GetSampleCount())
	return h
}

// histogramQuantiles are Prometheus's histogram_quantile(0.5) and (0.99)
// of the observations between before and after.
func histogramQuantiles(t *testing.T, before, after histogram) (p50, p99 float64) {
	t.Helper()
	var bounds []float64
	for b := range after {
		bounds = append(bounds, b)
	}
	slices.Sort(bounds)
	q := func(q float64) float64 {
		total := after[math.Inf(1)] - before[math.Inf(1)]
		if total == 0 {
			return math.NaN()
		}
		rank, lower, prev := q*total, 0.0, 0.0
		for _, b := range bounds {
			n := after[b] - before[b]
			if n >= rank {
				if math.IsInf(b, 1) {
					return lower
				}
				return lower + (b-lower)*(rank-prev)/(n-prev)
			}
			lower, prev = b, n
		}
		return lower
	}
	return q(0.5), q(0.99)
}

// TestKubeletScrapeAuthz: the kubelet API's reviews under a
// Prometheus-style scrape of /metrics/resource, SKIFF_BENCH_SCRAPES
// (default 20) times over one kept-alive connection, by a user the kubelet
// must ask about: with a client certificate (CN prometheus) and with a
// service account's bearer token, both bound to deploy/prometheus/rbac.yaml's
// ClusterRole. With the caches off (every TTL 0, the kubelet before its
// caches) every scrape makes a SubjectAccessReview (and, with the token, a
// TokenReview); with upstream's TTLs only the first does. The reviews are
// counted by the API server's apiserver_request_total; the time is the
// scrape's, at the client.
func TestKubeletScrapeAuthz(t *testing.T) {
	scrapes := envInt(t, "SKIFF_BENCH_SCRAPES", 20)
	var rows []string
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached=%v", cached), func(t *testing.T) {
			c := startClusterWith(t, func(o *kubeletapp.Options) {
				if !cached {
					o.AuthorizedTTL, o.UnauthorizedTTL, o.TokenWebhookCacheTTL = 0, 0, 0
				}
			})
			ttls := "0 / 0 / 0"
			if cached {
				ttls = "5m / 30s / 2m"
			}
			c.kubectl(t, "apply", "-f", filepath.Join("..", "deploy", "prometheus", "rbac.yaml"))
			token := serviceAccountToken(t, c, "prometheus", true)
			url := kubeletURL(t, c) + "/metrics/resource"
			for _, cred := range []string{"client certificate", "bearer token"} {
				client := prometheusClient(t, c, cred == "bearer token")
				var sars, trs []int
				var times []time.Duration
				for i := 0; i < scrapes; i++ {
					sar0, tr0 := reviewCounts(t, c)
					req, _ := http.NewRequest(http.MethodGet, url, nil)
					if cred == "bearer token" {
						req.Header.Set("Authorization", "Bearer "+token)
					}
					start := time.Now()
					resp, err := client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					d := time.Since(start)
					if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "node_cpu_usage_seconds_total") {
						t.Fatalf("%s scrape %d: %s %.200s", cred, i, resp.Status, body)
					}
					// The API server counts a request as it ends, maybe
					// after the kubelet has its answer: half a second for
					// the count to show a review.
					sar1, tr1 := sar0, tr0
					_ = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 500*time.Millisecond, true, func(context.Context) (bool, error) {
						sar1, tr1 = reviewCounts(t, c)
						return sar1 > sar0 && (cred != "bearer token" || tr1 > tr0), nil
					})
					sars, trs, times = append(sars, sar1-sar0), append(trs, tr1-tr0), append(times, d)
				}
				sum := func(ns []int) (n int) {
					for _, x := range ns {
						n += x
					}
					return n
				}
				row := fmt.Sprintf("| %s | %s | %d / %d | %d / %d in %d | %.1f ms | %.1f / %.1f ms |", ttls, cred, sars[0], trs[0],
					sum(sars[1:]), sum(trs[1:]), len(times)-1, ms(times[0]), ms(quantile(times[1:], 0.5)), ms(quantile(times[1:], 0.99)))
				t.Log(row)
				rows = append(rows, row)
				wantTR := 0
				if cred == "bearer token" {
					wantTR = 1
				}
				wantRest := len(times) - 1
				if cached {
					wantRest = 0
				}
				if sars[0] != 1 || trs[0] != wantTR || sum(sars[1:]) != wantRest || sum(trs[1:]) != wantRest*wantTR {
					t.Errorf("%s: reviews %v and token reviews %v; want 1 and %d on the first scrape, then %d and %d in all", cred, sars, trs, wantTR, wantRest, wantRest*wantTR)
				}
			}
		})
	}
	t.Logf("\n%s\n\n| TTLs: allowed / denied / token | Credential | Reviews, first scrape: SAR / TokenReview | The other scrapes | First scrape | Other scrapes: p50 / p99 |\n|---|---|---|---|---|---|\n%s", benchMachine(), strings.Join(rows, "\n"))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
