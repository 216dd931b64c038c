// Package defaultpreemption is upstream's DefaultPreemption PostFilter
// plugin: when a pod fits no node, it dry-runs the nodes that rejected the
// pod for reasons removing pods could fix, finds on each the fewest, least
// important pods of lower priority whose removal lets the pod fit
// (counting pods nominated to the node), picks the node by upstream's
// criteria, marks the victims DisruptionTarget, deletes them, records a
// Preempted event on each, clears the nominations of lower-priority pods
// to that node, and nominates it for the pod (status.nominatedNodeName),
// which is retried once the victims are gone.
//
// Not implemented: PodDisruptionBudgets are not consulted (upstream
// prefers victims whose eviction violates none).
package defaultpreemption
