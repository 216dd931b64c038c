package framework

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Nominator remembers the pending pods nominated to a node
// (status.nominatedNodeName, set by preemption), so that filtering counts
// them as if they ran there, as upstream does. Safe for concurrent use.
type Nominator struct {
	mu     sync.RWMutex
	byNode map[string][]*PodInfo
	byUID  map[types.UID]string
}

// NewNominator returns an empty nominator.
func NewNominator() *Nominator {
	return &Nominator{byNode: map[string][]*PodInfo{}, byUID: map[types.UID]string{}}
}

// Set records the pod's nomination to node, or forgets it when node is
// empty.
func (n *Nominator) Set(pod *corev1.Pod, node string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pod.UID)
	if node == "" {
		return
	}
	n.byUID[pod.UID] = node
	n.byNode[node] = append(n.byNode[node], NewPodInfo(pod))
}

// Delete forgets the pod's nomination.
func (n *Nominator) Delete(uid types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(uid)
}

func (n *Nominator) deleteLocked(uid types.UID) {
	node, ok := n.byUID[uid]
	if !ok {
		return
	}
	delete(n.byUID, uid)
	n.byNode[node] = removeFrom(n.byNode[node], uid)
	if len(n.byNode[node]) == 0 {
		delete(n.byNode, node)
	}
}

// NominatedPodsForNode returns the pods nominated to node; the caller
// must not modify the slice (the nominator never changes the elements a
// returned slice holds: removal copies).
func (n *Nominator) NominatedPodsForNode(node string) []*PodInfo {
	if n == nil {
		return nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.byNode[node]
}

// WithNominator makes the framework count nominated pods when filtering.
func WithNominator(n *Nominator) Option { return func(f *Framework) { f.nominator = n } }

// RunFilterPluginsWithNominatedPods runs the filters as upstream does when
// pods of the same or higher priority are nominated to the node: first
// with those pods added to (a copy of) the node, then, if that passes,
// without them, so the pod fits both when they arrive and when they do
// not.
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *corev1.Pod, ni *NodeInfo) *Status {
	var nominated []*PodInfo
	for _, pi := range f.nominator.NominatedPodsForNode(ni.Node().Name) {
		if pi.Pod.UID != pod.UID && podPriority(pi.Pod) >= podPriority(pod) {
			nominated = append(nominated, pi)
		}
	}
	if len(nominated) > 0 {
		withNominated, stateCopy := ni.Clone(), state.Clone()
		for _, pi := range nominated {
			withNominated.AddPodInfo(pi)
			if st := f.RunPreFilterExtensionAddPod(ctx, stateCopy, pod, pi, withNominated); !st.IsSuccess() {
				return st
			}
		}
		if st := f.RunFilterPlugins(ctx, stateCopy, pod, withNominated); !st.IsSuccess() {
			return st
		}
	}
	return f.RunFilterPlugins(ctx, state, pod, ni)
}

// Nominator returns the framework's nominator (nil when none).
func (f *Framework) Nominator() *Nominator { return f.nominator }

func podPriority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}
