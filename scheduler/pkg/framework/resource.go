package framework

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// The requests that scoring assumes for a container that asks for nothing,
// as upstream's DefaultMilliCPURequest and DefaultMemoryRequest.
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024
)

// Resource is an amount of the resources the scheduler accounts for.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// AllowedPodNumber is only meaningful for allocatable.
	AllowedPodNumber int
	// Scalar holds extended resources (name -> value).
	Scalar map[corev1.ResourceName]int64
}

// NewResource builds a Resource from a ResourceList.
func NewResource(rl corev1.ResourceList) *Resource {
	r := &Resource{}
	r.Add(rl)
	return r
}

// Add adds a ResourceList.
func (r *Resource) Add(rl corev1.ResourceList) {
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			r.Memory += q.Value()
		case corev1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		case corev1.ResourcePods:
			r.AllowedPodNumber += int(q.Value())
		default:
			if IsScalarResourceName(name) {
				r.SetScalar(name, r.Scalar[name]+q.Value())
			}
		}
	}
}

// SetScalar sets one extended resource.
func (r *Resource) SetScalar(name corev1.ResourceName, v int64) {
	if r.Scalar == nil {
		r.Scalar = map[corev1.ResourceName]int64{}
	}
	r.Scalar[name] = v
}

// AddResource adds another Resource.
func (r *Resource) AddResource(o *Resource, sign int64) {
	r.MilliCPU += sign * o.MilliCPU
	r.Memory += sign * o.Memory
	r.EphemeralStorage += sign * o.EphemeralStorage
	for n, v := range o.Scalar {
		r.SetScalar(n, r.Scalar[n]+sign*v)
	}
}

// Clone copies r.
func (r *Resource) Clone() *Resource {
	c := *r
	if r.Scalar != nil {
		c.Scalar = make(map[corev1.ResourceName]int64, len(r.Scalar))
		for k, v := range r.Scalar {
			c.Scalar[k] = v
		}
	}
	return &c
}

// IsZero is true when no resource is requested.
func (r *Resource) IsZero() bool {
	return r.MilliCPU == 0 && r.Memory == 0 && r.EphemeralStorage == 0 && len(r.Scalar) == 0
}

// IsScalarResourceName is true for extended resources (a name with a
// domain that is not kubernetes.io) and hugepages, as upstream accounts them.
func IsScalarResourceName(name corev1.ResourceName) bool {
	s := string(name)
	if strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) {
		return true
	}
	native := !strings.Contains(s, "/") || strings.Contains(s, "kubernetes.io/")
	return !native && !strings.HasPrefix(s, "requests.")
}

// PodRequests returns what a pod requests, as upstream's scheduler asks
// k8s.io/component-helpers/resource: the sum over the regular containers
// and the restartable (sidecar) init containers, but at least what each
// ordinary init container needs together with the sidecars started before
// it, plus the pod overhead. nonMissing, when set, is added for a container
// that does not name that resource at all (scoring's defaults). Pod-level
// resources are skipped, as upstream does while its PodLevelResources gate
// is off (its default in 1.32).
func PodRequests(pod *corev1.Pod, nonMissing corev1.ResourceList) corev1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{
		NonMissingContainerRequests: nonMissing,
		SkipPodLevelResources:       true,
	})
}

// NonZeroDefaults are the requests scoring assumes for a container that
// names no cpu or memory request.
func NonZeroDefaults() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(DefaultMilliCPURequest, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(DefaultMemoryRequest, resource.BinarySI),
	}
}
