// Package deployment is the Deployment controller: it rolls a Deployment's
// pod template out through ReplicaSets, as upstream's pkg/controller/deployment
// does.
//
// Walkthrough: events on Deployments, ReplicaSets and (for Recreate) pods
// put Deployment keys on a rate-limited work queue. A sync claims the
// ReplicaSets that match the Deployment's selector (adopting orphans,
// releasing the ones that stopped matching), then:
//
//   - paused, or replicas changed (a "scaling event"): scale the existing
//     ReplicaSets, spreading the change proportionally across the old and the
//     new ones during a rollout;
//   - a rollback requested with the deprecated.deployment.rollback.to
//     annotation: copy that revision's template into the Deployment;
//   - otherwise roll out with the strategy: RollingUpdate (scale the new
//     ReplicaSet up within maxSurge, the old ones down within
//     maxUnavailable) or Recreate (scale old to zero, wait for their pods to
//     go, then scale the new one up).
//
// The new ReplicaSet is the one whose template equals the Deployment's
// (ignoring the pod-template-hash label); it is created as
// "<deployment>-<hash>" when none exists. Revisions live in the
// deployment.kubernetes.io/revision annotations; a rollback reuses the old
// ReplicaSet and gives it the next revision. Status and the Progressing and
// Available conditions are written only when they change; the progress
// deadline is checked by requeueing the Deployment when it would expire.
package deployment
