package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// updatePhase measures concurrent Pod status updates, the write a cluster
// makes most (every kubelet reports its pods' status): -clients clients,
// each owning its share of -update-pods pods, send -updates status updates
// in all, protobuf then JSON. Each update sends the object the previous one
// answered with a changed status, as a kubelet does, so none conflicts.
func (b *bench) updatePhase(ctx context.Context) error {
	for _, ct := range contentTypes {
		ns := "bench-update-" + ct.slug
		clients, err := b.namespaceClients(ctx, ns, ct.mediaType)
		if err != nil {
			return err
		}
		progress("creating %d pods in %s for the update phase", b.o.updatePods, ns)
		if _, err := createPods(ctx, clients, ns, "pod", b.o.updatePods, 0); err != nil {
			return err
		}
		progress("updating the status of those pods %d times with %d %s clients", b.o.updates, b.o.clients, ct.name)
		r, err := updatePodStatuses(ctx, clients, ns, "pod", b.o.updatePods, b.o.updates)
		if err != nil {
			return err
		}
		s := summarize(r.latencies)
		b.add(row{
			benchmark: "Pod status update, client-go " + ct.name,
			setting:   fmt.Sprintf("%d clients, %d updates of %d pods", b.o.clients, r.n, b.o.updatePods),
			result:    fmt.Sprintf("**%.0f updates/s**, p50 %s, p99 %s", r.rate(), ms(s.p50), ms(s.p99)),
		})
	}
	return nil
}

// updatePodStatuses lists the pods prefix-000000 to prefix-<pods-1> in ns,
// then has each client update the status of its own share of them (pod i
// belongs to client i mod len(clients)), round after round, until count
// updates are done.
func updatePodStatuses(ctx context.Context, clients []*kubernetes.Clientset, ns, prefix string, pods, count int) (createResult, error) {
	list, err := clients[0].CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return createResult{}, fmt.Errorf("listing the pods of %s: %w", ns, err)
	}
	byName := make(map[string]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	owned := make([][]*corev1.Pod, len(clients))
	for i := 0; i < pods; i++ {
		name := fmt.Sprintf("%s-%06d", prefix, i)
		p, ok := byName[name]
		if !ok {
			return createResult{}, fmt.Errorf("pod %s/%s is not listed", ns, name)
		}
		owned[i%len(clients)] = append(owned[i%len(clients)], p)
	}
	lat := make([][]time.Duration, len(clients))
	errs := make([]error, len(clients))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for ci, c := range clients {
		// Client ci sends the updates ci, ci+len(clients), ... of count.
		n := count / len(clients)
		if ci < count%len(clients) {
			n++
		}
		if n == 0 || len(owned[ci]) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			api := c.CoreV1().Pods(ns)
			for k := 0; k < n; k++ {
				j := k % len(owned[ci])
				p := owned[ci][j]
				setRunning(p, k/len(owned[ci]))
				t0 := time.Now()
				out, err := api.UpdateStatus(ctx, p, metav1.UpdateOptions{})
				if err != nil {
					if ctx.Err() == nil {
						errs[ci] = fmt.Errorf("updating the status of pod %s/%s: %w", ns, p.Name, err)
						cancel()
					}
					return
				}
				lat[ci] = append(lat[ci], time.Since(t0))
				owned[ci][j] = out
			}
		}()
	}
	wg.Wait()
	r, err := collect(start, lat, errs)
	if err != nil {
		return r, err
	}
	if r.n != count {
		return r, fmt.Errorf("%d status updates done, want %d", r.n, count)
	}
	return r, nil
}

// setRunning gives p the status a kubelet reports for a running pod whose
// container has restarted restarts times: every update changes it.
func setRunning(p *corev1.Pod, restarts int) {
	started := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, restarts, 0, time.UTC))
	p.Status.Phase = corev1.PodRunning
	p.Status.HostIP = "192.0.2.10"
	p.Status.PodIP = "10.244.0.10"
	p.Status.PodIPs = []corev1.PodIP{{IP: "10.244.0.10"}}
	p.Status.StartTime = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: p.Status.StartTime.Rfc3339Copy()},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: p.Status.StartTime.Rfc3339Copy()},
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name:         "web",
		Image:        "127.0.0.1:5000/busybox:1.36",
		ImageID:      "127.0.0.1:5000/busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000",
		ContainerID:  fmt.Sprintf("containerd://%064d", restarts),
		Ready:        true,
		RestartCount: int32(restarts),
		State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
	}}
	p.Status.QOSClass = corev1.PodQOSBurstable
}
