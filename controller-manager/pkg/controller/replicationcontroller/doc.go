// Package replicationcontroller is the ReplicationController controller: it
// keeps the number of active pods of each core/v1 ReplicationController at
// spec.replicas. As upstream's pkg/controller/replication, it is the
// ReplicaSet controller (package replicaset) run over ReplicationControllers
// converted to ReplicaSets: the equality-based selector becomes matchLabels,
// the template pointer a template, and the status converts field for field,
// back again when it is written. Pods, events and conditions are the
// ReplicaSet controller's, recorded on the ReplicationController.
package replicationcontroller
