package tainttoleration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"skiff.dev/scheduler/pkg/framework"
)

// Name is the plugin's name.
const Name = "TaintToleration"

// TaintToleration is the plugin.
type TaintToleration struct{}

var (
	_ framework.FilterPlugin = (*TaintToleration)(nil)
	_ framework.ScorePlugin  = (*TaintToleration)(nil)
)

// New builds the plugin.
func New() (framework.Plugin, error) { return &TaintToleration{}, nil }

// Name returns Name.
func (*TaintToleration) Name() string { return Name }

// DoNotScheduleTaintsFilter keeps the NoSchedule and NoExecute taints, the
// ones that keep a pod off a node.
func DoNotScheduleTaintsFilter(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// Filter rejects a node with the first untolerated NoSchedule/NoExecute taint.
func (*TaintToleration) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	t, untolerated := corev1helpers.FindMatchingUntoleratedTaint(ni.Node().Spec.Taints, pod.Spec.Tolerations, DoNotScheduleTaintsFilter)
	if untolerated {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) had untolerated taint {%s: %s}", t.Key, t.Value))
	}
	return nil
}

// Score counts the PreferNoSchedule taints the pod does not tolerate
// (only tolerations with an empty or PreferNoSchedule effect count).
func (*TaintToleration) Score(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	var tols []corev1.Toleration
	for _, t := range pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == corev1.TaintEffectPreferNoSchedule {
			tols = append(tols, t)
		}
	}
	var n int64
	for i := range ni.Node().Spec.Taints {
		t := &ni.Node().Spec.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule && !corev1helpers.TolerationsTolerateTaint(tols, t) {
			n++
		}
	}
	return n, nil
}

// ScoreExtensions returns the plugin: fewer taints score higher.
func (p *TaintToleration) ScoreExtensions() framework.ScoreExtensions { return p }

// NormalizeScore reverses and scales the counts to 0..100.
func (*TaintToleration) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	return framework.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
}
