package noderesources

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
)

// Scoring strategy types, as upstream.
const (
	LeastAllocated           = "LeastAllocated"
	MostAllocated            = "MostAllocated"
	RequestedToCapacityRatio = "RequestedToCapacityRatio"
)

// maxCustomPriorityScore is the top of a RequestedToCapacityRatio shape.
const maxCustomPriorityScore = 10

// ResourceSpec is a resource scored, with its weight.
type ResourceSpec struct {
	Name   corev1.ResourceName `json:"name"`
	Weight int64               `json:"weight,omitempty"`
}

// UtilizationShapePoint is a point of the RequestedToCapacityRatio curve:
// utilization 0..100 percent to score 0..10.
type UtilizationShapePoint struct {
	Utilization int32 `json:"utilization"`
	Score       int32 `json:"score"`
}

// RequestedToCapacityRatioParam is the curve.
type RequestedToCapacityRatioParam struct {
	Shape []UtilizationShapePoint `json:"shape,omitempty"`
}

// ScoringStrategy is upstream's NodeResourcesFitArgs.scoringStrategy.
type ScoringStrategy struct {
	Type                     string                         `json:"type,omitempty"`
	Resources                []ResourceSpec                 `json:"resources,omitempty"`
	RequestedToCapacityRatio *RequestedToCapacityRatioParam `json:"requestedToCapacityRatio,omitempty"`
}

// FitArgs are upstream's NodeResourcesFitArgs (the scoring strategy only).
type FitArgs struct {
	ScoringStrategy *ScoringStrategy `json:"scoringStrategy,omitempty"`
}

var defaultResources = []ResourceSpec{{Name: corev1.ResourceCPU, Weight: 1}, {Name: corev1.ResourceMemory, Weight: 1}}

// decodeFitArgs decodes, defaults and validates the arguments.
func decodeFitArgs(raw json.RawMessage) (*ScoringStrategy, error) {
	var args FitArgs
	if err := framework.DecodeArgs(raw, "NodeResourcesFitArgs", &args); err != nil {
		return nil, err
	}
	s := args.ScoringStrategy
	if s == nil {
		s = &ScoringStrategy{}
	}
	if s.Type == "" {
		s.Type = LeastAllocated
	}
	if len(s.Resources) == 0 {
		s.Resources = defaultResources
	}
	for i := range s.Resources {
		if s.Resources[i].Weight == 0 {
			s.Resources[i].Weight = 1
		}
	}
	return s, validateStrategy(s)
}

func validateStrategy(s *ScoringStrategy) error {
	var errs []error
	switch s.Type {
	case LeastAllocated, MostAllocated:
		if s.RequestedToCapacityRatio != nil {
			errs = append(errs, fmt.Errorf("scoringStrategy.requestedToCapacityRatio: Forbidden: only allowed with type %q", RequestedToCapacityRatio))
		}
	case RequestedToCapacityRatio:
		if s.RequestedToCapacityRatio == nil || len(s.RequestedToCapacityRatio.Shape) == 0 {
			errs = append(errs, errors.New("scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified"))
		} else {
			errs = append(errs, validateShape(s.RequestedToCapacityRatio.Shape)...)
		}
	default:
		errs = append(errs, fmt.Errorf("scoringStrategy.type: Unsupported value: %q: supported values: %q, %q, %q", s.Type, LeastAllocated, MostAllocated, RequestedToCapacityRatio))
	}
	seen := map[corev1.ResourceName]bool{}
	for i, r := range s.Resources {
		if r.Weight < 1 || r.Weight > 100 {
			errs = append(errs, fmt.Errorf("scoringStrategy.resources[%d].weight: Invalid value: %d: resource weight of %s should be in a range 1-100", i, r.Weight, r.Name))
		}
		if r.Name == "" {
			errs = append(errs, fmt.Errorf("scoringStrategy.resources[%d].name: Required value", i))
		}
		if seen[r.Name] {
			errs = append(errs, fmt.Errorf("scoringStrategy.resources[%d].name: Duplicate value: %q", i, r.Name))
		}
		seen[r.Name] = true
	}
	return errors.Join(errs...)
}

func validateShape(shape []UtilizationShapePoint) []error {
	var errs []error
	for i, p := range shape {
		if p.Utilization < 0 || p.Utilization > 100 {
			errs = append(errs, fmt.Errorf("shape[%d].utilization: Invalid value: %d: not in valid range [0, 100]", i, p.Utilization))
		}
		if p.Score < 0 || p.Score > maxCustomPriorityScore {
			errs = append(errs, fmt.Errorf("shape[%d].score: Invalid value: %d: not in valid range [0, %d]", i, p.Score, maxCustomPriorityScore))
		}
		if i > 0 && p.Utilization <= shape[i-1].Utilization {
			errs = append(errs, fmt.Errorf("shape[%d].utilization: Invalid value: %d: utilization values must be sorted in increasing order", i, p.Utilization))
		}
	}
	return errs
}

