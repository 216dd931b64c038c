// Package controllerutil holds what the workload controllers of
// skiff-controller-manager share, written after upstream's
// pkg/controller/controller_utils.go and controller_ref_manager.go:
//
//   - Expectations: per controller key, how many creations and which
//     deletions the controller is still waiting to see in its informer, so a
//     burst of events never makes it act twice on the same shortfall.
//   - PodControl: creates pods from a template with a controller
//     ownerReference and records SuccessfulCreate / SuccessfulDelete /
//     FailedCreate / FailedDelete events on the owner.
//   - ActivePodsWithRanks: the order in which a scale-down deletes pods.
//   - SlowStartBatch: calls a function in parallel batches of 1, 2, 4, ...
//     and stops at the first batch that fails.
//   - RefManager: adoption of matching orphans and release of owned objects
//     that no longer match the controller's selector.
//   - The controller-UID index (AddControllerUIDIndex, ByController,
//     Orphans) so a sync finds its objects without scanning the cache.
//   - Pod helpers: IsPodReady, IsPodAvailable, IsPodActive.
//
// A controller typically, in its sync: reads its object from the lister,
// checks Expectations.Satisfied, collects its pods with ByController and
// Orphans, claims them with a RefManager, and creates or deletes pods through
// PodControl inside SlowStartBatch after recording what it expects.
package controllerutil
