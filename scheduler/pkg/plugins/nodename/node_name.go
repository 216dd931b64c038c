package nodename

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
)

// Name is the plugin's name.
const Name = "NodeName"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't match the requested node name"

// NodeName is the plugin.
type NodeName struct{}

var _ framework.FilterPlugin = (*NodeName)(nil)

// New builds the plugin.
func New() (framework.Plugin, error) { return &NodeName{}, nil }

// Name returns Name.
func (*NodeName) Name() string { return Name }

// Filter rejects every node but the named one.
func (*NodeName) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != ni.Node().Name {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}
