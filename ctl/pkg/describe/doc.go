// Package describe prints one object for people: its identity, labels and
// annotations, the chain of its owners (Pod <- ReplicaSet <- Deployment),
// its spec and status with readable field names, for Pods the timeline of
// their conditions (the path the pod took from creation to Ready), and the
// Events recorded about it.
package describe
