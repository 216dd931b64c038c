package stats

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/kubelet/pkg/cm"
	"skiff.dev/kubelet/pkg/pod"
)

// BenchmarkResourceMetrics is the time to serve /metrics/resource for a
// node of N pods of two containers each: reading 3N+1 cgroups and
// encoding the series. As root on a cgroup v1 machine it reads real
// cgroups (empty ones, made under /sys/fs/cgroup/<controller>/skiff-bench-*
// and removed after); otherwise a fake tree in a temporary directory. The
// runtime's container listing is not part of it (a function returns the
// containers).
//
//	cd kubelet && go test -run '^$' -bench ResourceMetrics -benchtime 200x ./pkg/stats/
func BenchmarkResourceMetrics(b *testing.B) {
	for _, n := range []int{10, 100, 500} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			p := benchProvider(b, n)
			h := p.ResourceMetricsHandler()
			r := httptest.NewRequest(http.MethodGet, "/metrics/resource", nil)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code)
				}
				_, _ = io.Copy(io.Discard, w.Body)
			}
		})
	}
}

func benchProvider(b *testing.B, n int) *Provider {
	root := "/skiff-bench-" + fmt.Sprint(os.Getpid())
	var hs []cm.Hierarchy
	var mkdir func(cgroup string)
	if real, err := cm.DiscoverHierarchies("/proc/self/mountinfo"); err == nil && os.Geteuid() == 0 && canMake(real, root) {
		hs = real
		mkdir = func(cgroup string) {
			for _, h := range real {
				if h.Unified || hasAny(h.Controllers, "cpuacct", "memory", "pids") {
					if err := os.MkdirAll(filepath.Join(h.Path, cgroup), 0o755); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		b.Cleanup(func() {
			mgr, err := cm.New(cm.Options{Hierarchies: real, Root: root})
			if err == nil {
				_ = mgr.RemoveAll()
			}
		})
		b.Logf("real cgroups under %s", root)
	} else {
		tr := tree{t: b, dir: b.TempDir()}
		hs = tr.hierarchies()
		tr.write("proc/stat", "btime 1700000000\n")
		tr.set("/", 1e9, 1<<30, 1<<20)
		mkdir = func(cgroup string) { tr.set(cgroup, 1e9, 1<<20, 1<<10) }
		b.Logf("a fake cgroup tree (not root, or no v1 hierarchies)")
	}
	var pods []*corev1.Pod
	var containers []pod.Container
	for i := 0; i < n; i++ {
		uid := types.UID(fmt.Sprintf("uid-%d", i))
		pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("pod-%d", i), UID: uid}})
		mkdir(path.Join(root, "pod"+string(uid)))
		for _, c := range []string{"app", "sidecar"} {
			id := fmt.Sprintf("%s-%d", c, i)
			mkdir(path.Join(root, "pod"+string(uid), id))
			containers = append(containers, pod.Container{ID: id, State: pod.StateRunning, Labels: map[string]string{
				pod.LabelPodUID: string(uid), pod.LabelContainerName: c,
			}})
		}
	}
	cg, err := NewCgroups(hs, "/proc")
	if err != nil {
		b.Fatal(err)
	}
	return New(Options{
		NodeName: "bench", Cgroups: cg, MemoryCapacity: 1 << 34,
		Pods:       func() []*corev1.Pod { return pods },
		PodCgroup:  func(p *corev1.Pod) string { return path.Join(root, "pod"+string(p.UID)) },
		Containers: func(context.Context) ([]pod.Container, error) { return containers, nil },
	})
}

// canMake says whether cgroups can be made under root in the v1
// cpuacct hierarchy (a machine with cgroup v1, and root).
func canMake(hs []cm.Hierarchy, root string) bool {
	for _, h := range hs {
		if hasAny(h.Controllers, "cpuacct") {
			dir := filepath.Join(h.Path, root)
			if err := os.Mkdir(dir, 0o755); err != nil {
				return false
			}
			return true
		}
	}
	return false
}

func hasAny(list []string, want ...string) bool {
	for _, l := range list {
		for _, w := range want {
			if l == w {
				return true
			}
		}
	}
	return false
}
