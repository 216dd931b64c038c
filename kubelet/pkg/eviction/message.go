package eviction

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Upstream's message formats; each part ends with ". ".
const (
	nodeLowMessageFmt       = "The node was low on resource: %v. "
	nodeConditionMessageFmt = "The node had condition: %v. "
	thresholdMetMessageFmt  = "Threshold quantity: %v, available: %v. "
	containerMessageFmt     = "Container %s was using %s, request is %s, has larger consumption of %v. "
)

// Annotations put on the eviction event, as upstream.
const (
	OffendingContainersKey      = "offending_containers"
	OffendingContainersUsageKey = "offending_containers_usage"
	StarvedResourceKey          = "starved_resource"
)

// evictionMessage is upstream's message for evicting pod to reclaim
// resource, and the event's annotations.
func evictionMessage(res corev1.ResourceName, pod *corev1.Pod, usage usageFunc, thresholds []Threshold, obs Observations) (string, map[string]string) {
	msg := fmt.Sprintf(nodeLowMessageFmt, res)
	if quantity, available := thresholdMetInfo(res, thresholds, obs); quantity != nil && available != nil {
		msg += fmt.Sprintf(thresholdMetMessageFmt, quantity, available)
	}
	annotations := map[string]string{StarvedResourceKey: string(res)}
	u, ok := usage(pod)
	if !ok {
		return msg, annotations
	}
	var names, usages []string
	for _, cu := range u.Containers {
		for _, c := range pod.Spec.Containers {
			if c.Name != cu.Name {
				continue
			}
			used := containerUsage(res, cu)
			req := c.Resources.Requests[res]
			if used != nil && used.Cmp(req) > 0 {
				msg += fmt.Sprintf(containerMessageFmt, c.Name, used.String(), req.String(), res)
				names = append(names, c.Name)
				usages = append(usages, used.String())
			}
		}
	}
	annotations[OffendingContainersKey] = strings.Join(names, ",")
	annotations[OffendingContainersUsageKey] = strings.Join(usages, ",")
	return msg, annotations
}

// containerUsage is a container's usage of memory or ephemeral storage
// (writable layer plus logs); nil for other resources.
func containerUsage(res corev1.ResourceName, c ContainerUsage) *resource.Quantity {
	switch res {
	case corev1.ResourceMemory:
		return resource.NewQuantity(int64(c.MemoryWorkingSet), resource.BinarySI)
	case corev1.ResourceEphemeralStorage:
		return resource.NewQuantity(int64(c.RootfsBytes+c.LogsBytes), resource.BinarySI)
	}
	return nil
}

// thresholdMetInfo is the quantity and the observed availability of the
// first threshold on res.
func thresholdMetInfo(res corev1.ResourceName, thresholds []Threshold, obs Observations) (*resource.Quantity, *resource.Quantity) {
	for _, t := range thresholds {
		if signalResource[t.Signal] != res {
			continue
		}
		if o, ok := obs.Signals[t.Signal]; ok {
			return t.Value(o.Capacity), o.Available
		}
	}
	return nil, nil
}
