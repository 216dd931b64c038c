package eviction

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Signal is an eviction signal, named as upstream names it.
type Signal string

// The signals the manager observes.
const (
	SignalMemoryAvailable   Signal = "memory.available"
	SignalNodeFsAvailable   Signal = "nodefs.available"
	SignalNodeFsInodesFree  Signal = "nodefs.inodesFree"
	SignalImageFsAvailable  Signal = "imagefs.available"
	SignalImageFsInodesFree Signal = "imagefs.inodesFree"
	SignalPIDAvailable      Signal = "pid.available"
)

// Resources the manager reclaims that are not core resource names
// (upstream's internal names).
const (
	ResourceInodes corev1.ResourceName = "inodes"
	ResourcePIDs   corev1.ResourceName = "pids"
)

// Reason is the reason given to evicted pods, their events and pods
// refused by Admit.
const Reason = "Evicted"

// signalResource is the resource each signal measures.
var signalResource = map[Signal]corev1.ResourceName{
	SignalMemoryAvailable:   corev1.ResourceMemory,
	SignalNodeFsAvailable:   corev1.ResourceEphemeralStorage,
	SignalNodeFsInodesFree:  ResourceInodes,
	SignalImageFsAvailable:  corev1.ResourceEphemeralStorage,
	SignalImageFsInodesFree: ResourceInodes,
	SignalPIDAvailable:      ResourcePIDs,
}

// signalCondition is the node condition each signal drives.
var signalCondition = map[Signal]corev1.NodeConditionType{
	SignalMemoryAvailable:   corev1.NodeMemoryPressure,
	SignalNodeFsAvailable:   corev1.NodeDiskPressure,
	SignalNodeFsInodesFree:  corev1.NodeDiskPressure,
	SignalImageFsAvailable:  corev1.NodeDiskPressure,
	SignalImageFsInodesFree: corev1.NodeDiskPressure,
	SignalPIDAvailable:      corev1.NodePIDPressure,
}

// Threshold is one hard eviction threshold: the signal is under pressure
// when its available amount is below Quantity, or below Percentage of its
// capacity when Quantity is nil.
type Threshold struct {
	Signal     Signal
	Quantity   *resource.Quantity
	Percentage float64
}

// Value is the threshold's amount for a given capacity, as upstream
// computes it (GetThresholdQuantity).
func (t Threshold) Value(capacity *resource.Quantity) *resource.Quantity {
	if t.Quantity != nil {
		q := t.Quantity.DeepCopy()
		return &q
	}
	var c int64
	if capacity != nil {
		c = capacity.Value()
	}
	return resource.NewQuantity(int64(float64(c)*t.Percentage), resource.BinarySI)
}

// String is the threshold in --eviction-hard syntax.
func (t Threshold) String() string {
	if t.Quantity != nil {
		return string(t.Signal) + "<" + t.Quantity.String()
	}
	return string(t.Signal) + "<" + formatPercent(t.Percentage)
}

// Observation is what was observed of one signal.
type Observation struct {
	Available *resource.Quantity
	Capacity  *resource.Quantity
}

// Observations are the signals observed in one pass.
type Observations struct {
	Signals map[Signal]Observation
	// DedicatedImageFS is true when the image filesystem is another
	// filesystem than the node filesystem. It decides which pod usage
	// counts for each disk signal and which reclaim functions run.
	DedicatedImageFS bool
}

// ContainerUsage is what one container of a pod uses.
type ContainerUsage struct {
	Name string
	// MemoryWorkingSet is the container's memory usage minus inactive
	// file pages, in bytes.
	MemoryWorkingSet uint64
	// RootfsBytes and RootfsInodes are the container's writable layer.
	RootfsBytes, RootfsInodes uint64
	// LogsBytes and LogsInodes are the container's log files.
	LogsBytes, LogsInodes uint64
}

// PodUsage is what one pod uses, as the PodUsage callback reports it.
type PodUsage struct {
	// MemoryWorkingSet is the pod cgroup's working set in bytes.
	MemoryWorkingSet uint64
	// VolumesBytes and VolumesInodes are the pod's local volumes
	// (emptyDir on disk, configMap, secret, downwardAPI, projected).
	VolumesBytes, VolumesInodes uint64
	// Processes is the number of processes (tasks) in the pod's cgroup.
	Processes uint64
	// Containers are the pod's containers.
	Containers []ContainerUsage
}
