package podtopologyspread

import (
	"context"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

type preScoreState struct {
	constraints []constraint
	// ignoredNodes lack a topology key of some constraint.
	ignoredNodes map[string]bool
	// podCounts[i] maps a topology value of constraint i (other than
	// hostname, counted in Score) to its matching pods.
	podCounts []map[string]int64
	// weights[i] is log(domains+2) for constraint i, so that the counts of
	// small topologies are not watered down by big ones.
	weights []float64
}

// PreScore counts the matching pods per domain of each ScheduleAnyway
// constraint, over the domains of the feasible nodes.
func (pl *PodTopologySpread) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, filtered []*framework.NodeInfo) *framework.Status {
	all := pl.handle.SnapshotSharedLister().List()
	if len(filtered) == 0 || len(all) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	cs, err := pl.constraints(pod, corev1.ScheduleAnyway)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("obtaining pod's soft topology spread constraints: %w", err))
	}
	if len(cs) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	// Only non-default constraints require every topology label, so that
	// nodes without a zone label still get hostname spreading.
	requireAll := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	s := &preScoreState{constraints: cs, ignoredNodes: map[string]bool{}, podCounts: make([]map[string]int64, len(cs)), weights: make([]float64, len(cs))}
	size := make([]int, len(cs))
	for i := range cs {
		s.podCounts[i] = map[string]int64{}
	}
	for _, ni := range filtered {
		node := ni.Node()
		if requireAll && !nodeLabelsMatchConstraints(node.Labels, cs) {
			s.ignoredNodes[node.Name] = true
			continue
		}
		for i, c := range cs {
			if c.TopologyKey == corev1.LabelHostname {
				continue
			}
			v := node.Labels[c.TopologyKey]
			if _, ok := s.podCounts[i][v]; !ok {
				s.podCounts[i][v] = 0
				size[i]++
			}
		}
	}
	for i, c := range cs {
		n := size[i]
		if c.TopologyKey == corev1.LabelHostname {
			n = len(filtered) - len(s.ignoredNodes)
		}
		s.weights[i] = math.Log(float64(n + 2))
	}
	for _, ni := range all {
		node := ni.Node()
		if requireAll && !nodeLabelsMatchConstraints(node.Labels, cs) {
			continue
		}
		for i := range cs {
			c := &cs[i]
			if !c.matchNodeInclusionPolicies(pod, node) {
				continue
			}
			v := node.Labels[c.TopologyKey]
			if _, ok := s.podCounts[i][v]; !ok {
				continue
			}
			s.podCounts[i][v] += int64(countPodsMatchSelector(ni.Pods, c.Selector, pod.Namespace))
		}
	}
	state.Write(preScoreStateKey, s)
	return nil
}

func readPreScoreState(state *framework.CycleState) (*preScoreState, error) {
	v, err := state.Read(preScoreStateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from cycleState: %w", preScoreStateKey, err)
	}
	return v.(*preScoreState), nil
}

// Score sums, over the constraints, count*weight + maxSkew-1 for the
// node's domain: the more matching pods, the higher (worse) the raw score.
func (pl *PodTopologySpread) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	s, err := readPreScoreState(state)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	node := ni.Node()
	if s.ignoredNodes[node.Name] {
		return 0, nil
	}
	var score float64
	for i, c := range s.constraints {
		v, ok := node.Labels[c.TopologyKey]
		if !ok {
			continue
		}
		var cnt int64
		if c.TopologyKey == corev1.LabelHostname {
			cnt = int64(countPodsMatchSelector(ni.Pods, c.Selector, pod.Namespace))
		} else {
			cnt = s.podCounts[i][v]
		}
		score += float64(cnt)*s.weights[i] + float64(c.MaxSkew-1)
	}
	return int64(math.Round(score)), nil
}

// ScoreExtensions returns the plugin.
func (pl *PodTopologySpread) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore reverses the raw scores: 100*(max+min-score)/max, and 0
// for ignored nodes.
func (pl *PodTopologySpread) NormalizeScore(_ context.Context, state *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := readPreScoreState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for _, sc := range scores {
		if s.ignoredNodes[sc.Name] {
			continue
		}
		minScore = min(minScore, sc.Score)
		maxScore = max(maxScore, sc.Score)
	}
	for i := range scores {
		switch {
		case s.ignoredNodes[scores[i].Name]:
			scores[i].Score = 0
		case maxScore == 0:
			scores[i].Score = framework.MaxNodeScore
		default:
			scores[i].Score = framework.MaxNodeScore * (maxScore + minScore - scores[i].Score) / maxScore
		}
	}
	return nil
}
