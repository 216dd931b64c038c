package nodeaffinity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	helper "k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"skiff.dev/scheduler/pkg/framework"
)

// Name is the plugin's name.
const Name = "NodeAffinity"

// ErrReasonPod is upstream's reason.
const ErrReasonPod = "node(s) didn't match Pod's node affinity/selector"

// NodeAffinity is the plugin.
type NodeAffinity struct{}

var (
	_ framework.FilterPlugin = (*NodeAffinity)(nil)
	_ framework.ScorePlugin  = (*NodeAffinity)(nil)
)

// New builds the plugin.
func New() (framework.Plugin, error) { return &NodeAffinity{}, nil }

// Name returns Name.
func (*NodeAffinity) Name() string { return Name }

// Matches is true when the node satisfies the pod's nodeSelector and
// required node affinity (k8s.io/component-helpers' RequiredNodeAffinity,
// as upstream's plugin; a term that does not parse matches nothing).
func Matches(pod *corev1.Pod, node *corev1.Node) bool {
	match, _ := helper.GetRequiredNodeAffinity(pod).Match(node)
	return match
}

// MatchNodeSelectorTerms is true when the node matches any of the terms
// (component-helpers' MatchNodeSelectorTerms; an invalid term matches
// nothing).
func MatchNodeSelectorTerms(node *corev1.Node, terms []corev1.NodeSelectorTerm) bool {
	match, _ := corev1helpers.MatchNodeSelectorTerms(node, &corev1.NodeSelector{NodeSelectorTerms: terms})
	return match
}

// Filter rejects nodes that do not match.
func (*NodeAffinity) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	if !Matches(pod, ni.Node()) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)
	}
	return nil
}

// Score sums the weights of the matching preferred terms.
func (*NodeAffinity) Score(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return 0, nil
	}
	terms, err := helper.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	return terms.Score(ni.Node()), nil
}

// ScoreExtensions returns the plugin.
func (p *NodeAffinity) ScoreExtensions() framework.ScoreExtensions { return p }

// NormalizeScore scales the sums to 0..100.
func (*NodeAffinity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	return framework.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
}
