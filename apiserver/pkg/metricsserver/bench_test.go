package metricsserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkListPodMetrics is the handler's time to list the metrics of
// every pod of a cluster of N pods (two containers each, on N/100 nodes),
// in JSON: the work the API server adds to a request once it is
// authenticated and authorized.
//
//	cd apiserver && go test -run '^$' -bench ListPodMetrics ./pkg/metricsserver/
func BenchmarkListPodMetrics(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			h := benchServer(n).Handler(http.NotFoundHandler())
			r := httptest.NewRequest(http.MethodGet, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", nil)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "pod-0-0") {
					b.Fatalf("%d %.200s", w.Code, w.Body.String())
				}
			}
		})
	}
}

// BenchmarkAggregatedHop is what serving the API from a metrics-server
// behind the aggregation layer would add: the same list of N pods' metrics
// over TLS from the handler directly, and through a TLS reverse proxy in
// front of it (the aggregator's hop: httputil.ReverseProxy to the
// backend's endpoint over a kept-alive TLS connection), with the CPU time
// the process (client, proxy and backend) spent per list. Neither includes
// the API server's authentication and authorization, which both paths
// pay, nor metrics-server's delegated authentication of the proxy.
//
//	cd apiserver && go test -run '^$' -bench AggregatedHop ./pkg/metricsserver/
func BenchmarkAggregatedHop(b *testing.B) {
	for _, n := range []int{100, 1000} {
		backend := httptest.NewTLSServer(benchServer(n).Handler(http.NotFoundHandler()))
		target, _ := url.Parse(backend.URL)
		rp := httputil.NewSingleHostReverseProxy(target)
		rp.Transport = backend.Client().Transport
		front := httptest.NewTLSServer(rp)
		for _, tc := range []struct {
			name string
			srv  *httptest.Server
		}{{"built-in", backend}, {"aggregated", front}} {
			b.Run(fmt.Sprintf("pods=%d/%s", n, tc.name), func(b *testing.B) {
				c := tc.srv.Client()
				cpu0 := cpuTime()
				defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
				for i := 0; i < b.N; i++ {
					resp, err := c.Get(tc.srv.URL + "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods")
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatal(resp.Status)
					}
				}
			})
		}
		front.Close()
		backend.Close()
	}
}

// benchServer is a Server with two points for each of n pods (two
// containers each, on n/100 nodes).
func benchServer(n int) *Server {
	var pods []*corev1.Pod
	var nodes []*corev1.Node
	bodies := map[string][2]string{}
	for i := 0; i < n/100; i++ {
		name := fmt.Sprintf("node-%d", i)
		nodes = append(nodes, node(name, true, nil))
		var first, second strings.Builder
		for j := 0; j < 100; j++ {
			p := fmt.Sprintf("pod-%d-%d", i, j)
			pods = append(pods, testPod("default", p, map[string]string{"app": "x"}))
			for _, c := range []string{"app", "sidecar"} {
				l := fmt.Sprintf("{container=%q,namespace=\"default\",pod=%q}", c, p)
				fmt.Fprintf(&first, "container_cpu_usage_seconds_total%s 1 1000\ncontainer_memory_working_set_bytes%s 1000 1000\ncontainer_start_time_seconds%s 1 1000\n", l, l, l)
				fmt.Fprintf(&second, "container_cpu_usage_seconds_total%s 2 3000\ncontainer_memory_working_set_bytes%s 1000 3000\ncontainer_start_time_seconds%s 1 1000\n", l, l, l)
			}
		}
		bodies[name] = [2]string{first.String(), second.String()}
	}
	round := 0
	s := New(Options{
		Scraper: scraperFunc(func(n *corev1.Node) string { return bodies[n.Name][round] }),
		Nodes:   func(context.Context) ([]*corev1.Node, error) { return nodes, nil },
		Pods:    func(context.Context, string) ([]*corev1.Pod, error) { return pods, nil },
	})
	s.Scrape(context.Background())
	round = 1
	s.Scrape(context.Background())
	return s
}

type scraperFunc func(*corev1.Node) string

func (f scraperFunc) Scrape(_ context.Context, n *corev1.Node) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(f(n))), nil
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
