package nodeaffinity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

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
// required node affinity.
func Matches(pod *corev1.Pod, node *corev1.Node) bool {
	if len(pod.Spec.NodeSelector) > 0 &&
		!labels.SelectorFromSet(pod.Spec.NodeSelector).Matches(labels.Set(node.Labels)) {
		return false
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	return MatchNodeSelectorTerms(node, a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)
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
	var sum int64
	for _, t := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if t.Weight != 0 && matchTerm(ni.Node(), &t.Preference) {
			sum += int64(t.Weight)
		}
	}
	return sum, nil
}

// ScoreExtensions returns the plugin.
func (p *NodeAffinity) ScoreExtensions() framework.ScoreExtensions { return p }

// NormalizeScore scales the sums to 0..100.
func (*NodeAffinity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	return framework.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
}
