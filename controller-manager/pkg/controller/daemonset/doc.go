// Package daemonset is the DaemonSet controller: it runs one pod of each
// DaemonSet on every node that should run it, as upstream's
// pkg/controller/daemon does (v1.32).
//
// Walkthrough: informer events on DaemonSets, their pods, their
// ControllerRevisions and nodes put DaemonSet keys on a rate-limited work
// queue (a node event only for the DaemonSets whose placement it changes).
// A sync reads the DaemonSet and the nodes from the cache, finds or
// creates the ControllerRevision that holds its template (the current
// revision, whose hash labels new pods), then, if its expectations are
// satisfied:
//
//   - manage judges each node with the scheduler's rules (node name, node
//     selector, required node affinity, taints against the template's
//     tolerations plus the daemon tolerations, through
//     k8s.io/component-helpers) and creates the missing pods, each with
//     required node affinity on metadata.name so the scheduler binds it to
//     its node, and deletes the pods of nodes that should not run them,
//     surplus pods, and failed pods (with a per-node back-off);
//   - rollingUpdate replaces old-revision pods within maxUnavailable, or
//     with maxSurge new pods beside old ones; OnDelete leaves them;
//   - cleanupHistory deletes old revisions beyond revisionHistoryLimit
//     that no pod runs.
//
// Finally it writes status (desired, current, misscheduled, ready,
// available, unavailable, updated, observedGeneration) when it changed.
// Rollback (kubectl rollout undo) sets the template back to an old
// revision's; that revision becomes current again with a new number.
package daemonset
