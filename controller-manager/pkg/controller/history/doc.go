// Package history keeps the ControllerRevisions of a controller, as
// upstream's pkg/controller/history: the StatefulSet and DaemonSet
// controllers record each distinct pod template they have rolled out as an
// immutable ControllerRevision (its data a patch that restores the
// template) so that rolling back to an old template reuses the revision
// and its pods instead of creating new ones.
//
// A revision is named "<parent>-<hash>", where hash is the FNV-32 hash of
// its data (with the parent's collisionCount, when a revision of that name
// but other data exists) and is also its ControllerRevisionHashLabel.
// Revisions carry the parent's template labels and a controller
// ownerReference to the parent; the parent adopts matching orphans and
// releases revisions that stopped matching, like pods. revision numbers grow
// by one with each new (or re-used) template; SortControllerRevisions
// orders by them.
package history
