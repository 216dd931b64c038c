package noderesources

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
)

// BalancedAllocationName is the plugin's name.
const BalancedAllocationName = "NodeResourcesBalancedAllocation"

// BalancedAllocation scores 100*(1-std) of the cpu and memory fractions
// requested after placing the pod, with the real (not defaulted) requests.
type BalancedAllocation struct{}

var _ framework.ScorePlugin = (*BalancedAllocation)(nil)

// NewBalancedAllocation builds the plugin.
func NewBalancedAllocation(args json.RawMessage, _ framework.Handle) (framework.Plugin, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("the plugin takes no arguments")
	}
	return &BalancedAllocation{}, nil
}

// Name returns BalancedAllocationName.
func (*BalancedAllocation) Name() string { return BalancedAllocationName }

// Score computes the balance.
func (*BalancedAllocation) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	pr := podInfo(state, pod).Requests
	req := []int64{ni.Requested.MilliCPU + pr.MilliCPU, ni.Requested.Memory + pr.Memory}
	alloc := []int64{ni.Allocatable.MilliCPU, ni.Allocatable.Memory}
	return balancedResourceScorer(req, alloc), nil
}

func balancedResourceScorer(requested, allocatable []int64) int64 {
	var fractions []float64
	var total float64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		f := float64(requested[i]) / float64(allocatable[i])
		if f > 1 {
			f = 1
		}
		total += f
		fractions = append(fractions, f)
	}
	std := 0.0
	if len(fractions) == 2 {
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	} else if len(fractions) > 2 {
		mean := total / float64(len(fractions))
		var sum float64
		for _, f := range fractions {
			sum += (f - mean) * (f - mean)
		}
		std = math.Sqrt(sum / float64(len(fractions)))
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}

// ScoreExtensions is nil: scores are already 0..100.
func (*BalancedAllocation) ScoreExtensions() framework.ScoreExtensions { return nil }
