package volumerestrictions

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"skiff.dev/scheduler/pkg/framework"
)

// Name is the plugin's name.
const Name = "VolumeRestrictions"

// ErrReasonReadWriteOncePodConflict is upstream's reason.
const ErrReasonReadWriteOncePodConflict = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"

// VolumeRestrictions is the plugin.
type VolumeRestrictions struct {
	handle framework.Handle
}

var _ framework.PreFilterPlugin = (*VolumeRestrictions)(nil)

// New builds the plugin.
func New(h framework.Handle) (framework.Plugin, error) { return &VolumeRestrictions{handle: h}, nil }

// Name returns Name.
func (*VolumeRestrictions) Name() string { return Name }

// PreFilter rejects the pod when a ReadWriteOncePod claim of it is in use
// by another pod (Unschedulable: preempting that pod may help).
func (v *VolumeRestrictions) PreFilter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod) *framework.Status {
	lister := v.handle.Listers().PersistentVolumeClaims
	var rwop []string
	for _, vol := range pod.Spec.Volumes {
		name := ""
		switch {
		case vol.PersistentVolumeClaim != nil:
			name = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			name = pod.Name + "-" + vol.Name
		default:
			continue
		}
		if lister == nil {
			break
		}
		pvc, err := lister.PersistentVolumeClaims(pod.Namespace).Get(name)
		if apierrors.IsNotFound(err) {
			continue // VolumeBinding says so
		}
		if err != nil {
			return framework.AsStatus(err)
		}
		if slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteOncePod) {
			rwop = append(rwop, name)
		}
	}
	if len(rwop) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	for _, ni := range v.handle.SnapshotSharedLister().List() {
		for _, pi := range ni.Pods {
			other := pi.Pod
			if other.UID == pod.UID || other.Namespace != pod.Namespace {
				continue
			}
			for _, vol := range other.Spec.Volumes {
				name := ""
				switch {
				case vol.PersistentVolumeClaim != nil:
					name = vol.PersistentVolumeClaim.ClaimName
				case vol.Ephemeral != nil:
					name = other.Name + "-" + vol.Name
				}
				if name != "" && slices.Contains(rwop, name) {
					return framework.NewStatus(framework.Unschedulable, ErrReasonReadWriteOncePodConflict)
				}
			}
		}
	}
	return nil
}
