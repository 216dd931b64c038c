package metricsserver

import (
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// point is one reading of a node or a container.
type point struct {
	// start is the container's start time (zero for a node).
	start time.Time
	// ts is when the kubelet read it.
	ts time.Time
	// cpu is the cumulative CPU time in nanoseconds; memory the working
	// set in bytes.
	cpu    uint64
	memory uint64
}

// batch is one scrape of every node.
type batch struct {
	nodes map[string]point
	pods  map[types.NamespacedName]map[string]point
}

func newBatch() *batch {
	return &batch{nodes: map[string]point{}, pods: map[types.NamespacedName]map[string]point{}}
}

// storage keeps the last two points of each node and container.
type storage struct {
	mu                   sync.RWMutex
	lastNodes, prevNodes map[string]point
	lastPods, prevPods   map[types.NamespacedName]map[string]point
}

func newStorage() *storage {
	return &storage{
		lastNodes: map[string]point{}, prevNodes: map[string]point{},
		lastPods: map[types.NamespacedName]map[string]point{}, prevPods: map[types.NamespacedName]map[string]point{},
	}
}

// store replaces the last points with b's; a stored point older than
// its new one becomes the previous point. What b does not have is
// forgotten.
func (s *storage) store(b *batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prevNodes := map[string]point{}
	for name, p := range b.nodes {
		if prev, ok := previous(p, s.lastNodes[name], s.prevNodes[name]); ok {
			prevNodes[name] = prev
		}
	}
	prevPods := map[types.NamespacedName]map[string]point{}
	for ref, containers := range b.pods {
		prevContainers := map[string]point{}
		for name, p := range containers {
			last, lok := s.lastPods[ref][name]
			prev, pok := s.prevPods[ref][name]
			// A restarted container starts over.
			if lok && !last.start.Equal(p.start) {
				continue
			}
			if !pok || !prev.start.Equal(p.start) {
				prev = point{}
			}
			if pp, ok := previous(p, last, prev); ok {
				prevContainers[name] = pp
			}
		}
		prevPods[ref] = prevContainers
	}
	s.lastNodes, s.prevNodes = b.nodes, prevNodes
	s.lastPods, s.prevPods = b.pods, prevPods
}

// previous is the point to take the rate from when p arrives: the last
// point if p is newer, or (the kubelet answered with the same reading)
// the one before it.
func previous(p, last, prev point) (point, bool) {
	switch {
	case !last.ts.IsZero() && p.ts.After(last.ts):
		return last, true
	case !prev.ts.IsZero() && p.ts.After(prev.ts):
		return prev, true
	}
	return point{}, false
}

// usage is the CPU rate and memory between two points, as
// metrics-server's resourceUsage: nano-cores, and the last working set.
func usage(last, prev point) (corev1.ResourceList, metav1.Time, metav1.Duration, error) {
	if last.cpu < prev.cpu {
		return nil, metav1.Time{}, metav1.Duration{}, fmt.Errorf("unexpected decrease in cumulative CPU usage value")
	}
	window := last.ts.Sub(prev.ts)
	rate := float64(last.cpu-prev.cpu) / window.Seconds()
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewScaledQuantity(int64(rate), -9),
		corev1.ResourceMemory: *resource.NewQuantity(int64(last.memory), resource.BinarySI),
	}, metav1.NewTime(last.ts), metav1.Duration{Duration: window}, nil
}

// nodeMetrics is the node's metrics; false while it has fewer than two
// points.
func (s *storage) nodeMetrics(node *corev1.Node) (*metricsv1beta1.NodeMetrics, bool) {
	s.mu.RLock()
	last, lok := s.lastNodes[node.Name]
	prev, pok := s.prevNodes[node.Name]
	s.mu.RUnlock()
	if !lok || !pok {
		return nil, false
	}
	u, ts, window, err := usage(last, prev)
	if err != nil {
		return nil, false
	}
	return &metricsv1beta1.NodeMetrics{
		TypeMeta:   metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "NodeMetrics"},
		ObjectMeta: metav1.ObjectMeta{Name: node.Name, Labels: node.Labels},
		Timestamp:  ts, Window: window, Usage: u,
	}, true
}

// podMetrics is the pod's metrics; false unless each of its containers
// has two points. The timestamp and window are the earliest container's.
func (s *storage) podMetrics(pod *corev1.Pod) (*metricsv1beta1.PodMetrics, bool) {
	ref := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	s.mu.RLock()
	last, lok := s.lastPods[ref]
	prev, pok := s.prevPods[ref]
	s.mu.RUnlock()
	if !lok || !pok {
		return nil, false
	}
	out := &metricsv1beta1.PodMetrics{
		TypeMeta:   metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "PodMetrics"},
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, Labels: pod.Labels},
		Containers: []metricsv1beta1.ContainerMetrics{},
	}
	for _, name := range sortedKeys(last) {
		p, ok := prev[name]
		if !ok {
			return nil, false
		}
		u, ts, window, err := usage(last[name], p)
		if err != nil {
			continue
		}
		out.Containers = append(out.Containers, metricsv1beta1.ContainerMetrics{Name: name, Usage: u})
		if out.Timestamp.IsZero() || ts.Before(&out.Timestamp) {
			out.Timestamp, out.Window = ts, window
		}
	}
	return out, true
}
