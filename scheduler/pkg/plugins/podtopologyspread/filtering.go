package podtopologyspread

import (
	"context"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"skiff.dev/scheduler/pkg/framework"
)

// Upstream's reasons.
const (
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	ErrReasonNodeLabelNotMatch   = ErrReasonConstraintsNotMatch + " (missing required label)"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// preFilterState holds, per hard constraint, the matching pods per
// topology value over the eligible nodes and the smallest count.
type preFilterState struct {
	constraints []constraint
	// tpValueToMatchNum[i] maps a topology value of constraint i to the
	// number of matching pods in that domain.
	tpValueToMatchNum []map[string]int
	minMatchNum       []int
}

// globalMin is the smallest count in any domain, or 0 when there are fewer
// eligible domains than minDomains.
func (s *preFilterState) globalMin(i int) int {
	if len(s.tpValueToMatchNum[i]) < int(s.constraints[i].MinDomains) {
		return 0
	}
	return s.minMatchNum[i]
}

// PreFilter counts the matching pods per domain of each DoNotSchedule
// constraint over the nodes that count for it. Skip when there is none.
func (pl *PodTopologySpread) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod) *framework.Status {
	cs, err := pl.constraints(pod, corev1.DoNotSchedule)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("obtaining pod's hard topology spread constraints: %w", err))
	}
	if len(cs) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	s := &preFilterState{constraints: cs, tpValueToMatchNum: make([]map[string]int, len(cs)), minMatchNum: make([]int, len(cs))}
	for i := range cs {
		s.tpValueToMatchNum[i] = map[string]int{}
	}
	for _, ni := range pl.handle.SnapshotSharedLister().List() {
		node := ni.Node()
		if !nodeLabelsMatchConstraints(node.Labels, cs) {
			continue
		}
		for i := range cs {
			c := &cs[i]
			if !c.matchNodeInclusionPolicies(pod, node) {
				continue
			}
			s.tpValueToMatchNum[i][node.Labels[c.TopologyKey]] += countPodsMatchSelector(ni.Pods, c.Selector, pod.Namespace)
		}
	}
	for i := range cs {
		s.minMatchNum[i] = math.MaxInt32
		for _, n := range s.tpValueToMatchNum[i] {
			s.minMatchNum[i] = min(s.minMatchNum[i], n)
		}
	}
	state.Write(preFilterStateKey, s)
	return nil
}

// Filter rejects a node when placing the pod there would make its
// domain's count exceed the global minimum by more than maxSkew.
func (pl *PodTopologySpread) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	s, err := readPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	node := ni.Node()
	podLabels := labels.Set(pod.Labels)
	for i, c := range s.constraints {
		val, ok := node.Labels[c.TopologyKey]
		if !ok {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch)
		}
		self := 0
		if c.Selector.Matches(podLabels) {
			self = 1
		}
		skew := s.tpValueToMatchNum[i][val] + self - s.globalMin(i)
		if skew > int(c.MaxSkew) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch)
		}
	}
	return nil
}

var _ framework.PreFilterExtensions = (*PodTopologySpread)(nil)

// Clone copies the counts; the constraints are read-only.
func (s *preFilterState) Clone() any {
	c := &preFilterState{constraints: s.constraints, tpValueToMatchNum: make([]map[string]int, len(s.tpValueToMatchNum)),
		minMatchNum: append([]int(nil), s.minMatchNum...)}
	for i, m := range s.tpValueToMatchNum {
		c.tpValueToMatchNum[i] = make(map[string]int, len(m))
		for k, v := range m {
			c.tpValueToMatchNum[i][k] = v
		}
	}
	return c
}

// updateWithPod adds delta for an existing pod of the preemptor's
// namespace on node to the domains it counts in.
func (s *preFilterState) updateWithPod(updated, preemptor *corev1.Pod, node *corev1.Node, delta int) {
	if updated.Namespace != preemptor.Namespace || !nodeLabelsMatchConstraints(node.Labels, s.constraints) {
		return
	}
	podLabels := labels.Set(updated.Labels)
	for i := range s.constraints {
		c := &s.constraints[i]
		if !c.Selector.Matches(podLabels) || !c.matchNodeInclusionPolicies(preemptor, node) {
			continue
		}
		s.tpValueToMatchNum[i][node.Labels[c.TopologyKey]] += delta
		s.minMatchNum[i] = math.MaxInt32
		for _, n := range s.tpValueToMatchNum[i] {
			s.minMatchNum[i] = min(s.minMatchNum[i], n)
		}
	}
}

func readPreFilterState(state *framework.CycleState) (*preFilterState, error) {
	v, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from cycleState: %w", preFilterStateKey, err)
	}
	return v.(*preFilterState), nil
}

// AddPod counts a pod placed on the node.
func (pl *PodTopologySpread) AddPod(_ context.Context, state *framework.CycleState, pod *corev1.Pod, add *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	s, err := readPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(add.Pod, pod, ni.Node(), 1)
	return nil
}

// RemovePod uncounts a pod taken off the node.
func (pl *PodTopologySpread) RemovePod(_ context.Context, state *framework.CycleState, pod *corev1.Pod, remove *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	s, err := readPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(remove.Pod, pod, ni.Node(), -1)
	return nil
}
