package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/miekg/dns"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/discovery"
	"github.com/prometheus/prometheus/discovery/kubernetes"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	"gopkg.in/yaml.v2"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/component-base/certs"
	cmapp "skiff.dev/controller-manager/app"
	dnsapp "skiff.dev/dns/app"
	"skiff.dev/kubelet/test/harness"
	proxyapp "skiff.dev/proxy/app"
	schedapp "skiff.dev/scheduler/app"
)

// The real Prometheus server (Debian package prometheus) and where the
// test's instance listens, on the loopback of the test's namespace.
const (
	prometheusBin  = "/usr/bin/prometheus"
	prometheusAddr = "127.0.0.1:9090"
	// deployDir holds the scrape configuration, the RBAC for its user and
	// the dashboard the test uses as written.
	deployDir = "../deploy/prometheus"
	// deployCertDir is where deploy/prometheus/prometheus.yml expects the
	// CA and Prometheus's client certificate; deployAPIServer is the API
	// server it discovers through.
	deployCertDir   = "/etc/prometheus/skiff/"
	deployAPIServer = "https://127.0.0.1:6443"
)

const promClientPod = `apiVersion: v1
kind: Pod
metadata:
  name: prom-client
  labels: {app: prom-client}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: ["sleep", "3600"]
---
apiVersion: v1
kind: Service
metadata:
  name: prom-client
spec:
  selector: {app: prom-client}
  ports:
  - {port: 80, targetPort: 8080}
`

