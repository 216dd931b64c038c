package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// burnPod burns a CPU in container "burn" and idles in "idle".
func burnPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "burn"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers: []corev1.Container{
				{Name: "burn", Image: "busybox", Command: []string{"sh", "-c", "while :; do :; done"}},
				{Name: "idle", Image: "busybox", Command: []string{"sleep", "3600"}},
			},
		},
	}
}

// TestStatsEndpoints: a pod burning CPU shows it in /stats/summary (as
// nano-cores between two readings) and in /metrics/resource and
// /metrics/cadvisor (as cumulative seconds that grow), read from its real
// cgroups; the endpoints need the API server's client certificate.
func TestStatsEndpoints(t *testing.T) {
	e := setup(t)
	k := e.startKubelet(t)
	e.makeReady(t)
	e.createPod(t, burnPod())
	poll(t, 60*time.Second, "pod burn to run", func() (bool, string) {
		p := e.getPod(t, "burn")
		return p.Status.Phase == corev1.PodRunning && condition(p, corev1.ContainersReady) == corev1.ConditionTrue, fmt.Sprintf("%+v", p.Status.ContainerStatuses)
	})
	api := e.apiClient(t, k, "apiserver-kubelet-client")

	var burn, idle statsapi.ContainerStats
	poll(t, 30*time.Second, "the burning container's CPU rate in /stats/summary", func() (bool, string) {
		code, body := api.get(t, "/stats/summary")
		if code != http.StatusOK {
			return false, fmt.Sprintf("%d %s", code, body)
		}
		var s statsapi.Summary
		if err := json.Unmarshal([]byte(body), &s); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		for _, p := range s.Pods {
			if p.PodRef.Name != "burn" || p.PodRef.Namespace != "default" {
				continue
			}
			for _, c := range p.Containers {
				switch c.Name {
				case "burn":
					burn = c
				case "idle":
					idle = c
				}
			}
			// A busy loop on a machine shared with other tests gets at
			// least a tenth of a core.
			return burn.CPU != nil && burn.CPU.UsageNanoCores != nil && *burn.CPU.UsageNanoCores > 100e6 && p.CPU.UsageNanoCores != nil, body
		}
		return false, body
	})
	if idle.CPU == nil || idle.CPU.UsageNanoCores == nil || *idle.CPU.UsageNanoCores >= *burn.CPU.UsageNanoCores/4 {
		t.Errorf("idle container's CPU %+v, want far below the burning one's %d", idle.CPU, *burn.CPU.UsageNanoCores)
	}
	if burn.Memory == nil || burn.Memory.WorkingSetBytes == nil || *burn.Memory.WorkingSetBytes == 0 || burn.StartTime.IsZero() {
		t.Errorf("burning container's memory %+v start %v", burn.Memory, burn.StartTime)
	}

	cpuSeconds := func(path, pattern string) float64 {
		t.Helper()
		code, body := api.get(t, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		m := regexp.MustCompile(`(?m)^` + pattern + ` ([0-9.e+]+) [0-9]+$`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("GET %s: no %s in\n%s", path, pattern, body)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	resource := regexp.QuoteMeta(`container_cpu_usage_seconds_total{container="burn",namespace="default",pod="burn"}`)
	cadvisor := `container_cpu_usage_seconds_total\{container="burn",cpu="total",id="[^"]+",image="[^"]+",name="[0-9a-f-]+",namespace="default",pod="burn"\}`
	first, firstC := cpuSeconds("/metrics/resource", resource), cpuSeconds("/metrics/cadvisor", cadvisor)
	poll(t, 20*time.Second, "the burning container's CPU seconds to grow", func() (bool, string) {
		now := cpuSeconds("/metrics/resource", resource)
		return now > first+0.1 && cpuSeconds("/metrics/cadvisor", cadvisor) > firstC+0.1, fmt.Sprintf("%g then %g", first, now)
	})
	if v := cpuSeconds("/metrics/resource", `node_cpu_usage_seconds_total`); v < first {
		t.Errorf("node CPU %g, want at least the container's %g", v, first)
	}
	cpuSeconds("/metrics/resource", regexp.QuoteMeta(`pod_memory_working_set_bytes{namespace="default",pod="burn"}`))

	anon := e.apiClient(t, k, "")
	for _, path := range []string{"/stats/summary", "/metrics/resource", "/metrics/cadvisor"} {
		if code, body := anon.get(t, path); code != http.StatusUnauthorized {
			t.Errorf("GET %s without a client certificate: %d %s, want 401", path, code, body)
		}
	}
}

// TestResourceMetricsTiming measures GET /metrics/resource on a real
// kubelet running SKIFF_STATS_PODS pods (one sleeping container each),
// through its HTTPS API as the API server asks: the runtime's container
// listing, the cgroup reads and the encoding. It is skipped unless
// SKIFF_STATS_PODS is set (docs/benchmarks.md):
//
//	cd kubelet && SKIFF_STATS_PODS=50 go test -run TestResourceMetricsTiming -v -count=1 ./test/e2e/
func TestResourceMetricsTiming(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SKIFF_STATS_PODS"))
	if n <= 0 {
		t.Skip("set SKIFF_STATS_PODS to the number of pods")
	}
	e := setup(t)
	k := e.startKubelet(t)
	e.makeReady(t)
	for i := 0; i < n; i++ {
		e.createPod(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sleep-%d", i)},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
				Containers: []corev1.Container{{Name: "sleep", Image: "busybox", Command: []string{"sleep", "3600"}}},
			},
		})
	}
	api := e.apiClient(t, k, "apiserver-kubelet-client")
	poll(t, time.Duration(n)*5*time.Second+time.Minute, "every pod in /metrics/resource", func() (bool, string) {
		_, body := api.get(t, "/metrics/resource")
		got := strings.Count(body, "\ncontainer_cpu_usage_seconds_total{")
		return got == n, fmt.Sprintf("%d of %d containers", got, n)
	})
	var times []time.Duration
	for i := 0; i < 20; i++ {
		start := time.Now()
		if code, body := api.get(t, "/metrics/resource"); code != http.StatusOK {
			t.Fatalf("%d %s", code, body)
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	t.Logf("GET /metrics/resource with %d pods: min %s, median %s, max %s (20 requests)", n,
		times[0].Round(100*time.Microsecond), times[len(times)/2].Round(100*time.Microsecond), times[len(times)-1].Round(100*time.Microsecond))
}
