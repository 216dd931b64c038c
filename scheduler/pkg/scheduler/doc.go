// Package scheduler is the scheduling loop: informers feed the cache (bound
// pods, nodes) and the queue (the pending pods of this scheduler's
// profiles); scheduleOne pops a pod, picks the framework of the profile its
// spec.schedulerName names, takes a cache snapshot (which the plugins see
// through the shared Handle), filters the nodes from a rotating start until
// upstream's percentage of feasible nodes is found, scores them, assumes
// the pod onto the winner and binds it through pods/binding in the
// background. A pod that fits nowhere runs the PostFilter plugins
// (preemption, which may nominate a node), gets PodScheduled=False (reason
// Unschedulable) and a FailedScheduling event, and waits in the queue until
// the cluster changes.
package scheduler