// TestPrometheus is issue 26's Prometheus part on a running cluster: a
// real Prometheus server scrapes every daemon's /metrics through the
// scrape configuration in deploy/prometheus (TLS with the client
// certificate of the user "prometheus", whose rights come from
// deploy/prometheus/rbac.yaml applied with the real kubectl), the metric
// names Kubernetes users query are there, and every query of the Grafana
// dashboard returns data.
//
// Debian builds its prometheus package without Kubernetes service
// discovery (its changelog: "Kubernetes support has been completely
// removed"). The configuration's kubernetes_sd_configs are therefore run
// by Prometheus's own discovery code (github.com/prometheus/prometheus
// v0.42.0, the server's version) in this process, listing and watching
// skiff's API, and handed to the server through file_sd_configs, the
// same target groups with the same __meta_kubernetes_* labels; the
// server applies the configuration's relabelling to them and scrapes.
func TestPrometheus(t *testing.T) {
	if _, err := os.Stat(prometheusBin); err != nil {
		t.Skipf("needs %s (Debian package prometheus)", prometheusBin)
	}
	var caFile string
	c := startClusterOpts(t, clusterOptions{
		// As a real API server, reachable at the kubernetes Service's
		// endpoint (the node's address), where discovery finds it.
		apiserver: func(o *server.Options) {
			o.BindAddress = "0.0.0.0"
			caFile = o.ClientCAFile
		},
		// Upstream's ports; /metrics for clients the API server
		// authorizes.
		controllerManager: func(o *cmapp.Options) {
			o.Serving.BindAddress, o.Serving.Port, o.Serving.ClientCAFile = "127.0.0.1", 10257, caFile
		},
		scheduler: func(o *schedapp.Options) {
			o.Serving.BindAddress, o.Serving.Port, o.Serving.ClientCAFile = "127.0.0.1", 10259, caFile
		},
	})
	stopProxy := c.startProxy(t, nil, func(o *proxyapp.Options) { o.MetricsBindAddress = "0.0.0.0:10249" })
	t.Cleanup(func() {
		stopProxy()
		c.cleanupProxy(t)
	})
	c.waitProxyHealthy(t)
	ready, _ := c.startDNS(t, startUpstreamResolver(t), func(o *dnsapp.Options) { o.MetricsBindAddress = ":9153" })
	harness.Poll(t, time.Minute, "skiff-dns /ready", func() (bool, string) {
		resp, err := http.Get("http://" + ready + "/ready")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})

	// What users do: the RBAC, a client certificate for "prometheus".
	c.kubectl(t, "apply", "-f", filepath.Join(deployDir, "rbac.yaml"))
	promDir := filepath.Join(c.dir, "prometheus")
	if err := os.MkdirAll(filepath.Join(promDir, "sd"), 0o755); err != nil {
		t.Fatal(err)
	}
	ca, err := certs.LoadCA(c.ts.PKIDir)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := certs.IssueClientCert(ca, "prometheus", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := certs.WriteKeyPair(promDir, "prometheus", kp); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(promDir, "ca.crt"), string(ca.CertPEM()))

	// A pod, so that the scheduler, the kubelet and the container series
	// have something to count (its image pulled: busybox is always
	// pulled), and a Service of it, so that the endpointslice controller
	// and the proxy have a step to time; a query, so that the DNS has.
	manifest := filepath.Join(c.dir, "prom-client.yaml")
	writeFile(t, manifest, promClientPod)
	c.kubectl(t, "apply", "-f", manifest)
	c.waitPodRunning(t, "prom-client")
	harness.Poll(t, 30*time.Second, "kubernetes.default from skiff-dns", func() (bool, string) {
		m := new(dns.Msg)
		m.SetQuestion("kubernetes.default.svc.cluster.local.", dns.TypeA)
		r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, net.JoinHostPort(nodeIP, "53"))
		if err != nil {
			return false, err.Error()
		}
		return len(r.Answer) == 1, r.String()
	})

	cfg, sd := prometheusConfig(t, c.ts.URL, promDir)
	cfgFile := filepath.Join(promDir, "prometheus.yml")
	writeFile(t, cfgFile, string(cfg))
	runDiscovery(t, sd, filepath.Join(promDir, "sd"))
	prom := startPrometheus(t, cfgFile, filepath.Join(promDir, "data"))

	jobs := []string{"apiserver", "controller-manager", "scheduler", "kubelet", "kubelet-cadvisor", "proxy", "dns"}
	start := time.Now()
	harness.Poll(t, 90*time.Second, "every target up in Prometheus", func() (bool, string) {
		targets, err := prom.targets()
		if err != nil {
			return false, err.Error()
		}
		var missing []string
		up := map[string]int{}
		for _, tg := range targets {
			if tg.Health != "up" {
				missing = append(missing, fmt.Sprintf("%s %s: %s %s", tg.Labels["job"], tg.ScrapeURL, tg.Health, tg.LastError))
				continue
			}
			up[tg.Labels["job"]]++
		}
		for _, j := range jobs {
			if up[j] == 0 {
				missing = append(missing, j+": no target up")
			}
		}
		return len(missing) == 0, strings.Join(missing, "; ")
	})
	t.Logf("every target up %v after Prometheus's start", time.Since(start).Round(100*time.Millisecond))

	// The names Kubernetes users query, each from the daemon that owns it.
	for _, m := range []struct{ job, name string }{
		{"apiserver", "apiserver_request_total"},
		{"apiserver", "apiserver_request_duration_seconds_bucket"},
		{"apiserver", "apiserver_registered_watchers"},
		{"apiserver", "etcd_request_duration_seconds_bucket"},
		{"controller-manager", "workqueue_depth"},
		{"controller-manager", "workqueue_adds_total"},
		{"controller-manager", "workqueue_queue_duration_seconds_bucket"},
		{"controller-manager", "workqueue_work_duration_seconds_bucket"},
		{"scheduler", "scheduler_schedule_attempts_total"},
		{"scheduler", "scheduler_scheduling_attempt_duration_seconds_bucket"},
		{"scheduler", "scheduler_pending_pods"},
		{"kubelet", "kubelet_pod_start_duration_seconds_bucket"},
		{"kubelet", "kubelet_running_pods"},
		{"kubelet", "kubelet_runtime_operations_duration_seconds_bucket"},
		{"kubelet-cadvisor", `container_cpu_usage_seconds_total{namespace="default",pod="prom-client",container="c"}`},
		{"kubelet-cadvisor", `container_memory_working_set_bytes{namespace="default",pod="prom-client",container="c"}`},
		{"proxy", "kubeproxy_sync_proxy_rules_duration_seconds_bucket"},
		{"proxy", "kubeproxy_sync_proxy_rules_last_timestamp_seconds"},
		{"dns", "coredns_dns_requests_total"},
		{"dns", "coredns_dns_responses_total"},
		{"dns", "coredns_dns_request_duration_seconds_bucket"},
	} {
		q := withJob(m.name, m.job)
		harness.Poll(t, 30*time.Second, q, func() (bool, string) {
			res, err := prom.query(q)
			if err != nil {
				return false, err.Error()
			}
			return len(res) > 0, "no series"
		})
	}
	for _, m := range []struct{ q, want string }{
		{`scheduler_schedule_attempts_total{result="scheduled"}`, "the pod's scheduling"},
		{`kubelet_pod_start_duration_seconds_count`, "the pod's start"},
		// The steps of the pod's path, each daemon's histogram.
		{`scheduler_pod_scheduling_sli_duration_seconds_count`, "the pod's scheduling (queued to bound)"},
		{`kubelet_image_pull_duration_seconds_count`, "the image pull"},
		{`skiff_endpoint_slice_controller_change_to_write_duration_seconds_count`, "the Service's slice written"},
		{`endpoint_slice_controller_endpoints_added_per_sync_sum`, "the pod added to the Service's endpoints"},
		{`kubeproxy_network_programming_duration_seconds_count`, "the Service's rules written"},
	} {
		harness.Poll(t, 30*time.Second, m.want+" counted", func() (bool, string) {
			res, err := prom.query("sum(" + m.q + ")")
			if err != nil {
				return false, err.Error()
			}
			return len(res) == 1 && res[0].value >= 1, fmt.Sprint(res)
		})
	}

	// Every query of the dashboard returns data.
	exprs := dashboardExprs(t, filepath.Join(deployDir, "dashboard.json"))
	for _, e := range exprs {
		harness.Poll(t, 30*time.Second, "dashboard query "+e.panel, func() (bool, string) {
			res, err := prom.query(e.expr)
			if err != nil {
				return false, err.Error()
			}
			return len(res) > 0, "empty result for " + e.expr
		})
	}
	t.Logf("%d dashboard queries return data", len(exprs))

	// Figures: each daemon's scrape duration and sample count
	// (docs/benchmarks.md), with the machine and the CPU others took.
	t.Logf("machine: %s", machineSummary())
	before := prom.sampleCPU()
	harness.Poll(t, time.Minute, "15 scrapes of every target", func() (bool, string) {
		res, err := prom.query("min(count_over_time(scrape_duration_seconds[2m]))")
		if err != nil {
			return false, err.Error()
		}
		return len(res) == 1 && res[0].value >= 15, fmt.Sprint(res)
	})
	dur, err := prom.query(`avg by (job) (avg_over_time(scrape_duration_seconds[2m]))`)
	if err != nil {
		t.Fatal(err)
	}
	maxDur, err := prom.query(`max by (job) (max_over_time(scrape_duration_seconds[2m]))`)
	if err != nil {
		t.Fatal(err)
	}
	minDur, err := prom.query(`min by (job) (min_over_time(scrape_duration_seconds[2m]))`)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := prom.query(`max by (job) (scrape_samples_scraped)`)
	if err != nil {
		t.Fatal(err)
	}
	byJob := func(res []promSample) map[string]float64 {
		out := map[string]float64{}
		for _, s := range res {
			out[s.metric["job"]] = s.value
		}
		return out
	}
	d, mn, md, n := byJob(dur), byJob(minDur), byJob(maxDur), byJob(samples)
	for _, j := range jobs {
		t.Logf("scrape %-18s min %6.2f ms, mean %6.2f ms, max %6.2f ms, %5.0f samples", j, mn[j]*1000, d[j]*1000, md[j]*1000, n[j])
	}
	t.Logf("CPU while measuring: %s", otherLoad(before, prom.sampleCPU()))
}

