package interpodaffinity

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"skiff.dev/scheduler/pkg/framework"
)

// Upstream's reasons.
const (
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	ErrReasonAffinityRulesNotMatch             = "node(s) didn't match pod affinity rules"
	ErrReasonAntiAffinityRulesNotMatch         = "node(s) didn't match pod anti-affinity rules"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// counts is the number of matching pods (or terms) per topology pair.
type counts map[topologyPair]int64

func (m counts) update(node *corev1.Node, key string, v int64) {
	if val, ok := node.Labels[key]; ok {
		p := topologyPair{key, val}
		m[p] += v
		if m[p] == 0 {
			delete(m, p)
		}
	}
}

// preFilterState is what PreFilter computed over the whole cluster.
type preFilterState struct {
	// existingAntiAffinity counts existing pods' required anti-affinity
	// terms that the incoming pod matches, per topology pair.
	existingAntiAffinity counts
	// affinity counts existing pods that match all the incoming pod's
	// required affinity terms, per topology pair of each term.
	affinity counts
	// antiAffinity counts existing pods matching each of the incoming
	// pod's required anti-affinity terms.
	antiAffinity counts
	podInfo      *framework.PodInfo
}

// PreFilter counts, once per cycle, the pods that the incoming pod's
// required terms match and the existing anti-affinity terms the pod
// matches. It returns Skip when there is nothing to check.
func (pl *InterPodAffinity) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod) *framework.Status {
	pi := framework.NewPodInfo(pod)
	if pi.ParseError != nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %+v", pi.ParseError))
	}
	pi.RequiredAffinityTerms = cloneTerms(pi.RequiredAffinityTerms)
	pi.RequiredAntiAffinityTerms = cloneTerms(pi.RequiredAntiAffinityTerms)
	for _, terms := range [][]framework.AffinityTerm{pi.RequiredAffinityTerms, pi.RequiredAntiAffinityTerms} {
		for i := range terms {
			if err := pl.mergeNamespaces(&terms[i]); err != nil {
				return framework.AsStatus(err)
			}
		}
	}
	snap := pl.handle.SnapshotSharedLister()
	s := &preFilterState{podInfo: pi}
	s.existingAntiAffinity = existingAntiAffinityCounts(pod, pl.namespaceLabels(pod.Namespace), snap.HavePodsWithRequiredAntiAffinityList())
	s.affinity, s.antiAffinity = incomingCounts(pi, snap.List())
	if len(s.existingAntiAffinity) == 0 && len(pi.RequiredAffinityTerms) == 0 && len(pi.RequiredAntiAffinityTerms) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, s)
	return nil
}

func existingAntiAffinityCounts(pod *corev1.Pod, nsLabels labels.Set, nodes []*framework.NodeInfo) counts {
	m := counts{}
	for _, ni := range nodes {
		for _, existing := range ni.PodsWithRequiredAntiAffinity {
			for i := range existing.RequiredAntiAffinityTerms {
				t := &existing.RequiredAntiAffinityTerms[i]
				if t.Matches(pod, nsLabels) {
					m.update(ni.Node(), t.TopologyKey, 1)
				}
			}
		}
	}
	return m
}

func incomingCounts(pi *framework.PodInfo, nodes []*framework.NodeInfo) (counts, counts) {
	affinity, anti := counts{}, counts{}
	if len(pi.RequiredAffinityTerms) == 0 && len(pi.RequiredAntiAffinityTerms) == 0 {
		return affinity, anti
	}
	for _, ni := range nodes {
		for _, existing := range ni.Pods {
			if podMatchesAllAffinityTerms(pi.RequiredAffinityTerms, existing.Pod) {
				for _, t := range pi.RequiredAffinityTerms {
					affinity.update(ni.Node(), t.TopologyKey, 1)
				}
			}
			for i := range pi.RequiredAntiAffinityTerms {
				t := &pi.RequiredAntiAffinityTerms[i]
				if t.Matches(existing.Pod, nil) {
					anti.update(ni.Node(), t.TopologyKey, 1)
				}
			}
		}
	}
	return affinity, anti
}

