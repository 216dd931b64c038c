package daemonsets

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/pkg/controller/daemonset"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

// BenchmarkDaemonSet1000Nodes measures, against a real API server, a
// DaemonSet over 1,000 Node objects (no kubelets): from its creation to
// the moment all 1,000 pods exist (s-to-pods) and to the moment its status
// shows 1,000 pods scheduled, ready and available at its generation
// (s-to-ready), with the benchmark playing the scheduler (a binding per
// pod, to the node its metadata.name affinity names) and the kubelet (one
// status write per pod). It reports the controller manager's API requests
// per pod (cm-requests/pod: every request its client sent between the
// DaemonSet's creation and done, with only the daemonset controller
// running, events included). Nodes are created, and the controller
// manager started and leading, before the timer. Run it once:
//
//	go test -run '^$' -bench DaemonSet1000Nodes -benchtime 1x -timeout 30m ./test/integration/daemonsets/
func BenchmarkDaemonSet1000Nodes(b *testing.B) {
	const nodes = 1000
	for b.Loop() {
		b.StopTimer()
		ts := testserver.Start(b, nil)
		ctx, cancel := context.WithCancel(context.Background())
		c := ts.Client
		parallel(b, nodes, func(i int) error {
			_, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i),
				Labels: map[string]string{corev1.LabelHostname: fmt.Sprintf("node-%04d", i)}}}, metav1.CreateOptions{})
			return err
		})
		counter := &requestCounter{byKind: map[string]int{}}
		cm := startCounted(b, ts, counter)
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return cm.Leading(), nil
		}); err != nil {
			b.Fatal("the controller manager did not lead")
		}
		stopKubelet := playSchedulerAndKubelet(ctx, b, c)

		counter.reset()
		b.StartTimer()
		start := time.Now()
		ds := newDS("bench", nil)
		if _, err := c.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		var podsAt, readyAt time.Duration
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
			if podsAt == 0 {
				l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=bench", ResourceVersion: "0"})
				if err != nil {
					return false, err
				}
				if len(l.Items) >= nodes {
					podsAt = time.Since(start)
				}
			}
			cur, err := c.AppsV1().DaemonSets(ns).Get(ctx, "bench", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			st := cur.Status
			if st.ObservedGeneration == cur.Generation && st.DesiredNumberScheduled == nodes && st.CurrentNumberScheduled == nodes &&
				st.NumberReady == nodes && st.NumberAvailable == nodes && st.UpdatedNumberScheduled == nodes {
				readyAt = time.Since(start)
			}
			return podsAt != 0 && readyAt != 0, nil
		})
		b.StopTimer()
		total, byKind := counter.snapshot()
		if err != nil {
			b.Fatalf("waiting for the DaemonSet on %d nodes: %v", nodes, err)
		}
		b.ReportMetric(podsAt.Seconds(), "s-to-pods")
		b.ReportMetric(readyAt.Seconds(), "s-to-ready")
		b.ReportMetric(float64(total)/nodes, "cm-requests/pod")
		var kinds []string
		for k, n := range byKind {
			kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
		}
		sort.Strings(kinds)
		b.Logf("controller manager requests: %d, by kind: %v", total, kinds)
		stopKubelet()
		cancel()
		b.StartTimer()
	}
}

// requestCounter counts the requests of a client by verb and path kind.
type requestCounter struct {
	mu     sync.Mutex
	total  int
	byKind map[string]int
}

func (rc *requestCounter) reset() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.total, rc.byKind = 0, map[string]int{}
}

func (rc *requestCounter) snapshot() (int, map[string]int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.byKind))
	for k, v := range rc.byKind {
		out[k] = v
	}
	return rc.total, out
}

func (rc *requestCounter) RoundTrip(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	kind := req.Method + " " + resourceOf(req.URL.Path)
	rc.mu.Lock()
	rc.total++
	rc.byKind[kind]++
	rc.mu.Unlock()
	return rt.RoundTrip(req)
}

// resourceOf is the resource (and subresource) a path names:
// .../namespaces/<ns>/<resource>[/<name>[/<subresource>]], or its last
// segment.
func resourceOf(path string) string {
	segs := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	for i := 0; i+2 < len(segs); i++ {
		if segs[i] == "namespaces" {
			res := segs[i+2]
			if i+4 < len(segs) {
				res += "/" + segs[i+4]
			}
			return res
		}
	}
	if len(segs) > 0 {
		return segs[len(segs)-1]
	}
	return path
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// startCounted starts the controller manager with only the daemonset
// controller, its client's requests counted by rc.
func startCounted(b *testing.B, ts *testserver.TestServer, rc *requestCounter) *cmapp.Config {
	b.Helper()
	cfg, _ := cmtest.StartWrapped(b, ts, func(o *cmapp.Options) { o.Controllers = []string{"daemonset"} },
		func(rt http.RoundTripper) http.RoundTripper {
			return roundTripperFunc(func(r *http.Request) (*http.Response, error) { return rc.RoundTrip(rt, r) })
		})
	return cfg
}

// playSchedulerAndKubelet binds every new daemon pod to its node and then
// marks it Running and Ready, with 32 workers, until stopped.
func playSchedulerAndKubelet(ctx context.Context, b *testing.B, c kubernetes.Interface) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns))
	pods := make(chan *corev1.Pod, 2000)
	_, _ = factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { pods <- obj.(*corev1.Pod) },
	})
	factory.Start(ctx.Done())
	var failures atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case p := <-pods:
					if err := bindAndStart(ctx, c, p); err != nil && ctx.Err() == nil {
						failures.Add(1)
						b.Logf("kubelet: %v", err)
					}
				}
			}
		}()
	}
	return func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
		if n := failures.Load(); n > 0 {
			b.Errorf("%d pods the benchmark's kubelet could not start", n)
		}
	}
}

func bindAndStart(ctx context.Context, c kubernetes.Interface, p *corev1.Pod) error {
	node, err := daemonset.TargetNodeName(p)
	if err != nil {
		return err
	}
	if err := c.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
		Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("binding %s: %w", p.Name, err)
	}
	running := p.DeepCopy()
	running.ResourceVersion = ""
	running.Spec.NodeName = node
	running.Status.Phase = corev1.PodRunning
	running.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if _, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, running, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("status of %s: %w", p.Name, err)
	}
	return nil
}

// parallel runs fn(0..n-1) on 32 goroutines and fails on the first error.
func parallel(b *testing.B, n int, fn func(i int) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}
