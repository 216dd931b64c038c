// Package replicaset is the ReplicaSet controller: it keeps the number of
// active pods of each ReplicaSet at spec.replicas, as upstream's
// pkg/controller/replicaset does.
//
// Walkthrough: informer events on ReplicaSets and pods put ReplicaSet keys
// on a rate-limited work queue. A sync reads the ReplicaSet from the cache,
// gathers its pods through the controller-UID index (the pods it owns and
// the orphans of its namespace), adopts matching orphans and releases owned
// pods that stopped matching, then, if its expectations are satisfied,
// creates the missing pods (generateName "<rs>-", a controller
// ownerReference) in slow-start batches or deletes the surplus in upstream's
// order, at most BurstReplicas per sync. It records what it expects to see
// so a burst of pod events does not make it act twice, and it writes
// status (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas,
// observedGeneration, the ReplicaFailure condition) only when it changed.
//
// The controller reads and writes its objects through a Kind, so the same
// code keeps ReplicationControllers too (NewBaseController; package
// replicationcontroller converts them to ReplicaSets and back, as upstream's
// replication manager does).
package replicaset
