// Package podgc holds the pod garbage collector. Every period it deletes:
// terminated pods (Succeeded or Failed) above the threshold, oldest first
// (evicted ones before the rest); pods bound to a node that no longer
// exists, once the node has been missing for the quarantine time and a live
// GET confirms it is gone; terminating pods that were never scheduled; and
// terminating pods on a node tainted out-of-service that is not Ready.
// Pods that are not yet terminal are first marked Failed with the
// DisruptionTarget condition, as upstream does.
package podgc
