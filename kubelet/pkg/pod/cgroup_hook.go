package pod

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodCgroups creates and removes pod cgroups (package cm).
type PodCgroups interface {
	// PodCgroup is the pod's cgroup, the parent of its containers'.
	PodCgroup(pod *corev1.Pod) string
	EnsurePod(pod *corev1.Pod) error
	RemovePod(uid types.UID) error
}

// CgroupHook gives the pod its cgroup under its QoS class before any
// container starts, and removes it once the containers are gone.
type CgroupHook struct {
	Cgroups PodCgroups
}

// Name implements Hook.
func (h *CgroupHook) Name() string { return "cgroup" }

// Prepare implements Preparer.
func (h *CgroupHook) Prepare(_ context.Context, s *State) error {
	if err := h.Cgroups.EnsurePod(s.Pod); err != nil {
		return err
	}
	s.CgroupParent = h.Cgroups.PodCgroup(s.Pod)
	return nil
}

// Destroy implements Destroyer.
func (h *CgroupHook) Destroy(_ context.Context, s *State) error {
	return h.Cgroups.RemovePod(s.Pod.UID)
}
