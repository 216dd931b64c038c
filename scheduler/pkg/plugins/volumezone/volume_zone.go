package volumezone

import (
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"skiff.dev/scheduler/pkg/framework"
)

// Name is the plugin's name.
const Name = "VolumeZone"

// ErrReasonConflict is upstream's reason.
const ErrReasonConflict = "node(s) had no available volume zone"

const stateKey = framework.StateKey(Name)

// topologyLabels are the labels upstream compares.
var topologyLabels = []string{
	corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
	corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion,
}

// VolumeZone is the plugin.
type VolumeZone struct {
	handle framework.Handle
}

var (
	_ framework.PreFilterPlugin = (*VolumeZone)(nil)
	_ framework.FilterPlugin    = (*VolumeZone)(nil)
)

// New builds the plugin.
func New(h framework.Handle) (framework.Plugin, error) { return &VolumeZone{handle: h}, nil }

// Name returns Name.
func (*VolumeZone) Name() string { return Name }

// constraint is one volume label the node must match.
type constraint struct {
	key    string
	values []string
}

// PreFilter gathers the topology labels of the pod's bound volumes.
func (v *VolumeZone) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod) *framework.Status {
	l := v.handle.Listers()
	if l.PersistentVolumeClaims == nil || l.PersistentVolumes == nil {
		return framework.NewStatus(framework.Skip)
	}
	var cons []constraint
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
		pvc, err := l.PersistentVolumeClaims.PersistentVolumeClaims(pod.Namespace).Get(name)
		if apierrors.IsNotFound(err) || (err == nil && pvc.Spec.VolumeName == "") {
			continue // VolumeBinding's business
		}
		if err != nil {
			return framework.AsStatus(err)
		}
		pv, err := l.PersistentVolumes.Get(pvc.Spec.VolumeName)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return framework.AsStatus(err)
		}
		for _, key := range topologyLabels {
			if val, ok := pv.Labels[key]; ok {
				cons = append(cons, constraint{key: key, values: strings.Split(val, "__")})
			}
		}
	}
	if len(cons) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, cons)
	return nil
}

// Filter rejects a node without a matching label.
func (v *VolumeZone) Filter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	c, err := state.Read(stateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	labels := ni.Node().Labels
	for _, con := range c.([]constraint) {
		if val, ok := labels[con.key]; !ok || !slices.Contains(con.values, val) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict)
		}
	}
	return nil
}
