package framework

import (
	"fmt"
	"sync"

	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
)

// Snapshot is the cluster as one scheduling cycle sees it: every node with
// its pods, plus the nodes hosting pods with affinity, so plugins that look
// beyond one node (inter-pod affinity, topology spread, image locality)
// need not walk every pod.
type Snapshot struct {
	nodes []*NodeInfo
	// byName is built on the first Get (preemption), not every cycle.
	byNameOnce               sync.Once
	byName                   map[string]*NodeInfo
	withAffinity             []*NodeInfo
	withRequiredAntiAffinity []*NodeInfo
}

// NewSnapshot indexes nodes; every NodeInfo must have its Node set.
func NewSnapshot(nodes []*NodeInfo) *Snapshot {
	s := &Snapshot{nodes: nodes}
	for _, n := range nodes {
		if len(n.PodsWithAffinity) > 0 {
			s.withAffinity = append(s.withAffinity, n)
		}
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			s.withRequiredAntiAffinity = append(s.withRequiredAntiAffinity, n)
		}
	}
	return s
}

// List returns every node.
func (s *Snapshot) List() []*NodeInfo { return s.nodes }

// HavePodsWithAffinityList returns the nodes with a pod that has pod
// affinity or anti-affinity.
func (s *Snapshot) HavePodsWithAffinityList() []*NodeInfo { return s.withAffinity }

// HavePodsWithRequiredAntiAffinityList returns the nodes with a pod that
// has required anti-affinity.
func (s *Snapshot) HavePodsWithRequiredAntiAffinityList() []*NodeInfo {
	return s.withRequiredAntiAffinity
}

// Get returns a node by name.
func (s *Snapshot) Get(name string) (*NodeInfo, error) {
	s.byNameOnce.Do(func() {
		s.byName = make(map[string]*NodeInfo, len(s.nodes))
		for _, n := range s.nodes {
			s.byName[n.Node().Name] = n
		}
	})
	if n, ok := s.byName[name]; ok {
		return n, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}

// Listers are the informer caches plugins may read. A lister is nil when
// the API server does not serve its kind; plugins treat that as "none".
type Listers struct {
	Namespaces             corelisters.NamespaceLister
	Services               corelisters.ServiceLister
	ReplicationControllers corelisters.ReplicationControllerLister
	ReplicaSets            appslisters.ReplicaSetLister
	StatefulSets           appslisters.StatefulSetLister
	// The storage kinds VolumeBinding reads.
	PersistentVolumeClaims corelisters.PersistentVolumeClaimLister
	PersistentVolumes      corelisters.PersistentVolumeLister
	StorageClasses         storagelisters.StorageClassLister
}

// Handle is what plugin factories receive: the snapshot of the current
// cycle and the listers.
type Handle interface {
	// SnapshotSharedLister returns the snapshot of the cycle running now;
	// it is valid only inside the cycle.
	SnapshotSharedLister() *Snapshot
	Listers() Listers
}

// StaticHandle is a Handle with a fixed snapshot (tests) or one the
// scheduler replaces before each cycle with SetSnapshot.
type StaticHandle struct {
	snapshot *Snapshot
	listers  Listers
}

// NewHandle returns a handle with an empty snapshot.
func NewHandle(l Listers) *StaticHandle {
	return &StaticHandle{snapshot: NewSnapshot(nil), listers: l}
}

// SetListers replaces the listers; Setup calls it once discovery has
// told which kinds are served, before scheduling starts.
func (h *StaticHandle) SetListers(l Listers) { h.listers = l }

// SetSnapshot replaces the snapshot; the scheduler calls it between
// cycles, never during one.
func (h *StaticHandle) SetSnapshot(s *Snapshot) { h.snapshot = s }

// SnapshotSharedLister returns the snapshot.
func (h *StaticHandle) SnapshotSharedLister() *Snapshot { return h.snapshot }

// Listers returns the listers.
func (h *StaticHandle) Listers() Listers { return h.listers }
