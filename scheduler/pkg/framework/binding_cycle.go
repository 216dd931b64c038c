package framework

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// ReservePlugin keeps resources for a pod on the node it was given, before
// the binding cycle; Unreserve gives them back when the pod does not get
// there (a later Reserve or PreBind plugin failed, or the binding did).
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
	Unreserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string)
}

// PreBindPlugin acts on the API before the pod is bound (VolumeBinding
// binds or provisions the pod's claims and waits for them).
type PreBindPlugin interface {
	Plugin
	PreBind(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
}

// RunReservePlugins runs the Reserve plugins in order; on the first
// failure it runs every Unreserve, as upstream does, and returns it.
func (f *Framework) RunReservePlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status {
	for _, p := range f.reservers {
		if st := p.Reserve(ctx, state, pod, nodeName); !st.IsSuccess() {
			f.RunUnreservePlugins(ctx, state, pod, nodeName)
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}

// RunUnreservePlugins runs every Unreserve, in reverse order.
func (f *Framework) RunUnreservePlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) {
	for i := len(f.reservers) - 1; i >= 0; i-- {
		f.reservers[i].Unreserve(ctx, state, pod, nodeName)
	}
}

// RunPreBindPlugins runs the PreBind plugins in order up to the first
// failure.
func (f *Framework) RunPreBindPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status {
	for _, p := range f.preBinders {
		if st := p.PreBind(ctx, state, pod, nodeName); !st.IsSuccess() {
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}
