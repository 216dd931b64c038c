package eviction

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// usageFunc returns a pod's usage and whether it is known.
type usageFunc func(pod *corev1.Pod) (PodUsage, bool)

// cmpFunc compares two pods: negative when p1 is evicted before p2.
type cmpFunc func(p1, p2 *corev1.Pod) int

// rankFunc sorts pods in eviction order.
type rankFunc func(pods []*corev1.Pod, usage usageFunc)

// fsPart is a part of a pod's local storage.
type fsPart int

const (
	fsRoot fsPart = iota
	fsLogs
	fsVolumes
)

// orderedBy sorts with the first comparison that tells the pods apart.
func orderedBy(cmps ...cmpFunc) func(pods []*corev1.Pod) {
	return func(pods []*corev1.Pod) {
		sort.SliceStable(pods, func(i, j int) bool {
			for _, cmp := range cmps {
				if r := cmp(pods[i], pods[j]); r != 0 {
					return r < 0
				}
			}
			return false
		})
	}
}

// cmpBool puts true before false.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !b:
		return -1
	default:
		return 1
	}
}

// podPriority is the pod's priority, 0 when unset.
func podPriority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// byPriority puts lower priority first.
func byPriority(p1, p2 *corev1.Pod) int {
	a, b := podPriority(p1), podPriority(p2)
	switch {
	case a == b:
		return 0
	case a > b:
		return 1
	default:
		return -1
	}
}

// podRequest is the pod's effective request of a resource as the scheduler
// and the quota evaluator size it (k8s.io/component-helpers/resource's
// PodRequests: containers and sidecars, at least each init container's
// peak, plus the pod overhead). Inodes and PIDs cannot be requested: zero.
func podRequest(pod *corev1.Pod, name corev1.ResourceName) resource.Quantity {
	if name != corev1.ResourceMemory && name != corev1.ResourceEphemeralStorage {
		return resource.Quantity{Format: resource.BinarySI}
	}
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{SkipPodLevelResources: true})
	if q, ok := reqs[name]; ok {
		return q
	}
	return resource.Quantity{Format: resource.BinarySI}
}

func memoryUsage(u PodUsage) *resource.Quantity {
	return resource.NewQuantity(int64(u.MemoryWorkingSet), resource.BinarySI)
}

// diskUsage is the pod's usage of bytes (ephemeral-storage) or inodes on
// the given parts of its local storage.
func diskUsage(u PodUsage, parts []fsPart, name corev1.ResourceName) *resource.Quantity {
	var total uint64
	inodes := name == ResourceInodes
	for _, p := range parts {
		switch p {
		case fsRoot:
			for _, c := range u.Containers {
				total += pick(inodes, c.RootfsInodes, c.RootfsBytes)
			}
		case fsLogs:
			for _, c := range u.Containers {
				total += pick(inodes, c.LogsInodes, c.LogsBytes)
			}
		case fsVolumes:
			total += pick(inodes, u.VolumesInodes, u.VolumesBytes)
		}
	}
	if inodes {
		return resource.NewQuantity(int64(total), resource.DecimalSI)
	}
	return resource.NewQuantity(int64(total), resource.BinarySI)
}

func pick(cond bool, a, b uint64) uint64 {
	if cond {
		return a
	}
	return b
}

// withUsage compares two pods by their usage; a pod without usage goes
// first, as upstream does.
func withUsage(usage usageFunc, cmp func(u1, u2 PodUsage, p1, p2 *corev1.Pod) int) cmpFunc {
	return func(p1, p2 *corev1.Pod) int {
		u1, ok1 := usage(p1)
		u2, ok2 := usage(p2)
		if !ok1 || !ok2 {
			return cmpBool(!ok1, !ok2)
		}
		return cmp(u1, u2, p1, p2)
	}
}

// exceeds puts pods whose usage exceeds their request first.
func exceeds(usage usageFunc, name corev1.ResourceName, used func(PodUsage) *resource.Quantity) cmpFunc {
	return withUsage(usage, func(u1, u2 PodUsage, p1, p2 *corev1.Pod) int {
		r1, r2 := podRequest(p1, name), podRequest(p2, name)
		return cmpBool(used(u1).Cmp(r1) > 0, used(u2).Cmp(r2) > 0)
	})
}

// aboveRequest puts the pod using more above its request first.
func aboveRequest(usage usageFunc, name corev1.ResourceName, used func(PodUsage) *resource.Quantity) cmpFunc {
	return withUsage(usage, func(u1, u2 PodUsage, p1, p2 *corev1.Pod) int {
		a, b := used(u1), used(u2)
		a.Sub(podRequest(p1, name))
		b.Sub(podRequest(p2, name))
		return b.Cmp(*a)
	})
}

// rankMemory: pods using more memory than requested, then lower priority,
// then more memory above the request.
func rankMemory(pods []*corev1.Pod, usage usageFunc) {
	orderedBy(
		exceeds(usage, corev1.ResourceMemory, memoryUsage),
		byPriority,
		aboveRequest(usage, corev1.ResourceMemory, memoryUsage),
	)(pods)
}

// rankDisk is rankMemory for bytes or inodes of the given storage parts.
func rankDisk(parts []fsPart, name corev1.ResourceName) rankFunc {
	used := func(u PodUsage) *resource.Quantity { return diskUsage(u, parts, name) }
	return func(pods []*corev1.Pod, usage usageFunc) {
		orderedBy(exceeds(usage, name, used), byPriority, aboveRequest(usage, name, used))(pods)
	}
}

// rankPIDs: lower priority, then more processes.
func rankPIDs(pods []*corev1.Pod, usage usageFunc) {
	orderedBy(byPriority, withUsage(usage, func(u1, u2 PodUsage, _, _ *corev1.Pod) int {
		switch {
		case u1.Processes == u2.Processes:
			return 0
		case u1.Processes > u2.Processes:
			return -1
		default:
			return 1
		}
	}))(pods)
}

// rankFuncs are the ranking functions per signal. With a dedicated image
// filesystem, nodefs pressure counts logs and volumes and imagefs pressure
// counts the containers' writable layers; otherwise both count everything.
func rankFuncs(dedicatedImageFS bool) map[Signal]rankFunc {
	nodeParts, imageParts := []fsPart{fsRoot, fsLogs, fsVolumes}, []fsPart{fsRoot, fsLogs, fsVolumes}
	if dedicatedImageFS {
		nodeParts, imageParts = []fsPart{fsLogs, fsVolumes}, []fsPart{fsRoot}
	}
	return map[Signal]rankFunc{
		SignalMemoryAvailable:   rankMemory,
		SignalNodeFsAvailable:   rankDisk(nodeParts, corev1.ResourceEphemeralStorage),
		SignalNodeFsInodesFree:  rankDisk(nodeParts, ResourceInodes),
		SignalImageFsAvailable:  rankDisk(imageParts, corev1.ResourceEphemeralStorage),
		SignalImageFsInodesFree: rankDisk(imageParts, ResourceInodes),
		SignalPIDAvailable:      rankPIDs,
	}
}
