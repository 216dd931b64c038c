package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	contentProtobuf = "application/vnd.kubernetes.protobuf"
	contentJSON     = "application/json"
)

// contentTypes are the wire formats measured, in the order reported.
var contentTypes = []struct{ name, slug, mediaType string }{
	{"protobuf", "protobuf", contentProtobuf},
	{"JSON", "json", contentJSON},
}

// noProxy never proxies. Setting it also makes client-go build a transport
// of its own instead of sharing a cached one, so each clientset is one
// client with its own HTTP/2 connection, as separate processes would be.
func noProxy(*http.Request) (*url.URL, error) { return nil, nil }

// newClient returns a clientset with its own connection that speaks
// mediaType (requests and, preferably, responses).
func (b *bench) newClient(mediaType string) (*kubernetes.Clientset, error) {
	return b.newClientTo(b.ts.AdminConfig.Host, mediaType)
}

// newClientTo is newClient for the server at host, which trusts the same
// CA and serves the same certificate as skiff (the floor phase's).
func (b *bench) newClientTo(host, mediaType string) (*kubernetes.Clientset, error) {
	cfg := rest.CopyConfig(b.ts.AdminConfig)
	cfg.Host = host
	cfg.ContentType = mediaType
	cfg.AcceptContentTypes = mediaType
	if mediaType == contentProtobuf {
		cfg.AcceptContentTypes = contentProtobuf + ", " + contentJSON
	}
	cfg.Proxy = noProxy
	cfg.QPS, cfg.Burst = -1, -1
	cfg.Timeout = 0
	return kubernetes.NewForConfig(cfg)
}

// newClients returns n clientsets, each connected (TLS and HTTP/2 set up
// by one request) so that no measured request pays for a handshake.
func (b *bench) newClients(ctx context.Context, n int, mediaType string) ([]*kubernetes.Clientset, error) {
	cs := make([]*kubernetes.Clientset, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range cs {
		c, err := b.newClient(mediaType)
		if err != nil {
			return nil, err
		}
		cs[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("connecting a client: %w", err)
		}
	}
	return cs, nil
}

func (b *bench) ensureNamespace(ctx context.Context, name string) error {
	_, err := b.ts.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// namespaceClients makes sure namespace ns exists and returns -clients
// connected clients that speak mediaType.
func (b *bench) namespaceClients(ctx context.Context, ns, mediaType string) ([]*kubernetes.Clientset, error) {
	if err := b.ensureNamespace(ctx, ns); err != nil {
		return nil, err
	}
	return b.newClients(ctx, b.o.clients, mediaType)
}

// benchPod is a realistic small Pod: one container with a port, resource
// requests and a few labels, as a ReplicaSet would create it.
func benchPod(name string, i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"app":               "bench",
				"tier":              "web",
				"pod-template-hash": "7d9c8b5f4",
				"index":             fmt.Sprint(i % 100),
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:    "web",
				Image:   "127.0.0.1:5000/busybox:1.36",
				Command: []string{"httpd", "-f", "-p", "8080"},
				Ports:   []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("100m"),
					corev1.ResourceMemory: resource.MustParse("64Mi"),
				}},
			}},
		},
	}
}

// createResult is what one concurrent create run measured.
type createResult struct {
	n         int
	elapsed   time.Duration
	latencies []time.Duration
}

func (r createResult) rate() float64 { return float64(r.n) / r.elapsed.Seconds() }

// createPods creates up to count Pods named prefix-NNNNNN in ns with one
// goroutine per client, stopping early after duration if it is > 0.
func createPods(ctx context.Context, clients []*kubernetes.Clientset, ns, prefix string, count int, duration time.Duration) (createResult, error) {
	return createPodsOf(ctx, clients, ns, prefix, count, duration, benchPod)
}

// createPodsOf is createPods with the pods build makes.
func createPodsOf(ctx context.Context, clients []*kubernetes.Clientset, ns, prefix string, count int, duration time.Duration, build func(name string, i int) *corev1.Pod) (createResult, error) {
	var next atomic.Int64
	var deadline time.Time
	lat := make([][]time.Duration, len(clients))
	errs := make([]error, len(clients))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	if duration > 0 {
		deadline = start.Add(duration)
	}
	var wg sync.WaitGroup
	for ci, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pods := c.CoreV1().Pods(ns)
			for {
				i := int(next.Add(1)) - 1
				if i >= count || (!deadline.IsZero() && time.Now().After(deadline)) {
					return
				}
				p := build(fmt.Sprintf("%s-%06d", prefix, i), i)
				t0 := time.Now()
				if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
					if ctx.Err() == nil {
						errs[ci] = fmt.Errorf("creating pod %s/%s: %w", ns, p.Name, err)
						cancel()
					}
					return
				}
				lat[ci] = append(lat[ci], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	return collect(start, lat, errs)
}

// collect is what concurrent workers measured since start: each one's
// latencies (lat[i]), or the first worker's error (errs[i]).
func collect(start time.Time, lat [][]time.Duration, errs []error) (createResult, error) {
	r := createResult{elapsed: time.Since(start)}
	for i := range lat {
		if errs[i] != nil {
			return r, errs[i]
		}
		r.latencies = append(r.latencies, lat[i]...)
	}
	r.n = len(r.latencies)
	return r, nil
}

// createPhase measures concurrent Pod creates, protobuf then JSON.
func (b *bench) createPhase(ctx context.Context) error {
	for _, ct := range contentTypes {
		ns := "bench-create-" + ct.slug
		clients, err := b.namespaceClients(ctx, ns, ct.mediaType)
		if err != nil {
			return err
		}
		progress("creating %d pods in %s with %d %s clients", b.o.creates, ns, b.o.clients, ct.name)
		cpu0 := sampleCPU().self
		r, err := createPods(ctx, clients, ns, "pod", b.o.creates, b.o.duration)
		if err != nil {
			return err
		}
		cpu := sampleCPU().self - cpu0
		s := summarize(r.latencies)
		b.createRate[ct.mediaType] = r.rate()
		b.add(row{
			benchmark: "Pod create, client-go " + ct.name,
			setting:   fmt.Sprintf("%d clients, %d pods", b.o.clients, r.n),
			result: fmt.Sprintf("**%.0f creates/s**, p50 %s, p99 %s; CPU %.0f µs per create", r.rate(), ms(s.p50), ms(s.p99),
				micros(cpu)/float64(r.n)),
		})
		if b.storedPod == nil {
			if err := b.loadStoredPod(ctx, ns, "pod-000000"); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadStoredPod keeps the raw etcd value of one Pod, the size the etcd
// baseline writes.
func (b *bench) loadStoredPod(ctx context.Context, ns, name string) error {
	key := "/registry/pods/" + ns + "/" + name
	resp, err := b.ts.Server.EtcdClient().Get(ctx, key)
	if err != nil {
		return fmt.Errorf("reading %s from etcd: %w", key, err)
	}
	if len(resp.Kvs) != 1 {
		return fmt.Errorf("%s is not in etcd", key)
	}
	b.storedPod = resp.Kvs[0].Value
	progress("a stored pod (%s) is %d bytes", key, len(b.storedPod))
	return nil
}
