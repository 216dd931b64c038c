// Command bench measures skiff-scheduler end to end through a real API
// server (issue 6): N Node objects, M pending pods created before the
// scheduler starts, and the time until every pod is bound. It prints pods
// bound per second and the machine it ran on.
//
//	cd scheduler && go run ./test/bench [-nodes 1000] [-pods 10000]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	apiserver "skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/scheduler/app"
)

func main() {
	nodes := flag.Int("nodes", 1000, "Node objects")
	pods := flag.Int("pods", 10000, "pending pods")
	clients := flag.Int("clients", 16, "concurrent clients creating nodes and pods")
	timeout := flag.Duration("timeout", 15*time.Minute, "give up after this long")
	flag.Parse()
	if err := run(*nodes, *pods, *clients, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func machine() string {
	cpu := "unknown"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	return fmt.Sprintf("date: %s\ncpu: %s\ncores: %d\ngo: %s", time.Now().UTC().Format("2006-01-02 15:04 UTC"), cpu, runtime.NumCPU(), runtime.Version())
}

// parallel runs fn(i) for i in [0,n) on k workers and returns the first error.
func parallel(n, k int, fn func(i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < k; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || first.Load() != nil {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
}

func run(nNodes, nPods, clients int, timeout time.Duration) error {
	fmt.Println(machine())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "skiff-sched-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ts, err := testserver.StartServer(dir, func(o *apiserver.Options) {
		o.EtcdCompactionInterval = 0
		o.AdvertiseAddress = ""
	})
	if err != nil {
		return err
	}
	defer ts.TearDown()
	c := ts.Client
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"), corev1.ResourcePods: resource.MustParse("110")}
	if err := parallel(nNodes, clients, func(i int) error {
		_, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i), Labels: map[string]string{"kubernetes.io/hostname": fmt.Sprintf("node-%04d", i)}},
			Status: corev1.NodeStatus{Capacity: alloc, Allocatable: alloc,
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating nodes: %w", err)
	}
	const ns = "bench"
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
	if err := parallel(nPods, clients, func(i int) error {
		_, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Labels: map[string]string{"app": "bench"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.local/pause:3",
				Resources: corev1.ResourceRequirements{Requests: req}}}},
		}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating pods: %w", err)
	}
	fmt.Printf("created %d nodes and %d pending pods\n", nNodes, nPods)

	// Count first bindings from a watch that starts before the scheduler.
	list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return err
	}
	w, err := c.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return err
	}
	defer func() { w.Stop() }()

	opts := app.NewOptions()
	opts.LeaderElection.LeaderElect = false
	opts.Serving.BindAddress, opts.Serving.Port = "127.0.0.1", 0
	// The scheduler's own client limits, not the harness's unlimited ones.
	cfg := rest.CopyConfig(ts.AdminConfig)
	cfg.QPS, cfg.Burst = opts.Client.QPS, opts.Client.Burst
	sched, err := app.SetupWithConfig(ctx, opts, cfg)
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- app.Run(sctx, sched) }()

	bound := map[string]bool{}
	var last time.Time
	for len(bound) < nPods {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				// The API server drops a watcher that falls behind; list
				// what was bound meanwhile and watch again from there.
				if w, err = rewatch(ctx, c.CoreV1().Pods(ns), bound, &last); err != nil {
					return fmt.Errorf("watching again after %d bindings: %w", len(bound), err)
				}
				continue
			}
			if ev.Type != watch.Modified {
				continue
			}
			if p, ok := ev.Object.(*corev1.Pod); ok && p.Spec.NodeName != "" && !bound[p.Name] {
				bound[p.Name] = true
				last = time.Now()
			}
		case err := <-done:
			return fmt.Errorf("the scheduler stopped: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("timed out with %d of %d pods bound", len(bound), nPods)
		}
	}
	elapsed := last.Sub(start)
	fmt.Printf("\n| Benchmark | Setting | Result |\n|---|---|---|\n")
	fmt.Printf("| Scheduling throughput, end to end | %d Node objects, %d pending pods, real API server, no client rate limit | **%.0f pods bound/s** (%d pods in %s) |\n",
		nNodes, nPods, float64(nPods)/elapsed.Seconds(), nPods, elapsed.Round(time.Millisecond))
	return nil
}

// rewatch lists the pods, records those bound since the last event (at
// the time of the list, an upper bound) and returns a watch from the list.
func rewatch(ctx context.Context, pods typedcorev1.PodInterface, bound map[string]bool, last *time.Time) (watch.Interface, error) {
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" && !bound[p.Name] {
			bound[p.Name] = true
			*last = time.Now()
		}
	}
	return pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
}