// withJob adds job="job" to the selector of a metric name.
func withJob(sel, job string) string {
	if i := strings.Index(sel, "{"); i >= 0 {
		return sel[:i+1] + `job="` + job + `",` + sel[i+1:]
	}
	return sel + `{job="` + job + `"}`
}

// waitPodRunning waits until the pod in default is Running.
func (c *cluster) waitPodRunning(t *testing.T, name string) {
	t.Helper()
	harness.Poll(t, 3*time.Minute, name+" running", func() (bool, string) {
		out, err := c.kubectlErr("get", "pod", name, "-o", "jsonpath={.status.phase}")
		return err == nil && out == "Running", out
	})
}

// prometheusConfig reads deploy/prometheus/prometheus.yml and makes the
// test's configuration of it: the cert paths and the API server's address
// substituted, a 1 s scrape interval, and each job's
// kubernetes_sd_configs replaced by a file_sd_configs that runDiscovery
// fills. It returns the configuration and each job's Kubernetes
// discovery.
func prometheusConfig(t *testing.T, apiServer, certDir string) ([]byte, map[string]discovery.Configs) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(deployDir, "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(raw), deployCertDir, certDir+"/")
	text = strings.ReplaceAll(text, deployAPIServer, apiServer)
	var doc yaml.MapSlice
	if err := yaml.UnmarshalStrict([]byte(text), &doc); err != nil {
		t.Fatalf("deploy/prometheus/prometheus.yml: %v", err)
	}
	sd := map[string]discovery.Configs{}
	for i, top := range doc {
		switch top.Key {
		case "global":
			doc[i].Value = yaml.MapSlice{{Key: "scrape_interval", Value: "1s"}, {Key: "scrape_timeout", Value: "1s"}}
		case "scrape_configs":
			for _, job := range top.Value.([]interface{}) {
				jc := job.(yaml.MapSlice)
				var name string
				for _, kv := range jc {
					if kv.Key == "job_name" {
						name = kv.Value.(string)
					}
				}
				for k, kv := range jc {
					if kv.Key != "kubernetes_sd_configs" {
						continue
					}
					b, err := yaml.Marshal(kv.Value)
					if err != nil {
						t.Fatal(err)
					}
					var cfgs []*kubernetes.SDConfig
					if err := yaml.UnmarshalStrict(b, &cfgs); err != nil {
						t.Fatalf("job %s: kubernetes_sd_configs: %v", name, err)
					}
					for _, c := range cfgs {
						sd[name] = append(sd[name], c)
					}
					jc[k] = yaml.MapItem{Key: "file_sd_configs", Value: []yaml.MapSlice{{
						{Key: "files", Value: []string{filepath.Join(certDir, "sd", name+".json")}},
						{Key: "refresh_interval", Value: "1s"},
					}}}
				}
			}
		}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out, sd
}

// runDiscovery runs Prometheus's discovery manager with the jobs'
// Kubernetes discovery until the test ends, and writes each job's target
// groups to dir/<job>.json in file_sd's format. It returns once every
// job has a target.
func runDiscovery(t *testing.T, sd map[string]discovery.Configs, dir string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := discovery.NewManager(ctx, log.NewNopLogger())
	if err := m.ApplyConfig(sd); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = m.Run() }()
	ready := make(chan struct{})
	go func() {
		defer close(done)
		written := false
		for {
			select {
			case <-ctx.Done():
				return
			case all := <-m.SyncCh():
				for job, groups := range all {
					if err := writeFileSD(filepath.Join(dir, job+".json"), groups); err != nil {
						t.Errorf("file_sd of %s: %v", job, err)
					}
				}
				if !written && everyJobHasTargets(all, sd) {
					written = true
					close(ready)
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-ready:
	case <-time.After(time.Minute):
		t.Fatal("Prometheus's Kubernetes discovery found no target for some job within a minute")
	}
}

func everyJobHasTargets(all map[string][]*targetgroup.Group, sd map[string]discovery.Configs) bool {
	for job := range sd {
		n := 0
		for _, g := range all[job] {
			n += len(g.Targets)
		}
		if n == 0 {
			return false
		}
	}
	return true
}

// fileSDGroup is one entry of a file_sd file.
type fileSDGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// writeFileSD writes groups as file_sd does them: one entry per target,
// with the group's labels and the target's own.
func writeFileSD(path string, groups []*targetgroup.Group) error {
	out := []fileSDGroup{}
	for _, g := range groups {
		for _, tg := range g.Targets {
			labels := map[string]string{}
			for k, v := range g.Labels {
				labels[string(k)] = string(v)
			}
			for k, v := range tg {
				if k != model.AddressLabel {
					labels[string(k)] = string(v)
				}
			}
			out = append(out, fileSDGroup{Targets: []string{string(tg[model.AddressLabel])}, Labels: labels})
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// prometheus is the test's Prometheus server.
type prometheus struct {
	base string
	pid  int
}

// machineSummary describes where the figures were taken.
func machineSummary() string {
	field := func(path, key string) string {
		b, _ := os.ReadFile(path)
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == key {
				return strings.TrimSpace(v)
			}
		}
		return "unknown"
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	load, _ := os.ReadFile("/proc/loadavg")
	version, _ := exec.Command(prometheusBin, "--version").CombinedOutput()
	first, _, _ := strings.Cut(string(version), "\n")
	return fmt.Sprintf("%s, %s, %d cores, %s, %s, Linux %s, load %s", time.Now().UTC().Format("2006-01-02 15:04 MST"),
		field("/proc/cpuinfo", "model name"), runtime.NumCPU(), field("/proc/meminfo", "MemTotal"), runtime.Version(),
		strings.TrimSpace(string(kernel)), strings.Join(strings.Fields(string(load))[:3], " ")) + "; " + first
}

// cpuSample is the machine's busy CPU time and that of this process (the
// daemons run in it) and of the Prometheus server at one moment.
type cpuSample struct {
	at         time.Time
	busy, self time.Duration
}

// ticks adds up the fields at idx (1-based, as proc(5) numbers them) of
// a /proc stat line, in clock ticks.
func ticks(fields []string, idx ...int) time.Duration {
	var d time.Duration
	for _, i := range idx {
		if i-1 < len(fields) {
			n, _ := strconv.ParseInt(fields[i-1], 10, 64)
			d += time.Duration(n) * (time.Second / 100)
		}
	}
	return d
}

func (p *prometheus) sampleCPU() cpuSample {
	s := cpuSample{at: time.Now()}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		// cpu user nice system idle iowait irq softirq steal
		s.busy = ticks(strings.Fields(line), 2, 3, 4, 7, 8, 9)
	}
	for _, pid := range []string{"self", strconv.Itoa(p.pid)} {
		if b, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil {
			// After the command's closing parenthesis: utime and stime
			// are fields 14 and 15.
			rest := string(b[bytes.LastIndexByte(b, ')')+2:])
			s.self += ticks(strings.Fields(rest), 14-2, 15-2)
		}
	}
	return s
}

// otherLoad describes the CPU that other processes used between a and b.
func otherLoad(a, b cpuSample) string {
	wall := b.at.Sub(a.at)
	if wall <= 0 {
		return "unknown"
	}
	cores := float64(runtime.NumCPU())
	self := float64(b.self-a.self) / float64(wall) / cores
	other := float64((b.busy-a.busy)-(b.self-a.self)) / float64(wall) / cores
	return fmt.Sprintf("the test process (every daemon) and Prometheus %.0f%%, other processes %.0f%% of %d cores over %s",
		100*self, 100*max(other, 0), runtime.NumCPU(), wall.Round(time.Second))
}

// startPrometheus runs the real server on loopback until the test ends.
func startPrometheus(t *testing.T, cfgFile, dataDir string) *prometheus {
	t.Helper()
	var logBuf bytes.Buffer
	cmd := exec.Command(prometheusBin, "--config.file="+cfgFile, "--storage.tsdb.path="+dataDir,
		"--web.listen-address="+prometheusAddr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &logBuf, &logBuf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", prometheusBin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("prometheus's log:\n%s", logBuf.String())
		}
	})
	p := &prometheus{base: "http://" + prometheusAddr, pid: cmd.Process.Pid}
	harness.Poll(t, 30*time.Second, "Prometheus ready", func() (bool, string) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("prometheus exited: %v\n%s", err, logBuf.String())
		default:
		}
		resp, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return p
}

// promTarget is one of /api/v1/targets's active targets.
type promTarget struct {
	Labels    map[string]string `json:"labels"`
	ScrapeURL string            `json:"scrapeUrl"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
}

func (p *prometheus) get(path string, params url.Values, data any) error {
	resp, err := http.Get(p.base + path + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s %s: %s: %s", path, params.Encode(), resp.Status, body.Error)
	}
	return json.Unmarshal(body.Data, data)
}

func (p *prometheus) targets() ([]promTarget, error) {
	var data struct {
		ActiveTargets []promTarget `json:"activeTargets"`
	}
	err := p.get("/api/v1/targets", url.Values{"state": {"active"}}, &data)
	return data.ActiveTargets, err
}

// promSample is one element of an instant vector.
type promSample struct {
	metric map[string]string
	value  float64
}

// query runs an instant query that must return a vector.
func (p *prometheus) query(q string) ([]promSample, error) {
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := p.get("/api/v1/query", url.Values{"query": {q}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("%s: a %s, not a vector", q, data.ResultType)
	}
	out := make([]promSample, 0, len(data.Result))
	for _, r := range data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: value %v: %w", q, r.Value[1], err)
		}
		out = append(out, promSample{metric: r.Metric, value: v})
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i].metric) < fmt.Sprint(out[j].metric) })
	return out, nil
}

// dashboardExpr is one panel target's query.
type dashboardExpr struct {
	panel, expr string
}

// dashboardExprs reads every panel target's expr of a Grafana dashboard,
// rows' nested panels included.
func dashboardExprs(t *testing.T, path string) []dashboardExpr {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string  `json:"title"`
		Type    string  `json:"type"`
		Panels  []panel `json:"panels"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	}
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []dashboardExpr
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no query", path, p.Title)
			}
			for _, tg := range p.Targets {
				if tg.Expr == "" {
					t.Errorf("%s: panel %q has a target without expr", path, p.Title)
					continue
				}
				out = append(out, dashboardExpr{panel: p.Title, expr: tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if len(out) == 0 {
		t.Fatalf("%s: no query", path)
	}
	return out
}
