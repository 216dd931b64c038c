package cache

import (
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/scheduler/pkg/framework"
)

type podState struct {
	pod *corev1.Pod
	// bindingFinished is set once the binding call returned success.
	bindingFinished bool
}

// Cache is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	nodes   map[string]*framework.NodeInfo
	pods    map[types.UID]*podState
	assumed map[types.UID]bool

	// The last snapshot's copies, by node name, and its names in order;
	// dirty names the nodes changed since, which the next Snapshot copies
	// again (the others' copies are reused: snapshots are read-only).
	snap  map[string]*framework.NodeInfo
	names []string
	dirty map[string]bool
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{nodes: map[string]*framework.NodeInfo{}, pods: map[types.UID]*podState{}, assumed: map[types.UID]bool{},
		snap: map[string]*framework.NodeInfo{}, dirty: map[string]bool{}}
}

// nodeInfo returns the node's entry, creating it, and marks it changed.
func (c *Cache) nodeInfo(name string) *framework.NodeInfo {
	c.dirty[name] = true
	ni, ok := c.nodes[name]
	if !ok {
		ni = framework.NewNodeInfo()
		c.nodes[name] = ni
	}
	return ni
}

// AddNode adds or replaces a node.
func (c *Cache) AddNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nodeInfo(node.Name).SetNode(node)
}

// UpdateNode is AddNode.
func (c *Cache) UpdateNode(node *corev1.Node) { c.AddNode(node) }

// RemoveNode forgets a node; its pods stay accounted until they go.
func (c *Cache) RemoveNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ni, ok := c.nodes[node.Name]
	if !ok {
		return
	}
	c.dirty[node.Name] = true
	ni.RemoveNode()
	if len(ni.Pods) == 0 {
		delete(c.nodes, node.Name)
	}
}

func (c *Cache) addPodLocked(pod *corev1.Pod) {
	c.nodeInfo(pod.Spec.NodeName).AddPod(pod)
}

func (c *Cache) removePodLocked(pod *corev1.Pod) {
	ni, ok := c.nodes[pod.Spec.NodeName]
	if !ok {
		return
	}
	c.dirty[pod.Spec.NodeName] = true
	ni.RemovePod(pod)
	if len(ni.Pods) == 0 && ni.Node() == nil {
		delete(c.nodes, pod.Spec.NodeName)
	}
}

// AssumePod accounts a pod (with spec.nodeName set) before it is bound.
func (c *Cache) AssumePod(pod *corev1.Pod) error {
	if pod.Spec.NodeName == "" {
		return fmt.Errorf("pod %s/%s has no node to assume", pod.Namespace, pod.Name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pods[pod.UID]; ok {
		return fmt.Errorf("pod %s/%s (%s) is already in the cache", pod.Namespace, pod.Name, pod.UID)
	}
	c.addPodLocked(pod)
	c.pods[pod.UID] = &podState{pod: pod}
	c.assumed[pod.UID] = true
	return nil
}

// FinishBinding marks an assumed pod as bound; it stays assumed until the
// informer reports it.
func (c *Cache) FinishBinding(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[pod.UID]; ok && c.assumed[pod.UID] {
		ps.bindingFinished = true
	}
}

// ForgetPod undoes AssumePod after a failed binding.
func (c *Cache) ForgetPod(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok || !c.assumed[pod.UID] {
		return
	}
	c.removePodLocked(ps.pod)
	delete(c.pods, pod.UID)
	delete(c.assumed, pod.UID)
}

// IsAssumed reports whether the pod is assumed and not yet confirmed.
func (c *Cache) IsAssumed(uid types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.assumed[uid]
}

// AddPod records a bound pod reported by the informer, confirming an
// assumed one (and moving it if it landed elsewhere).
func (c *Cache) AddPod(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[pod.UID]; ok {
		c.removePodLocked(ps.pod)
	}
	c.addPodLocked(pod)
	c.pods[pod.UID] = &podState{pod: pod}
	delete(c.assumed, pod.UID)
}

// UpdatePod replaces a bound pod.
func (c *Cache) UpdatePod(_, newPod *corev1.Pod) { c.AddPod(newPod) }

// RemovePod forgets a pod.
func (c *Cache) RemovePod(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		return
	}
	c.removePodLocked(ps.pod)
	delete(c.pods, pod.UID)
	delete(c.assumed, pod.UID)
}

// Snapshot returns copies of the nodes (those whose Node object is
// known), sorted by name, for one scheduling cycle. Only nodes changed
// since the last snapshot are copied again; the copies must not be
// modified (clone one to change it).
func (c *Cache) Snapshot() []*framework.NodeInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	membership := false
	for name := range c.dirty {
		ni, ok := c.nodes[name]
		_, had := c.snap[name]
		if ok && ni.Node() != nil {
			c.snap[name] = ni.Clone()
			membership = membership || !had
		} else if had {
			delete(c.snap, name)
			membership = true
		}
	}
	clear(c.dirty)
	if membership {
		c.names = c.names[:0]
		for name := range c.snap {
			c.names = append(c.names, name)
		}
		sort.Strings(c.names)
	}
	out := make([]*framework.NodeInfo, len(c.names))
	for i, name := range c.names {
		out[i] = c.snap[name]
	}
	return out
}

// NodeCount is the number of nodes with a Node object.
func (c *Cache) NodeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, ni := range c.nodes {
		if ni.Node() != nil {
			n++
		}
	}
	return n
}
