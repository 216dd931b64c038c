package stats

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"skiff.dev/kubelet/pkg/cm"
	"skiff.dev/kubelet/pkg/pod"
)

// tree is a fake cgroup filesystem.
type tree struct {
	t       testing.TB
	dir     string
	unified bool
}

func (tr tree) write(rel, content string) {
	tr.t.Helper()
	p := filepath.Join(tr.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// set writes a cgroup's counters: CPU in ns, memory usage and inactive
// file pages in bytes.
func (tr tree) set(cgroup string, cpu, usage, inactive uint64) {
	if tr.unified {
		tr.write(path.Join("unified", cgroup, "cpu.stat"), fmt.Sprintf("usage_usec %d\nuser_usec 1\nsystem_usec 1\n", cpu/1000))
		if cgroup == "/" {
			tr.write("proc/meminfo", fmt.Sprintf("MemTotal:       %d kB\nMemFree:        %d kB\nInactive(file):  %d kB\nAnonPages:      10 kB\n", 4<<20, (4<<20)-usage/1024, inactive/1024))
			return
		}
		tr.write(path.Join("unified", cgroup, "memory.current"), fmt.Sprint(usage))
		tr.write(path.Join("unified", cgroup, "memory.stat"), fmt.Sprintf("anon 4096\nfile 8192\ninactive_file %d\npgfault 7\npgmajfault 1\n", inactive))
		tr.write(path.Join("unified", cgroup, "memory.max"), "max\n")
		tr.write(path.Join("unified", cgroup, "pids.current"), "3\n")
		return
	}
	tr.write(path.Join("cpuacct", cgroup, "cpuacct.usage"), fmt.Sprint(cpu))
	tr.write(path.Join("memory", cgroup, "memory.usage_in_bytes"), fmt.Sprint(usage))
	tr.write(path.Join("memory", cgroup, "memory.stat"), fmt.Sprintf("cache 1\nrss 2\ntotal_rss 4096\ntotal_inactive_file %d\ntotal_pgfault 7\ntotal_pgmajfault 1\n", inactive))
	tr.write(path.Join("memory", cgroup, "memory.limit_in_bytes"), "9223372036854771712\n")
	tr.write(path.Join("pids", cgroup, "pids.current"), "3\n")
}

func (tr tree) hierarchies() []cm.Hierarchy {
	if tr.unified {
		return []cm.Hierarchy{{Path: filepath.Join(tr.dir, "unified"), Unified: true}}
	}
	return []cm.Hierarchy{
		{Path: filepath.Join(tr.dir, "cpu"), Controllers: []string{"cpu"}},
		{Path: filepath.Join(tr.dir, "cpuacct"), Controllers: []string{"cpuacct"}},
		{Path: filepath.Join(tr.dir, "memory"), Controllers: []string{"memory"}},
		{Path: filepath.Join(tr.dir, "pids"), Controllers: []string{"pids"}},
		{Path: filepath.Join(tr.dir, "unified"), Unified: true},
	}
}

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

var started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func testPod() *corev1.Pod {
	st := metav1.NewTime(started)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "burn", UID: "uid-1"},
		Status:     corev1.PodStatus{StartTime: &st},
	}
}

func container(id, name string, attempt int, state pod.ContainerState) pod.Container {
	return pod.Container{ID: id, State: state, StartedAt: started, Image: "docker.io/library/busybox:latest", Labels: map[string]string{
		pod.LabelPodUID: "uid-1", pod.LabelContainerName: name, pod.LabelAttempt: fmt.Sprint(attempt),
	}}
}

const podCgroup = "/kubepods/besteffort/poduid-1"

// newTestProvider is a provider over a fake tree with a node, one pod and
// its container "c" (ID c2; an exited attempt c1 beside it).
func newTestProvider(t *testing.T, unified bool) (tree, *clock, *Provider) {
	tr := tree{t: t, dir: t.TempDir(), unified: unified}
	tr.write("proc/stat", "cpu 1 2 3\nbtime 1700000000\n")
	tr.set("/", 10e9, 1000<<20, 400<<20)
	tr.set(podCgroup, 3e9, 300<<20, 100<<20)
	tr.set(path.Join(podCgroup, "c2"), 2e9, 200<<20, 50<<20)
	cg, err := NewCgroups(tr.hierarchies(), filepath.Join(tr.dir, "proc"))
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: started.Add(time.Minute)}
	p := New(Options{
		NodeName: "node-1", Cgroups: cg, MemoryCapacity: 4 << 30, Now: clk.Now,
		Pods:      func() []*corev1.Pod { return []*corev1.Pod{testPod()} },
		PodCgroup: func(*corev1.Pod) string { return podCgroup },
		Containers: func(context.Context) ([]pod.Container, error) {
			return []pod.Container{container("c1", "c", 0, pod.StateExited), container("c2", "c", 1, pod.StateRunning)}, nil
		},
	})
	return tr, clk, p
}

