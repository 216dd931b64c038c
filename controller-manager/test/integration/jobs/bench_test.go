package jobs

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

// requestCounter counts the controller manager's API requests by verb
// and resource while on.
type requestCounter struct {
	on    atomic.Bool
	mu    sync.Mutex
	total int
	by    map[string]int
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if c.on.Load() {
			c.mu.Lock()
			c.total++
			c.by[r.Method+" "+resourceOf(r.URL.Path)]++
			c.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

// resourceOf is the resource (and subresource) of an API path.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			return strings.Join(parts[i+2:min(len(parts), i+3)], "/") + subresource(parts[i+3:])
		}
	}
	return parts[len(parts)-1]
}

func subresource(rest []string) string {
	if len(rest) >= 2 {
		return "/" + rest[1]
	}
	return ""
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkJob1000Completions measures, against a real API server, a Job of
// 1,000 completions and parallelism 1,000 whose pods exit (Succeeded) as
// soon as they exist: the time from the Job's creation to its Complete
// condition (s-to-complete), and the controller manager's API requests per
// pod (creates, finalizer patches, status updates, events; the informers'
// watches are open before the clock starts). The test plays the kubelet
// with 16 goroutines. Only the job controller runs. It fails when a pod is
// deleted (the job never has more than it needs) or the status does not
// count exactly 1,000 successes. Run it once:
//
//	go test -run '^$' -bench Job1000Completions -benchtime 1x -timeout 30m ./test/integration/jobs/
func BenchmarkJob1000Completions(b *testing.B) {
	const completions = 1000
	for b.Loop() {
		b.StopTimer()
		ts := testserver.Start(b, nil)
		ctx, cancel := context.WithCancel(context.Background())
		counter := &requestCounter{by: map[string]int{}}
		cfg, stop := cmtest.StartWrapped(b, ts, func(o *cmapp.Options) { o.Controllers = []string{"job"} }, counter.wrap)
		// Wait for the controller manager to lead and list, by a job of
		// one pod that needs it.
		warm := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "warm"}, Spec: newJob("warm", 1, 1).Spec}
		if _, err := ts.Client.BatchV1().Jobs(ns).Create(ctx, warm, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			l, err := ts.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return err == nil && len(l.Items) == 1, nil
		}); err != nil {
			b.Fatalf("the controller manager did not start: %v", err)
		}
		_ = cfg
		kubeletDone := playKubelet(ctx, b, ts.Client)

		counter.on.Store(true)
		b.StartTimer()
		start := time.Now()
		j := newJob("big", completions, completions)
		j.Spec.BackoffLimit = ptr.To[int32](0)
		if _, err := ts.Client.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		var last batchv1.JobStatus
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
			cur, err := ts.Client.BatchV1().Jobs(ns).Get(ctx, "big", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			last = cur.Status
			return hasCondition(cur, batchv1.JobComplete, ""), nil
		})
		elapsed := time.Since(start)
		b.StopTimer()
		counter.on.Store(false)
		if err != nil {
			b.Fatalf("waiting for the job: %v; status %+v", err, last)
		}
		if last.Succeeded != completions || last.Failed != 0 {
			b.Fatalf("status = %+v", last)
		}
		b.ReportMetric(elapsed.Seconds(), "s-to-complete")
		counter.mu.Lock()
		b.ReportMetric(float64(counter.total)/completions, "requests/pod")
		b.Logf("requests by verb and resource: %v", counter.by)
		// The job never runs more pods than it needs: a deletion means
		// it counted a success twice (and completed with fewer).
		deleted := counter.by["DELETE pods"]
		counter.mu.Unlock()
		if deleted != 0 {
			b.Errorf("the controller deleted %d pods of a job that never had more than it needed", deleted)
		}
		cancel()
		<-kubeletDone
		stop()
		ts.TearDown()
		b.StartTimer()
	}
}

// playKubelet marks every new pod of the namespace Succeeded (its container
// exited 0) as soon as it is seen, with 16 goroutines, until ctx ends.
func playKubelet(ctx context.Context, b *testing.B, client kubernetes.Interface) <-chan struct{} {
	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	todo := make(chan *corev1.Pod, 2048)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range todo {
				p.Status.Phase = corev1.PodSucceeded
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
					Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.Now()}}}}
				if _, err := client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
					b.Errorf("pod %s: %v", p.Name, err)
				}
			}
		}()
	}
	go func() {
		defer close(done)
		defer wg.Wait()
		defer close(todo)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if p, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type == watch.Added && p.Status.Phase == corev1.PodPending {
					todo <- p
				}
			}
		}
	}()
	return done
}
