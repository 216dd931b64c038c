// Package disruption is the disruption controller: it keeps the status of
// each PodDisruptionBudget current, as upstream's pkg/controller/disruption
// does, so the API server's pods/eviction can decide from it.
//
// Walkthrough: events on PodDisruptionBudgets, and on the pods their
// selectors match, put budget keys on a rate-limited work queue. A sync
// lists the budget's pods in its namespace and computes:
//
//   - expectedPods: with an integer minAvailable, the number of selected
//     pods; otherwise the sum of the scales of the pods' controllers
//     (ReplicaSet, Deployment through its ReplicaSet, StatefulSet,
//     ReplicationController, and any other kind through its scale
//     subresource), pods without a controller left out;
//   - desiredHealthy: minAvailable, or expectedPods minus maxUnavailable,
//     percentages rounded up;
//   - currentHealthy: the pods that are Ready, not being deleted and not
//     recently evicted;
//   - disruptionsAllowed: currentHealthy - desiredHealthy, never below
//     zero, and zero while no pods are expected;
//   - disruptedPods: the evictions the API server recorded, dropped once
//     the pod is gone or being deleted, or after DeletionTimeout;
//
// and writes them, with observedGeneration and the DisruptionAllowed
// condition (SufficientPods or InsufficientPods), when they changed. A sync
// that fails (a pod whose controller cannot be found) sets
// disruptionsAllowed to zero with the condition's reason SyncFailed.
//
// A second loop watches pods for a True DisruptionTarget condition that no
// deletion followed (an eviction or a taint eviction that failed half-way)
// and sets it back to False after StalePodDisruptionTimeout, as upstream
// does; conditions the kubelet set and those of pods being deleted or
// finished are left alone.
package disruption