// scorer turns requested and allocatable amounts (one per resource, in
// the order of the strategy's resources) into a 0..100 score.
type scorer func(requested, allocatable []int64) int64

func newScorer(s *ScoringStrategy) scorer {
	weights := make([]int64, len(s.Resources))
	for i, r := range s.Resources {
		weights[i] = r.Weight
	}
	switch s.Type {
	case MostAllocated:
		return weightedAverage(weights, mostRequestedScore)
	case RequestedToCapacityRatio:
		return requestedToCapacityRatioScorer(weights, s.RequestedToCapacityRatio.Shape)
	default:
		return weightedAverage(weights, leastRequestedScore)
	}
}

// weightedAverage averages per-resource scores by weight over the
// resources the node has (floor, as upstream).
func weightedAverage(weights []int64, score func(requested, capacity int64) int64) scorer {
	return func(requested, allocatable []int64) int64 {
		var sum, weightSum int64
		for i := range requested {
			if allocatable[i] == 0 {
				continue
			}
			sum += score(requested[i], allocatable[i]) * weights[i]
			weightSum += weights[i]
		}
		if weightSum == 0 {
			return 0
		}
		return sum / weightSum
	}
}

func mostRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	// Pods without requests count the defaults, which may exceed capacity.
	requested = min(requested, capacity)
	return requested * framework.MaxNodeScore / capacity
}

// requestedToCapacityRatioScorer follows the broken-line curve through the
// shape's points (scores scaled to 0..100) and averages by weight the
// resources that score above zero, rounding.
func requestedToCapacityRatioScorer(weights []int64, shape []UtilizationShapePoint) scorer {
	curve := func(p int64) int64 {
		for i := range shape {
			if p <= int64(shape[i].Utilization) {
				if i == 0 {
					return int64(shape[0].Score) * (framework.MaxNodeScore / maxCustomPriorityScore)
				}
				u0, u1 := int64(shape[i-1].Utilization), int64(shape[i].Utilization)
				s0 := int64(shape[i-1].Score) * (framework.MaxNodeScore / maxCustomPriorityScore)
				s1 := int64(shape[i].Score) * (framework.MaxNodeScore / maxCustomPriorityScore)
				return s0 + (s1-s0)*(p-u0)/(u1-u0)
			}
		}
		return int64(shape[len(shape)-1].Score) * (framework.MaxNodeScore / maxCustomPriorityScore)
	}
	return func(requested, allocatable []int64) int64 {
		var sum, weightSum int64
		for i := range requested {
			if allocatable[i] == 0 {
				continue
			}
			var s int64
			if requested[i] > allocatable[i] {
				s = curve(100)
			} else {
				s = curve(requested[i] * 100 / allocatable[i])
			}
			if s > 0 {
				sum += s * weights[i]
				weightSum += weights[i]
			}
		}
		if weightSum == 0 {
			return 0
		}
		return int64(math.Round(float64(sum) / float64(weightSum)))
	}
}

// requestedAndAllocatable returns, per resource, what the node would have
// requested with the pod and its allocatable, as upstream: cpu and memory
// with the non-zero defaults, extended resources only when the pod asks.
func requestedAndAllocatable(resources []ResourceSpec, pod *framework.PodInfo, ni *framework.NodeInfo) ([]int64, []int64) {
	req := make([]int64, len(resources))
	alloc := make([]int64, len(resources))
	for i, r := range resources {
		switch r.Name {
		case corev1.ResourceCPU:
			req[i], alloc[i] = ni.NonZeroRequested.MilliCPU+pod.NonZeroRequests.MilliCPU, ni.Allocatable.MilliCPU
		case corev1.ResourceMemory:
			req[i], alloc[i] = ni.NonZeroRequested.Memory+pod.NonZeroRequests.Memory, ni.Allocatable.Memory
		case corev1.ResourceEphemeralStorage:
			req[i], alloc[i] = ni.Requested.EphemeralStorage+pod.Requests.EphemeralStorage, ni.Allocatable.EphemeralStorage
		default:
			podReq := pod.Requests.Scalar[r.Name]
			if a, ok := ni.Allocatable.Scalar[r.Name]; ok && podReq > 0 {
				req[i], alloc[i] = ni.Requested.Scalar[r.Name]+podReq, a
			}
		}
	}
	return req, alloc
}
