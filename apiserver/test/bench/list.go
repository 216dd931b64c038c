package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

const listTarget = 300 * time.Millisecond

// listPhase fills a namespace with Pods and times client-go LISTs of it:
// consistent (resourceVersion unset, read at etcd's current revision) and
// resourceVersion=0 (any recent state), each in protobuf and JSON. The time
// is the whole call: request, server, transfer and client-side decoding.
func (b *bench) listPhase(ctx context.Context) error {
	const ns = "bench-list"
	setup, err := b.namespaceClients(ctx, ns, contentProtobuf)
	if err != nil {
		return err
	}
	progress("creating %d pods in %s for the list phase", b.o.listPods, ns)
	if _, err := createPods(ctx, setup, ns, "pod", b.o.listPods, 0); err != nil {
		return err
	}

	variants := []struct{ name, rv string }{
		{"consistent (resourceVersion unset)", ""},
		{"resourceVersion=0", "0"},
	}
	for _, v := range variants {
		for _, ct := range contentTypes {
			c, err := b.newClient(ct.mediaType)
			if err != nil {
				return err
			}
			pods := c.CoreV1().Pods(ns)
			var times, raw, decode, cpus []time.Duration
			for i := -1; i < b.o.listRuns; i++ { // run -1 is the warm-up
				t0, cpu0 := time.Now(), sampleCPU().self
				l, err := pods.List(ctx, metav1.ListOptions{ResourceVersion: v.rv})
				d, cpu := time.Since(t0), sampleCPU().self-cpu0
				if err != nil {
					return fmt.Errorf("listing %s (%s, %s): %w", ns, v.name, ct.name, err)
				}
				if len(l.Items) != b.o.listPods {
					return fmt.Errorf("listing %s (%s, %s): %d pods, want %d", ns, v.name, ct.name, len(l.Items), b.o.listPods)
				}
				// The same request, its body read but not decoded: the
				// server's part and the transfer, without client-go's decoding.
				req := c.CoreV1().RESTClient().Get().Namespace(ns).Resource("pods")
				if v.rv != "" {
					req = req.Param("resourceVersion", v.rv)
				}
				t1 := time.Now()
				body, err := req.DoRaw(ctx)
				if err != nil {
					return fmt.Errorf("listing %s raw (%s, %s): %w", ns, v.name, ct.name, err)
				}
				dr := time.Since(t1)
				// client-go's decoding of that body alone: what any server
				// sending these bytes leaves to the client.
				t2 := time.Now()
				obj, err := runtime.Decode(scheme.Codecs.UniversalDeserializer(), body)
				dd := time.Since(t2)
				if err != nil {
					return fmt.Errorf("decoding the list body (%s, %s): %w", v.name, ct.name, err)
				}
				if l, ok := obj.(*corev1.PodList); !ok || len(l.Items) != b.o.listPods {
					return fmt.Errorf("decoding the list body (%s, %s): %T", v.name, ct.name, obj)
				}
				if i >= 0 {
					times = append(times, d)
					raw = append(raw, dr)
					decode = append(decode, dd)
					cpus = append(cpus, cpu)
				}
			}
			fastest, median := minMedian(times)
			_, rawMedian := minMedian(raw)
			_, decodeMedian := minMedian(decode)
			_, cpuMedian := minMedian(cpus)
			b.add(row{
				benchmark: fmt.Sprintf("LIST %d pods, %s, %s", b.o.listPods, v.name, ct.name),
				setting:   fmt.Sprintf("%d runs after a warm-up", len(times)),
				result: fmt.Sprintf("min %s, **median %s** (without client decoding: median %s; client-go decoding that body alone: median %s); CPU median %s per LIST",
					ms(fastest), ms(median), ms(rawMedian), ms(decodeMedian), ms(cpuMedian)),
				target: "median < " + ms(listTarget),
				met:    metStr(median < listTarget),
			})
		}
	}
	return nil
}

func minMedian(d []time.Duration) (time.Duration, time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	median := s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[0], median
}
