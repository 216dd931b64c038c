package nodeports

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
)

// Name is the plugin's name.
const Name = "NodePorts"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

// NodePorts is the plugin.
type NodePorts struct{}

var _ framework.FilterPlugin = (*NodePorts)(nil)

// New builds the plugin.
func New() (framework.Plugin, error) { return &NodePorts{}, nil }

// Name returns Name.
func (*NodePorts) Name() string { return Name }

// Filter rejects a node where one of the pod's host ports is in use.
func (*NodePorts) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort > 0 && ni.UsedPorts.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
				return framework.NewStatus(framework.Unschedulable, ErrReason)
			}
		}
	}
	return nil
}