func TestSummary(t *testing.T) {
	for _, unified := range []bool{false, true} {
		t.Run(fmt.Sprintf("unified=%v", unified), func(t *testing.T) {
			tr, clk, p := newTestProvider(t, unified)
			s, err := p.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			sum := s.Summary()
			if got := *sum.Node.Memory.WorkingSetBytes; got != 600<<20 {
				t.Errorf("node working set = %d, want %d", got, 600<<20)
			}
			if got := *sum.Node.Memory.AvailableBytes; got != 4<<30-600<<20 {
				t.Errorf("node available = %d, want capacity less working set", got)
			}
			if got := *sum.Node.CPU.UsageCoreNanoSeconds; got != 10e9 {
				t.Errorf("node cpu = %d, want 10e9", got)
			}
			if sum.Node.CPU.UsageNanoCores != nil {
				t.Errorf("a first reading has no rate, got %d", *sum.Node.CPU.UsageNanoCores)
			}
			if !sum.Node.StartTime.Equal(&metav1.Time{Time: time.Unix(1700000000, 0)}) {
				t.Errorf("node start = %v, want btime", sum.Node.StartTime)
			}
			if len(sum.Pods) != 1 || len(sum.Pods[0].Containers) != 1 {
				t.Fatalf("pods = %+v, want one pod with its running container", sum.Pods)
			}
			ps := sum.Pods[0]
			if ps.PodRef != (statsapi.PodReference{Name: "burn", Namespace: "ns", UID: "uid-1"}) {
				t.Errorf("podRef = %+v", ps.PodRef)
			}
			if got := *ps.Memory.WorkingSetBytes; got != 200<<20 {
				t.Errorf("pod working set = %d, want %d", got, 200<<20)
			}
			if got := *ps.ProcessStats.ProcessCount; got != 3 {
				t.Errorf("pod processes = %d, want 3", got)
			}
			c := ps.Containers[0]
			if c.Name != "c" || *c.Memory.WorkingSetBytes != 150<<20 || *c.CPU.UsageCoreNanoSeconds != 2e9 || *c.Memory.PageFaults != 7 {
				t.Errorf("container = %+v cpu %+v memory %+v", c, c.CPU, c.Memory)
			}
			if c.Memory.AvailableBytes != nil {
				t.Errorf("an unlimited container has no available bytes, got %d", *c.Memory.AvailableBytes)
			}

			// Half a core over 2 s for the container; a reading within the
			// rate window keeps the last rate.
			clk.now = clk.now.Add(2 * time.Second)
			tr.set(path.Join(podCgroup, "c2"), 3e9, 200<<20, 50<<20)
			tr.set(podCgroup, 4e9, 300<<20, 100<<20)
			tr.set("/", 14e9, 1000<<20, 400<<20)
			s, err = p.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			sum = s.Summary()
			if got := sum.Pods[0].Containers[0].CPU.UsageNanoCores; got == nil || *got != 5e8 {
				t.Fatalf("container nano-cores = %v, want 5e8", got)
			}
			if got := *sum.Node.CPU.UsageNanoCores; got != 2e9 {
				t.Errorf("node nano-cores = %d, want 2e9", got)
			}
			clk.now = clk.now.Add(100 * time.Millisecond)
			tr.set(path.Join(podCgroup, "c2"), 3e9+1e8, 200<<20, 50<<20)
			s, _ = p.Snapshot(context.Background())
			if got := *s.Summary().Pods[0].Containers[0].CPU.UsageNanoCores; got != 5e8 {
				t.Errorf("within the window: nano-cores = %d, want the last rate 5e8", got)
			}
		})
	}
}

