package endpointslice

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// BenchmarkSync1000Services times the syncs that write the slices of 1,000
// Services of 10 ready pods each (one slice per Service) through a fake
// clientset: the controller's own work, without an API server's. The
// Services are all in one namespace, or each in its own (the pod lookup
// goes through PodLabelIndex either way).
//
//	go test -run '^$' -bench Sync1000Services ./pkg/controller/endpointslice/
func BenchmarkSync1000Services(b *testing.B) {
	for _, perNamespace := range []bool{false, true} {
		name := "one-namespace"
		if perNamespace {
			name = "namespace-per-service"
		}
		b.Run(name, func(b *testing.B) { benchmarkSync(b, 1000, 10, perNamespace) })
	}
}

func benchmarkSync(b *testing.B, services, podsPerService int, perNamespace bool) {
	ns := func(s int) string {
		if perNamespace {
			return fmt.Sprintf("ns-%04d", s)
		}
		return "default"
	}
	for b.Loop() {
		b.StopTimer()
		objs := []runtime.Object{newNode("node-1", "zone-a")}
		for s := range services {
			name := fmt.Sprintf("svc-%04d", s)
			objs = append(objs, newService(name, func(svc *corev1.Service) { svc.Namespace = ns(s) }))
			for p := range podsPerService {
				objs = append(objs, newPod(fmt.Sprintf("%s-%d", name, p), name, fmt.Sprintf("10.%d.%d.%d", 1+s/250, s%250, p+1),
					func(pod *corev1.Pod) { pod.Namespace = ns(s) }))
			}
		}
		f := newFixture(b, Options{}, objs...)
		ctx := context.Background()
		b.StartTimer()
		for s := range services {
			if err := f.c.sync(ctx, fmt.Sprintf("%s/svc-%04d", ns(s), s)); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if n := len(f.client.Actions()); n != services {
			b.Fatalf("writes = %d, want %d creates", n, services)
		}
		b.StartTimer()
	}
}
