package nodeunschedulable

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
)

// Name is the plugin's name.
const Name = "NodeUnschedulable"

// ErrReason is upstream's reason.
const ErrReason = "node(s) were unschedulable"

// NodeUnschedulable is the plugin.
type NodeUnschedulable struct{}

var _ framework.FilterPlugin = (*NodeUnschedulable)(nil)

// New builds the plugin.
func New() (framework.Plugin, error) { return &NodeUnschedulable{}, nil }

// Name returns Name.
func (*NodeUnschedulable) Name() string { return Name }

// Filter rejects cordoned nodes.
func (*NodeUnschedulable) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	if !ni.Node().Spec.Unschedulable {
		return nil
	}
	taint := &corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(taint) {
			return nil
		}
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
}
