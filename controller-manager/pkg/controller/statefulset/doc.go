// Package statefulset is the StatefulSet controller: it gives each
// StatefulSet spec.replicas pods with stable names and storage, as
// upstream's pkg/controller/statefulset (v1.32).
//
// Walkthrough: informer events on StatefulSets, their pods and the claims
// of their pods put set keys on a rate-limited work queue. A sync reads the
// set from the cache, adopts orphan ControllerRevisions and pods that match
// its selector (and, for pods, are named "<set>-<ordinal>") and releases
// owned pods that stopped matching. It then works out the revisions (see
// package history): the update revision holds the set's current template
// (a new revision, or an old one renumbered on a rollback) and the current
// revision is status.currentRevision.
//
// The pods of the ordinals [ordinals.start, start+replicas) are named
// "<set>-<ordinal>", with hostname the pod's name, subdomain
// spec.serviceName and the labels statefulset.kubernetes.io/pod-name,
// apps.kubernetes.io/pod-index and controller-revision-hash (the name of
// their revision). A missing pod is created at the current revision when
// a rolling update has not reached its ordinal (below the partition) and
// at the update revision otherwise, after its PersistentVolumeClaims
// ("<claim>-<set>-<ordinal>", from volumeClaimTemplates). Under
// OrderedReady each pod waits for its predecessors to be running, ready
// and available (minReadySeconds) and pods beyond the replicas are deleted
// highest ordinal first, one at a time; under Parallel all of this happens
// at once. Failed or succeeded pods are deleted and recreated.
//
// RollingUpdate then deletes the pods not at the update revision, from
// the highest ordinal down to the partition: one at a time, each after
// those above it are healthy, or, when rollingUpdate.maxUnavailable is
// set, as many as keep the unhealthy pods within it (upstream's
// MaxUnavailableStatefulSet behaviour). OnDelete leaves that to the user.
// The claims' ownerReferences follow persistentVolumeClaimRetentionPolicy
// (whenDeleted Delete: owned by the set; whenScaled Delete: owned by the
// pod once it is beyond the replicas), so the garbage collector deletes
// them with their owner. Status (replicas, readyReplicas, currentReplicas,
// updatedReplicas, availableReplicas, currentRevision, updateRevision,
// collisionCount, observedGeneration) is written when it changed, and
// revisions beyond revisionHistoryLimit that no pod uses are deleted.
//
// As upstream's, the controller keeps no expectations: pod names are
// fixed, so the API server refuses a second pod of a name (AlreadyExists,
// retried with back-off) and a deletion repeated from a stale cache is
// harmless.
package statefulset
