// Command bench measures skiff-controller-manager end to end through a real
// API server (issue 5): a Deployment of N replicas is created and the time
// is taken until all N pods exist (the controllers alone; no kubelet, so
// pods stay Pending), and then, in a second phase with skiff-scheduler and
// Node objects, until all N are bound. Every daemon runs with its default
// options, client rate limits included.
//
//	cd controller-manager && go run ./test/bench [-replicas 1000] [-nodes 100] [-runs 3]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	apiserver "skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	schedapp "skiff.dev/scheduler/app"
)

func main() {
	replicas := flag.Int("replicas", 1000, "replicas of the Deployment")
	nodes := flag.Int("nodes", 100, "Node objects for the scheduling phase")
	runs := flag.Int("runs", 3, "runs of each phase")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (API server, controllers and scheduler share this process) to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*replicas, *nodes, *runs, *timeout); err != nil {
		pprof.StopCPUProfile()
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

// withDefaultLimits is the harness's admin configuration with a daemon's
// default client rate limits, so the figure is what a user gets.
func withDefaultLimits(cfg *rest.Config, qps float32, burst int) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = qps, burst
	return c
}

func run(replicas, nNodes, runs int, timeout time.Duration) error {
	fmt.Println(machine())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "skiff-cm-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ts, err := testserver.StartServer(dir, func(o *apiserver.Options) {
		o.EtcdCompactionInterval = 0
	})
	if err != nil {
		return err
	}
	defer ts.TearDown()

	cmOpts := cmapp.NewOptions()
	cmOpts.LeaderElection.LeaderElect = false
	cmOpts.Serving.BindAddress, cmOpts.Serving.Port = "127.0.0.1", 0
	cm, err := cmapp.SetupWithConfig(ctx, cmOpts, withDefaultLimits(ts.AdminConfig, cmOpts.Client.QPS, cmOpts.Client.Burst))
	if err != nil {
		return err
	}
	cmCtx, stopCM := context.WithCancel(ctx)
	cmDone := make(chan error, 1)
	go func() { cmDone <- cmapp.Run(cmCtx, cm) }()
	defer func() { stopCM(); <-cmDone }()

	fmt.Printf("phase 1: controllers only, %d replicas, pods stay Pending\n", replicas)
	var created []float64
	for i := 0; i < runs; i++ {
		d, err := rollout(ctx, ts.Client, fmt.Sprintf("create-%d", i), replicas, false)
		if err != nil {
			return err
		}
		created = append(created, float64(replicas)/d.Seconds())
		fmt.Printf("  run %d: %d pods exist after %v (%.0f pods/s)\n", i+1, replicas, d.Round(time.Millisecond), created[i])
	}

	if err := makeNodes(ctx, ts.Client, nNodes); err != nil {
		return err
	}
	schedOpts := schedapp.NewOptions()
	schedOpts.LeaderElection.LeaderElect = false
	schedOpts.Serving.BindAddress, schedOpts.Serving.Port = "127.0.0.1", 0
	sched, err := schedapp.SetupWithConfig(ctx, schedOpts, withDefaultLimits(ts.AdminConfig, schedOpts.Client.QPS, schedOpts.Client.Burst))
	if err != nil {
		return err
	}
	sCtx, stopSched := context.WithCancel(ctx)
	sDone := make(chan error, 1)
	go func() { sDone <- schedapp.Run(sCtx, sched) }()
	defer func() { stopSched(); <-sDone }()
	// The phase-1 pods are scheduled first; wait for that before timing.
	if err := waitAllBound(ctx, ts.Client, replicas*runs); err != nil {
		return err
	}

	fmt.Printf("phase 2: controllers and scheduler, %d replicas, %d nodes\n", replicas, nNodes)
	var bound []float64
	for i := 0; i < runs; i++ {
		d, err := rollout(ctx, ts.Client, fmt.Sprintf("bind-%d", i), replicas, true)
		if err != nil {
			return err
		}
		bound = append(bound, float64(replicas)/d.Seconds())
		fmt.Printf("  run %d: %d pods bound after %v (%.0f pods/s)\n", i+1, replicas, d.Round(time.Millisecond), bound[i])
	}
	fmt.Printf("pods created per second: median %.0f (runs %s)\n", median(created), list(created))
	fmt.Printf("pods bound per second:   median %.0f (runs %s)\n", median(bound), list(bound))
	return nil
}

// rollout creates a namespace and a Deployment in it and returns the time
// from the create request until every pod exists (or is bound).
func rollout(ctx context.Context, c kubernetes.Interface, ns string, replicas int, bound bool) (time.Duration, error) {
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	w, err := c.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	labels := map[string]string{"app": "bench"}
	start := time.Now()
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.local/pause:3",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	seen, exist := map[string]bool{}, map[string]bool{}
	var allExist time.Duration
	for len(seen) < replicas {
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%s: %d of %d pods after %v: %w", ns, len(seen), replicas, time.Since(start), ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("%s: the watch ended", ns)
			}
			pod, isPod := ev.Object.(*corev1.Pod)
			if !isPod || ev.Type == watch.Deleted {
				continue
			}
			if !exist[pod.Name] && os.Getenv("BENCH_TRACE") != "" && len(exist)%50 == 0 {
				fmt.Printf("      %v: %d pods\n", time.Since(start).Round(time.Millisecond), len(exist))
			}
			if exist[pod.Name] = true; len(exist) == replicas && allExist == 0 {
				allExist = time.Since(start)
			}
			if !bound || pod.Spec.NodeName != "" {
				seen[pod.Name] = true
			}
		}
	}
	took := time.Since(start)
	if bound {
		fmt.Printf("    (all %d pods existed after %v)\n", replicas, allExist.Round(time.Millisecond))
	}
	return took, nil
}

func makeNodes(ctx context.Context, c kubernetes.Interface, n int) error {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110")}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("node-%03d", i)
		if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
			Status: corev1.NodeStatus{Capacity: alloc, Allocatable: alloc,
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// waitAllBound waits until n pods (in every namespace) are bound.
func waitAllBound(ctx context.Context, c kubernetes.Interface, n int) error {
	for {
		pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName!="})
		if err != nil {
			return err
		}
		if len(pods.Items) >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d earlier pods bound: %w", len(pods.Items), n, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func list(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.0f", x)
	}
	return strings.Join(parts, ", ")
}
