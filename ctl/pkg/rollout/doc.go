// Package rollout holds the logic of skiffctl rollout for Deployments:
// reading a rollout's progress from the Deployment's status and conditions
// (the messages kubectl rollout status prints), the revision history from
// the ReplicaSets the Deployment controls, the patch that rolls back to a
// revision (the ReplicaSet's pod template copied into the Deployment, as
// kubectl v1.32 does) and the patch that restarts the pods.
package rollout
