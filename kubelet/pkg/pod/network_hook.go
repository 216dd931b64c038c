package pod

import (
	"context"
)

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
