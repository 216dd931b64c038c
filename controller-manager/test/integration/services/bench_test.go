package services

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/pkg/controller/endpointslice"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

// BenchmarkEndpointsFor1000Services measures, against a real API server,
// how long the controller manager takes from its start to the moment
// every one of 1,000 Services of 10 ready pods each has its EndpointSlice
// and its Endpoints with all 10 addresses (reported as s-to-slices and
// s-to-endpoints). The Services and pods exist before it starts, so the
// time includes the informers' first LIST. Set-up (10,000 pods and their
// status) is not timed. Run it once:
//
//	go test -run '^$' -bench EndpointsFor1000Services -benchtime 1x -timeout 30m ./test/integration/services/
func BenchmarkEndpointsFor1000Services(b *testing.B) {
	const services, podsPerService = 1000, 10
	for b.Loop() {
		b.StopTimer()
		ts := testserver.Start(b, nil)
		ctx := context.Background()
		c := ts.Client
		if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		parallel(b, services, func(s int) error {
			name := fmt.Sprintf("svc-%04d", s)
			_, err := c.CoreV1().Services(ns).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
					Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}}},
			}, metav1.CreateOptions{})
			return err
		})
		parallel(b, services*podsPerService, func(i int) error {
			return createReadyPod(ctx, c, fmt.Sprintf("svc-%04d-%d", i/podsPerService, i%podsPerService),
				fmt.Sprintf("svc-%04d", i/podsPerService), fmt.Sprintf("10.%d.%d.%d", 1+i/62500, i/250%250, i%250+1))
		})

		b.StartTimer()
		start := time.Now()
		_, stop := cmtest.Start(b, ts, func(o *cmapp.Options) { o.Controllers = []string{"endpoint", "endpointslice"} })
		var slicesAt, endpointsAt time.Duration
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
			if slicesAt == 0 {
				l, err := c.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelManagedBy + "=" + endpointslice.ManagedBy})
				if err != nil {
					return false, err
				}
				if complete := countFull(l.Items, podsPerService); complete == services {
					slicesAt = time.Since(start)
				}
			}
			if endpointsAt == 0 {
				l, err := c.CoreV1().Endpoints(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					return false, err
				}
				full := 0
				for _, ep := range l.Items {
					if len(ep.Subsets) == 1 && len(ep.Subsets[0].Addresses) == podsPerService {
						full++
					}
				}
				if full == services {
					endpointsAt = time.Since(start)
				}
			}
			return slicesAt != 0 && endpointsAt != 0, nil
		})
		b.StopTimer()
		if err != nil {
			b.Fatalf("waiting for the endpoints of %d Services: %v", services, err)
		}
		b.ReportMetric(slicesAt.Seconds(), "s-to-slices")
		b.ReportMetric(endpointsAt.Seconds(), "s-to-endpoints")
		stop()
		ts.TearDown()
		b.StartTimer()
	}
}

// countFull counts the slices with want ready endpoints.
func countFull(items []discoveryv1.EndpointSlice, want int) int {
	n := 0
	for _, s := range items {
		ready := 0
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				ready++
			}
		}
		if ready == want {
			n++
		}
	}
	return n
}

func createReadyPod(ctx context.Context, c kubernetes.Interface, name, app, ip string) error {
	p, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	p.Status.Phase, p.Status.PodIP, p.Status.PodIPs = corev1.PodRunning, ip, []corev1.PodIP{{IP: ip}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	_, err = c.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

// parallel runs fn(0..n-1) on 16 goroutines and fails b on the first
// error.
func parallel(b *testing.B, n int, fn func(i int) error) {
	b.Helper()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	next := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
}
