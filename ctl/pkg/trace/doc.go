// Package trace assembles a pod's creation path, step by step, from what each
// component recorded through the API: the pod's creationTimestamp and
// managedFields (the API server), its owner's SuccessfulCreate event (the
// controller-manager), the PodScheduled condition and Scheduled /
// FailedScheduling events (the scheduler), the kubelet's status.startTime,
// PodReadyToStartContainers, Pulling/Pulled, Created/Started events and the
// ContainersReady and Ready conditions, and the EndpointSlices that list the
// pod (the endpointslice controller). It also explains, in one paragraph, why
// a pod is not running (Why).
//
// Each component stamps times with its own machine's clock, so the steps are
// ordered by causality (a pod cannot be bound before it is stored) rather than
// by time alone: a step stamped earlier than the step it depends on is moved
// to its predecessor's time and marked as skewed, so the steps' durations
// always add up to the whole.
package trace
