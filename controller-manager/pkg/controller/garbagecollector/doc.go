// Package garbagecollector holds the garbage collector: it deletes objects
// whose owners are gone, following metadata.ownerReferences, for every
// resource the server serves with the list, watch and delete verbs.
//
// How it works. Discovery lists the resources (again every resync period,
// so kinds served later are picked up); a metadata informer watches each.
// Their events build a graph of nodes keyed by UID, each with its owners
// and its dependents; an owner that was not observed yet is a "virtual"
// node. Two work queues act on the graph:
//
//   - attemptToDelete takes a node and decides from live GETs (the cache
//     may be stale): an object none of whose owners exists any more is
//     deleted (with the propagation its own finalizers ask for); one that
//     still has an owner loses only the references to absent owners; a
//     virtual owner that does not exist is removed from the graph and its
//     dependents are looked at.
//   - attemptToOrphan takes an owner being deleted with the `orphan`
//     finalizer, removes its reference from every dependent, then removes
//     the finalizer.
//
// Foreground deletion: the API server marks the owner with deletionTimestamp
// and the `foregroundDeletion` finalizer; the collector deletes its
// dependents (foreground again for those that have dependents of their own)
// and removes the finalizer once no dependent with blockOwnerDeletion is
// left. Background deletion: the API server deletes the owner at once and
// the dependents, now dangling, are deleted. Events are not collected.
package garbagecollector
