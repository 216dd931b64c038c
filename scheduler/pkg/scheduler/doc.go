// Package scheduler is the scheduling loop: informers feed the cache (bound
// pods, nodes) and the queue (this scheduler's pending pods); scheduleOne
// pops a pod, filters and scores the nodes of a cache snapshot, assumes the
// pod onto the winner and binds it through pods/binding in the background.
// A pod that fits nowhere gets PodScheduled=False (reason Unschedulable) and
// a FailedScheduling event, and waits in the queue until the cluster changes.
package scheduler
