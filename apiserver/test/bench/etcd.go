package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// etcdClientURL asks the server's etcd for its client URL (the embedded
// etcd listens on 127.0.0.1 and advertises that address).
func (b *bench) etcdClientURL(ctx context.Context) (string, error) {
	resp, err := b.ts.Server.EtcdClient().MemberList(ctx)
	if err != nil {
		return "", fmt.Errorf("listing etcd members: %w", err)
	}
	for _, m := range resp.Members {
		if len(m.ClientURLs) > 0 {
			return m.ClientURLs[0], nil
		}
	}
	return "", fmt.Errorf("etcd advertises no client URL")
}

// etcdPhase measures etcd alone: create-if-absent transactions of values
// the size of a stored Pod, with the same concurrency as the create phase,
// against the server's own etcd; keys are outside /registry so that the
// server's watches do not see them.
func (b *bench) etcdPhase(ctx context.Context) error {
	if b.storedPod == nil {
		ns := "bench-etcd-sample"
		if err := b.ensureNamespace(ctx, ns); err != nil {
			return err
		}
		if _, err := b.ts.Client.CoreV1().Pods(ns).Create(ctx, benchPod("pod-000000", 0), metav1.CreateOptions{}); err != nil {
			return err
		}
		if err := b.loadStoredPod(ctx, ns, "pod-000000"); err != nil {
			return err
		}
	}
	u, err := b.etcdClientURL(ctx)
	if err != nil {
		return err
	}
	grpcClient, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{u},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
		Context:     ctx,
	})
	if err != nil {
		return fmt.Errorf("connecting to etcd at %s: %w", u, err)
	}
	defer grpcClient.Close()
	if _, err := grpcClient.Get(ctx, "/bench-etcd/warm-up"); err != nil {
		return fmt.Errorf("etcd at %s: %w", u, err)
	}

	kinds := []struct {
		name, setting string
		c             *clientv3.Client
	}{
		{"gRPC", "gRPC client on its loopback client URL", grpcClient},
		{"in-process", "in-process client (the server's own path)", b.ts.Server.EtcdClient()},
	}
	if b.o.etcdBinary != "" {
		// etcd is its own process: the server's path is a gRPC client too.
		kinds = kinds[:1]
		kinds[0].setting = "gRPC client to " + b.o.etcdBinary + " running as its own process"
	}
	for _, k := range kinds {
		progress("etcd baseline: %d txn puts of %d bytes, %d goroutines, %s client (%s)", b.o.etcdWrites, len(b.storedPod), b.o.clients, k.name, u)
		r, err := etcdWrites(ctx, k.c, "/bench-etcd/"+k.name+"/pods/bench-create-protobuf/pod-", b.storedPod, b.o.clients, b.o.etcdWrites, b.o.duration)
		if err != nil {
			return err
		}
		s := summarize(r.latencies)
		b.etcdRate[k.name] = r.rate()
		b.add(row{
			benchmark: "etcd alone, txn create-if-absent, " + k.name,
			setting:   fmt.Sprintf("%d goroutines, %d values of %d B, %s", b.o.clients, r.n, len(b.storedPod), k.setting),
			result:    fmt.Sprintf("**%.0f writes/s**, p50 %s, p99 %s", r.rate(), ms(s.p50), ms(s.p99)),
		})
	}
	if base := b.etcdRate["gRPC"]; base > 0 {
		for _, ct := range contentTypes {
			api, ok := b.createRate[ct.mediaType]
			if !ok {
				continue
			}
			ratio := api / base
			b.add(row{
				benchmark: "API creates / etcd writes, " + ct.name,
				setting:   fmt.Sprintf("%.0f creates/s ÷ %.0f writes/s (gRPC)", api, base),
				result:    fmt.Sprintf("**%.0f%%**", 100*ratio),
				target:    "≥ 80%",
				met:       metStr(ratio >= 0.8),
			})
		}
	}
	return nil
}

// etcdWrites runs count transactions "create key if absent" with the given
// concurrency, the write a Pod create makes.
func etcdWrites(ctx context.Context, c *clientv3.Client, prefix string, value []byte, concurrency, count int, duration time.Duration) (createResult, error) {
	var next atomic.Int64
	var deadline time.Time
	lat := make([][]time.Duration, concurrency)
	errs := make([]error, concurrency)
	val := string(value)
	start := time.Now()
	if duration > 0 {
		deadline = start.Add(duration)
	}
	var wg sync.WaitGroup
	for g := range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= count || (!deadline.IsZero() && time.Now().After(deadline)) {
					return
				}
				key := fmt.Sprintf("%s%06d", prefix, i)
				t0 := time.Now()
				resp, err := c.Txn(ctx).
					If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
					Then(clientv3.OpPut(key, val)).
					Commit()
				if err != nil {
					errs[g] = fmt.Errorf("txn put %s: %w", key, err)
					return
				}
				if !resp.Succeeded {
					errs[g] = fmt.Errorf("txn put %s: key exists", key)
					return
				}
				lat[g] = append(lat[g], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	return collect(start, lat, errs)
}
