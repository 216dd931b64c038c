package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry"
)

// chainFloorPhase measures what the pod the chain stores costs an API
// server that does only what the API requires of every create (issue 3's
// floor): two floor servers (see floorPhase) on the bench server's etcd
// that decode the bench's pod, default it, give it the creator's
// managedFields entry as skiff records it (copied from a pod skiff created,
// so it costs nothing, where a real server runs its field manager),
// validate it, store it, answer with it, and decode every stored pod from
// an etcd watch into a map, as a watch cache must. The "admitted" one adds
// what the chain adds (admitPod) before validating, at no cost. Their
// clients take the creates in turns, as in the chain phase. The admitted
// server's shortfall is what the chain's pod costs with no chain code at
// all: a server with the chain cannot be less slower than that against one
// without it.
func (b *bench) chainFloorPhase(ctx context.Context) error {
	const ns = "bench-chainfloor"
	if err := b.ensureNamespace(ctx, ns); err != nil {
		return err
	}
	// The managedFields entry skiff records for these clients' creates.
	tmpl, err := b.newClientTo(b.ts.AdminConfig.Host, contentProtobuf)
	if err != nil {
		return err
	}
	made, err := tmpl.CoreV1().Pods(ns).Create(ctx, benchPod("managed-fields-template", 0), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	managed := made.ManagedFields
	if len(managed) != 1 {
		return fmt.Errorf("the template pod has %d managedFields entries, want 1", len(managed))
	}
	// What each floor server does to a decoded pod; admit adds what the
	// chain adds, before validation as in skiff.
	prepare := func(admit bool) func(*corev1.Pod) error {
		return func(p *corev1.Pod) error {
			registry.Default(p)
			p.ManagedFields = managed
			if admit {
				admitPod(p)
			}
			if errs := validation.ValidatePod(p); len(errs) > 0 {
				return errs.ToAggregate()
			}
			return nil
		}
	}
	arms := []struct {
		name    string
		prepare func(*corev1.Pod) error
	}{
		{"stores the bench's pod", prepare(false)},
		{"stores the pod the chain stores", prepare(true)},
	}
	// round runs one round on fresh floor servers, stopped at its end.
	round := func(round int) ([]float64, error) {
		creators := make([]func(string, int) (createResult, error), len(arms))
		for i, a := range arms {
			url, stop, err := b.startFloorServer(ctx, &floorServer{prefix: fmt.Sprintf("/bench-chainfloor/r%d/%d/", round, i), prepare: a.prepare, watch: true})
			if err != nil {
				return nil, err
			}
			defer stop()
			clients := make([]*kubernetes.Clientset, b.o.clients)
			for j := range clients {
				if clients[j], err = b.newClientTo(url, contentProtobuf); err != nil {
					return nil, err
				}
			}
			creators[i] = func(prefix string, count int) (createResult, error) {
				return createPods(ctx, clients, ns, prefix, count, 0)
			}
			// One untimed slice: connections, and the first writes.
			if _, err := creators[i]("warm-up", b.o.chainSlice); err != nil {
				return nil, fmt.Errorf("floor server that %s: %w", a.name, err)
			}
		}
		progress("chain floor: %d pods on each of %d floor servers in slices of %d, in turns", b.o.creates, len(arms), b.o.chainSlice)
		return inTurns(b.o.creates, b.o.chainSlice, creators)
	}
	var costs []float64
	for r := 1; r <= b.o.chainRounds; r++ {
		rates, err := round(r)
		if err != nil {
			return err
		}
		for i, a := range arms {
			b.add(row{
				benchmark: fmt.Sprintf("Pod create, floor server that %s (round %d)", a.name, r),
				setting:   fmt.Sprintf("protobuf; %d clients, %d pods in slices of %d, in turns", b.o.clients, b.o.creates, b.o.chainSlice),
				result:    fmt.Sprintf("**%.0f creates/s**", rates[i]),
			})
		}
		costs = append(costs, 100*(1-rates[1]/rates[0]))
	}
	b.add(row{
		benchmark: "Floor of the chain's cost: the chain's pod on a floor server, median",
		setting:   fmt.Sprintf("%d rounds, %s", len(costs), spread(costs)),
		result:    fmt.Sprintf("**%.1f%% slower**", medianOf(costs)),
	})
	return nil
}
