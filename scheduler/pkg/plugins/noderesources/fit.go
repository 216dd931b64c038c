package noderesources

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
)

// Name is the Fit plugin's name.
const Name = "NodeResourcesFit"

// Fit is the resource filter plus a scorer by the configured strategy
// (LeastAllocated over cpu and memory, weighed equally, by default and for
// the zero value).
type Fit struct {
	resources []ResourceSpec
	score     scorer
}

var (
	_ framework.FilterPlugin    = (*Fit)(nil)
	_ framework.ScorePlugin     = (*Fit)(nil)
	_ framework.PreFilterPlugin = (*Fit)(nil)
)

// NewFit builds the plugin from NodeResourcesFitArgs.
func NewFit(args json.RawMessage, _ framework.Handle) (framework.Plugin, error) {
	s, err := decodeFitArgs(args)
	if err != nil {
		return nil, err
	}
	return &Fit{resources: s.Resources, score: newScorer(s)}, nil
}

// Name returns Name.
func (*Fit) Name() string { return Name }

const stateKey framework.StateKey = "PreFilter" + Name

// PreFilter computes the pod's requests once per cycle.
func (*Fit) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod) *framework.Status {
	state.Write(stateKey, framework.NewPodInfo(pod))
	return nil
}

func podInfo(state *framework.CycleState, pod *corev1.Pod) *framework.PodInfo {
	if state != nil {
		if v, err := state.Read(stateKey); err == nil {
			return v.(*framework.PodInfo)
		}
	}
	return framework.NewPodInfo(pod)
}

// InsufficientResource is one reason a pod does not fit.
type InsufficientResource struct {
	ResourceName corev1.ResourceName
	Reason       string
	Requested    int64
	Used         int64
	Capacity     int64
}

// Fits lists what the node lacks for the pod, in upstream's order: pods,
// cpu, memory, ephemeral-storage, extended resources.
func Fits(req *framework.Resource, ni *framework.NodeInfo) []InsufficientResource {
	var out []InsufficientResource
	if len(ni.Pods)+1 > ni.Allocatable.AllowedPodNumber {
		out = append(out, InsufficientResource{corev1.ResourcePods, "Too many pods", 1, int64(len(ni.Pods)), int64(ni.Allocatable.AllowedPodNumber)})
	}
	if req.IsZero() {
		return out
	}
	check := func(name corev1.ResourceName, r, used, alloc int64) {
		if r > 0 && r > alloc-used {
			out = append(out, InsufficientResource{name, fmt.Sprintf("Insufficient %v", name), r, used, alloc})
		}
	}
	check(corev1.ResourceCPU, req.MilliCPU, ni.Requested.MilliCPU, ni.Allocatable.MilliCPU)
	check(corev1.ResourceMemory, req.Memory, ni.Requested.Memory, ni.Allocatable.Memory)
	check(corev1.ResourceEphemeralStorage, req.EphemeralStorage, ni.Requested.EphemeralStorage, ni.Allocatable.EphemeralStorage)
	for name, v := range req.Scalar {
		check(name, v, ni.Requested.Scalar[name], ni.Allocatable.Scalar[name])
	}
	return out
}

// Filter rejects a node the pod does not fit, with one reason per missing
// resource ("Insufficient cpu", "Too many pods").
func (*Fit) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	ins := Fits(podInfo(state, pod).Requests, ni)
	if len(ins) == 0 {
		return nil
	}
	reasons := make([]string, len(ins))
	for i, r := range ins {
		reasons[i] = r.Reason
	}
	return framework.NewStatus(framework.Unschedulable, reasons...)
}

// Score rates the node by the scoring strategy with what the node would
// have requested after placing the pod (cpu and memory with non-zero
// defaults).
func (f *Fit) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	if f.score == nil {
		f.resources = defaultResources
		f.score = newScorer(&ScoringStrategy{Type: LeastAllocated, Resources: defaultResources})
	}
	req, alloc := requestedAndAllocatable(f.resources, podInfo(state, pod), ni)
	return f.score(req, alloc), nil
}

func leastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * framework.MaxNodeScore / capacity
}

// ScoreExtensions is nil: scores are already 0..100.
func (*Fit) ScoreExtensions() framework.ScoreExtensions { return nil }
