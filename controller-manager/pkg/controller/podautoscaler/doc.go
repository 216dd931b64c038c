// Package podautoscaler is the HorizontalPodAutoscaler controller, as
// upstream's pkg/controller/podautoscaler: every sync period it reads each
// HPA's target through the scale subresource (any kind that has one:
// Deployments, ReplicaSets, StatefulSets, ReplicationControllers, custom
// resources), measures the target's pods through the resource metrics API
// (metrics.k8s.io/v1beta1), computes the replica count each metric asks
// for (replica_calculator.go: the usage ratio against the target, a 10%
// tolerance, missing metrics and not-yet-ready pods counted against the
// direction of the change), takes the largest, stabilises it over the
// recent recommendations and limits its rate (behavior.go: the scale-down
// window, autoscaling/v2's behavior policies, or upstream's fixed rate
// without one), writes the new size to /scale and reports what it did in
// the HPA's status, conditions (AbleToScale, ScalingActive,
// ScalingLimited) and events, with upstream's reasons.
//
// Pods, Object and External metrics need the custom and external metrics
// APIs, which skiff does not serve: such a metric makes the HPA report
// ScalingActive False with the reason upstream gives for a failed read
// (FailedGetPodsMetric, ...), and a message that names the missing API.
package podautoscaler
