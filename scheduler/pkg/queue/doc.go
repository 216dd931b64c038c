// Package queue is the scheduling queue: pods waiting for a node.
//
// Three sub-queues, as upstream has them: activeQ (a heap, highest
// spec.priority first, then oldest), backoffQ (pods that failed recently,
// ordered by when their back-off ends; flushed to activeQ every second) and
// unschedulablePods (pods no node fits; moved back when the cluster changes
// in a way that may help: a node added or changed, a bound pod deleted, or
// after five minutes regardless). A pod that failed while the cluster
// changed during its own cycle goes to backoffQ rather than waiting for the
// next change.
package queue
