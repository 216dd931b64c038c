package pod

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
)

// SandboxChecker is a Network that can tell whether a sandbox it set up
// is still there.
type SandboxChecker interface {
	// Lost says sb's network namespace is gone.
	Lost(sb Sandbox) bool
}

// ErrSandboxLost is NetworkHook.Run's answer when the pod's network
// namespace went away under it: the pod's containers must be stopped (they
// are cut off), and they start again in the new sandbox the hook made.
var ErrSandboxLost = errors.New("the pod's network sandbox is gone")

// NetworkHook gives the pod its network namespace and address before any
// container starts, and releases them when the pod goes away.
type NetworkHook struct {
	Network Network
	// HostIP is the address of hostNetwork pods.
	HostIP string
}

// Name implements Hook.
func (h *NetworkHook) Name() string { return "network" }

// Prepare sets up (or finds again) the pod's sandbox.
func (h *NetworkHook) Prepare(ctx context.Context, s *State) error {
	if s.Sandbox != nil {
		return nil
	}
	if s.Pod.Spec.HostNetwork {
		// The node's network: no namespace, no CNI.
		s.Sandbox = &Sandbox{IPs: []string{h.HostIP}}
		return nil
	}
	sb, err := h.Network.SetUp(ctx, NetworkOf(s.Pod))
	if err != nil {
		return err
	}
	s.Sandbox = &sb
	return nil
}

// Run checks the sandbox is still there. When its namespace is gone (an
// operator removed it, or a clean-up raced the pod), the remains are torn
// down and a new sandbox is set up, as upstream's kubelet re-creates a
// sandbox that changed: the containers, cut off in the old namespace, are
// then stopped by the worker and started again as the restart policy says.
// A pod that never restarts gets no new sandbox once a container has run,
// as upstream: its containers are stopped and it ends.
func (h *NetworkHook) Run(ctx context.Context, s *State) error {
	if s.Sandbox == nil || s.Pod.Spec.HostNetwork {
		return nil
	}
	c, ok := h.Network.(SandboxChecker)
	if !ok || !c.Lost(*s.Sandbox) {
		return nil
	}
	if err := h.Network.TearDown(ctx, NetworkOf(s.Pod)); err != nil {
		return errors.Join(ErrSandboxLost, err)
	}
	if s.Pod.Spec.RestartPolicy == corev1.RestartPolicyNever && len(s.Containers) > 0 {
		return ErrSandboxLost
	}
	sb, err := h.Network.SetUp(ctx, NetworkOf(s.Pod))
	if err != nil {
		// Prepare sets it up again on the next sync.
		s.Sandbox, s.Prepared = nil, false
		return errors.Join(ErrSandboxLost, err)
	}
	s.Sandbox = &sb
	return ErrSandboxLost
}

// Destroy tears the sandbox down.
func (h *NetworkHook) Destroy(ctx context.Context, s *State) error {
	if s.Pod.Spec.HostNetwork {
		s.Sandbox = nil
		return nil
	}
	if err := h.Network.TearDown(ctx, NetworkOf(s.Pod)); err != nil {
		return err
	}
	s.Sandbox = nil
	return nil
}
