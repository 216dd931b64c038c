package interpodaffinity

import (
	"context"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"skiff.dev/scheduler/pkg/framework"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// scoreMap is the summed term weight per topology key and value.
type scoreMap map[string]map[string]int64

func (m scoreMap) processTerm(t *framework.AffinityTerm, weight int32, pod *corev1.Pod, nsLabels labels.Set, node *corev1.Node, multiplier int32) {
	if !t.Matches(pod, nsLabels) {
		return
	}
	val, ok := node.Labels[t.TopologyKey]
	if !ok {
		return
	}
	if m[t.TopologyKey] == nil {
		m[t.TopologyKey] = map[string]int64{}
	}
	m[t.TopologyKey][val] += int64(weight * multiplier)
}

func (m scoreMap) processTerms(terms []framework.WeightedAffinityTerm, pod *corev1.Pod, nsLabels labels.Set, node *corev1.Node, multiplier int32) {
	for i := range terms {
		m.processTerm(&terms[i].AffinityTerm, terms[i].Weight, pod, nsLabels, node, multiplier)
	}
}

type preScoreState struct {
	topologyScore scoreMap
	podInfo       *framework.PodInfo
	nsLabels      labels.Set
}

// PreScore sums, per topology domain, the weights of the incoming pod's
// preferred terms that existing pods match and of existing pods' terms
// that the incoming pod matches (required affinity counting
// hardPodAffinityWeight). Without preferred terms of its own, only nodes
// hosting pods with affinity are visited.
func (pl *InterPodAffinity) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) *framework.Status {
	if len(nodes) == 0 {
		return nil
	}
	a := pod.Spec.Affinity
	hasConstraints := a != nil && ((a.PodAffinity != nil && len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) ||
		(a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0))
	if pl.ignorePreferredOfOthers && !hasConstraints {
		return framework.NewStatus(framework.Skip)
	}
	snap := pl.handle.SnapshotSharedLister()
	all := snap.HavePodsWithAffinityList()
	if hasConstraints {
		all = snap.List()
	}
	s := &preScoreState{topologyScore: scoreMap{}, podInfo: framework.NewPodInfo(pod), nsLabels: pl.namespaceLabels(pod.Namespace)}
	if s.podInfo.ParseError != nil {
		return framework.AsStatus(fmt.Errorf("parsing pod: %w", s.podInfo.ParseError))
	}
	s.podInfo.PreferredAffinityTerms = cloneWeighted(s.podInfo.PreferredAffinityTerms)
	s.podInfo.PreferredAntiAffinityTerms = cloneWeighted(s.podInfo.PreferredAntiAffinityTerms)
	for _, terms := range [][]framework.WeightedAffinityTerm{s.podInfo.PreferredAffinityTerms, s.podInfo.PreferredAntiAffinityTerms} {
		for i := range terms {
			if err := pl.mergeNamespaces(&terms[i].AffinityTerm); err != nil {
				return framework.AsStatus(err)
			}
		}
	}
	for _, ni := range all {
		pods := ni.PodsWithAffinity
		if hasConstraints {
			pods = ni.Pods
		}
		for _, existing := range pods {
			pl.processExistingPod(s, existing, ni.Node(), pod)
		}
	}
	if len(s.topologyScore) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preScoreStateKey, s)
	return nil
}

func (pl *InterPodAffinity) processExistingPod(s *preScoreState, existing *framework.PodInfo, node *corev1.Node, incoming *corev1.Pod) {
	if len(node.Labels) == 0 {
		return
	}
	m := s.topologyScore
	m.processTerms(s.podInfo.PreferredAffinityTerms, existing.Pod, nil, node, 1)
	m.processTerms(s.podInfo.PreferredAntiAffinityTerms, existing.Pod, nil, node, -1)
	if pl.hardPodAffinityWeight > 0 {
		for i := range existing.RequiredAffinityTerms {
			m.processTerm(&existing.RequiredAffinityTerms[i], pl.hardPodAffinityWeight, incoming, s.nsLabels, node, 1)
		}
	}
	m.processTerms(existing.PreferredAffinityTerms, incoming, s.nsLabels, node, 1)
	m.processTerms(existing.PreferredAntiAffinityTerms, incoming, s.nsLabels, node, -1)
}

func readPreScoreState(state *framework.CycleState) (*preScoreState, error) {
	v, err := state.Read(preScoreStateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from cycleState: %w", preScoreStateKey, err)
	}
	return v.(*preScoreState), nil
}

// Score sums the weights of the node's topology domains.
func (pl *InterPodAffinity) Score(_ context.Context, state *framework.CycleState, _ *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	s, err := readPreScoreState(state)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	var score int64
	for key, values := range s.topologyScore {
		if v, ok := ni.Node().Labels[key]; ok {
			score += values[v]
		}
	}
	return score, nil
}

// ScoreExtensions returns the plugin.
func (pl *InterPodAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps the sums linearly from [min, max] to [0, 100].
func (pl *InterPodAffinity) NormalizeScore(_ context.Context, state *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := readPreScoreState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.topologyScore) == 0 {
		return nil
	}
	var minCount int64 = math.MaxInt64
	var maxCount int64 = math.MinInt64
	for i := range scores {
		minCount = min(minCount, scores[i].Score)
		maxCount = max(maxCount, scores[i].Score)
	}
	diff := maxCount - minCount
	for i := range scores {
		f := float64(0)
		if diff > 0 {
			f = float64(framework.MaxNodeScore) * (float64(scores[i].Score-minCount) / float64(diff))
		}
		scores[i].Score = int64(f)
	}
	return nil
}