func TestGoneContainerAndPod(t *testing.T) {
	tr, _, p := newTestProvider(t, false)
	// The container's cgroup went away between the listing and the read.
	if err := os.RemoveAll(filepath.Join(tr.dir, "cpuacct", podCgroup, "c2")); err != nil {
		t.Fatal(err)
	}
	s, err := p.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 1 || len(s.Pods[0].Containers) != 0 {
		t.Fatalf("pods = %+v, want the pod without its container", s.Pods)
	}
	if err := os.RemoveAll(filepath.Join(tr.dir, "memory", podCgroup)); err != nil {
		t.Fatal(err)
	}
	if s, _ = p.Snapshot(context.Background()); len(s.Pods) != 0 {
		t.Fatalf("pods = %+v, want none", s.Pods)
	}
}

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestResourceMetrics(t *testing.T) {
	_, clk, p := newTestProvider(t, false)
	ts := clk.now.UnixMilli()
	code, body := get(t, p.ResourceMetricsHandler(), "/metrics/resource")
	if code != http.StatusOK {
		t.Fatalf("code %d: %s", code, body)
	}
	for _, want := range []string{
		"# TYPE node_cpu_usage_seconds_total counter",
		fmt.Sprintf("node_cpu_usage_seconds_total 10 %d", ts),
		fmt.Sprintf("node_memory_working_set_bytes 6.291456e+08 %d", ts),
		fmt.Sprintf(`container_cpu_usage_seconds_total{container="c",namespace="ns",pod="burn"} 2 %d`, ts),
		fmt.Sprintf(`container_memory_working_set_bytes{container="c",namespace="ns",pod="burn"} 1.572864e+08 %d`, ts),
		fmt.Sprintf(`container_start_time_seconds{container="c",namespace="ns",pod="burn"} %g %d`, float64(started.Unix()), started.UnixMilli()),
		fmt.Sprintf(`pod_cpu_usage_seconds_total{namespace="ns",pod="burn"} 3 %d`, ts),
		fmt.Sprintf(`pod_memory_working_set_bytes{namespace="ns",pod="burn"} 2.097152e+08 %d`, ts),
		"scrape_error 0",
		"resource_scrape_error 0",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
}

func TestResourceMetricsScrapeError(t *testing.T) {
	tr, _, p := newTestProvider(t, false)
	if err := os.Remove(filepath.Join(tr.dir, "cpuacct", "cpuacct.usage")); err != nil {
		t.Fatal(err)
	}
	code, body := get(t, p.ResourceMetricsHandler(), "/metrics/resource")
	if code != http.StatusOK || !strings.Contains(body, "scrape_error 1\n") || strings.Contains(body, "node_cpu_usage_seconds_total ") {
		t.Fatalf("code %d, want scrape_error 1 and no samples:\n%s", code, body)
	}
}

func TestCadvisorMetrics(t *testing.T) {
	_, clk, p := newTestProvider(t, true)
	ts := clk.now.UnixMilli()
	code, body := get(t, p.CadvisorMetricsHandler(), "/metrics/cadvisor")
	if code != http.StatusOK {
		t.Fatalf("code %d: %s", code, body)
	}
	for _, want := range []string{
		fmt.Sprintf(`container_cpu_usage_seconds_total{container="c",cpu="total",id="%s/c2",image="docker.io/library/busybox:latest",name="c2",namespace="ns",pod="burn"} 2 %d`, podCgroup, ts),
		fmt.Sprintf(`container_memory_working_set_bytes{container="c",id="%s/c2",image="docker.io/library/busybox:latest",name="c2",namespace="ns",pod="burn"} 1.572864e+08 %d`, podCgroup, ts),
		fmt.Sprintf(`container_memory_working_set_bytes{container="",id="%s",image="",name="",namespace="ns",pod="burn"} 2.097152e+08 %d`, podCgroup, ts),
		fmt.Sprintf(`container_cpu_usage_seconds_total{container="",cpu="total",id="/",image="",name="",namespace="",pod=""} 10 %d`, ts),
		fmt.Sprintf(`container_memory_rss{container="c",id="%s/c2",image="docker.io/library/busybox:latest",name="c2",namespace="ns",pod="burn"} 4096 %d`, podCgroup, ts),
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
}

func TestSummaryHandler(t *testing.T) {
	_, _, p := newTestProvider(t, false)
	code, body := get(t, p.SummaryHandler(), "/stats/summary?only_cpu_and_memory=true")
	if code != http.StatusOK {
		t.Fatalf("code %d: %s", code, body)
	}
	var sum statsapi.Summary
	if err := json.Unmarshal([]byte(body), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Node.NodeName != "node-1" || len(sum.Pods) != 1 || sum.Pods[0].Containers[0].Name != "c" {
		t.Errorf("summary = %s", body)
	}
	if code, body := get(t, p.SummaryHandler(), "/stats/summary?only_cpu_and_memory=maybe"); code != http.StatusBadRequest {
		t.Errorf("a bad only_cpu_and_memory: code %d, want 400: %s", code, body)
	}
}

func TestNewCgroups(t *testing.T) {
	if _, err := NewCgroups([]cm.Hierarchy{{Path: "/x", Controllers: []string{"cpu"}}}, "/proc"); err == nil {
		t.Error("no memory hierarchy: want an error")
	}
	if _, err := NewCgroups([]cm.Hierarchy{{Path: "/x", Controllers: []string{"memory"}}}, "/proc"); err == nil {
		t.Error("v1 memory without cpuacct: want an error")
	}
}