func readPreFilterState(state *framework.CycleState) (*preFilterState, error) {
	v, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from cycleState: %w", preFilterStateKey, err)
	}
	return v.(*preFilterState), nil
}

// Filter checks the node against the counts PreFilter made.
func (pl *InterPodAffinity) Filter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	s, err := readPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if !satisfyPodAffinity(s, ni.Node()) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	}
	if !satisfyPodAntiAffinity(s, ni.Node()) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	}
	if !satisfyExistingPodsAntiAffinity(s, ni.Node()) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
	}
	return nil
}

// satisfyPodAffinity needs, for every required affinity term, the node's
// topology label and a matching pod in that domain. As upstream, the first
// pod of a group passes when no pod anywhere matches the terms and the pod
// matches all its own terms.
func satisfyPodAffinity(s *preFilterState, node *corev1.Node) bool {
	podsExist := true
	for _, t := range s.podInfo.RequiredAffinityTerms {
		val, ok := node.Labels[t.TopologyKey]
		if !ok {
			return false
		}
		if s.affinity[topologyPair{t.TopologyKey, val}] <= 0 {
			podsExist = false
		}
	}
	if !podsExist {
		return len(s.affinity) == 0 && podMatchesAllAffinityTerms(s.podInfo.RequiredAffinityTerms, s.podInfo.Pod)
	}
	return true
}

func satisfyPodAntiAffinity(s *preFilterState, node *corev1.Node) bool {
	if len(s.antiAffinity) == 0 {
		return true
	}
	for _, t := range s.podInfo.RequiredAntiAffinityTerms {
		if val, ok := node.Labels[t.TopologyKey]; ok && s.antiAffinity[topologyPair{t.TopologyKey, val}] > 0 {
			return false
		}
	}
	return true
}

func satisfyExistingPodsAntiAffinity(s *preFilterState, node *corev1.Node) bool {
	if len(s.existingAntiAffinity) == 0 {
		return true
	}
	for k, v := range node.Labels {
		if s.existingAntiAffinity[topologyPair{k, v}] > 0 {
			return false
		}
	}
	return true
}

var _ framework.PreFilterExtensions = (*InterPodAffinity)(nil)

func (m counts) clone() counts {
	out := make(counts, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Clone copies the counts; the pod info is read-only.
func (s *preFilterState) Clone() any {
	c := *s
	c.existingAntiAffinity, c.affinity, c.antiAffinity = s.existingAntiAffinity.clone(), s.affinity.clone(), s.antiAffinity.clone()
	return &c
}

// updateWithPod adds (multiplier 1) or removes (-1) an existing pod's
// contribution to the counts.
func (s *preFilterState) updateWithPod(pi *framework.PodInfo, node *corev1.Node, nsLabels labels.Set, multiplier int64) {
	for i := range pi.RequiredAntiAffinityTerms {
		t := &pi.RequiredAntiAffinityTerms[i]
		if t.Matches(s.podInfo.Pod, nsLabels) {
			s.existingAntiAffinity.update(node, t.TopologyKey, multiplier)
		}
	}
	if podMatchesAllAffinityTerms(s.podInfo.RequiredAffinityTerms, pi.Pod) {
		for _, t := range s.podInfo.RequiredAffinityTerms {
			s.affinity.update(node, t.TopologyKey, multiplier)
		}
	}
	for i := range s.podInfo.RequiredAntiAffinityTerms {
		t := &s.podInfo.RequiredAntiAffinityTerms[i]
		if t.Matches(pi.Pod, nil) {
			s.antiAffinity.update(node, t.TopologyKey, multiplier)
		}
	}
}

// AddPod counts a pod placed on the node.
func (pl *InterPodAffinity) AddPod(_ context.Context, state *framework.CycleState, pod *corev1.Pod, add *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	s, err := readPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(add, ni.Node(), pl.namespaceLabels(pod.Namespace), 1)
	return nil
}

// RemovePod uncounts a pod taken off the node.
func (pl *InterPodAffinity) RemovePod(_ context.Context, state *framework.CycleState, pod *corev1.Pod, remove *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	s, err := readPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(remove, ni.Node(), pl.namespaceLabels(pod.Namespace), -1)
	return nil
}
