// Package persistentvolume is the PersistentVolume binder
// ("persistentvolume-binder" in --controllers), after upstream's
// pkg/controller/volume/persistentvolume.
//
// Walkthrough: informer events on claims and volumes put "claim:<ns>/<name>"
// and "volume:<name>" keys on one rate-limited queue; every claim and volume
// is also requeued each SyncPeriod, as upstream's periodic resync does.
//
// A claim sync first gives a claim without a class the default
// StorageClass (upstream's retroactive default). An unbound claim is
// matched against the volumes: one pre-bound to it (spec.claimRef naming
// it, or its spec.volumeName), else the smallest Available volume of the
// same class and volume mode whose access modes include the claim's, whose
// labels match its selector and whose capacity covers its request. A match
// is bound both ways: the volume gets spec.claimRef (and
// pv.kubernetes.io/bound-by-controller when the binder chose it) and phase
// Bound, the claim spec.volumeName, pv.kubernetes.io/bind-completed and
// phase Bound with the volume's capacity and access modes. Without a match,
// a claim of a WaitForFirstConsumer class waits for the scheduler's
// volume.kubernetes.io/selected-node annotation; a claim of a class with a
// provisioner is handed to that provisioner through the
// volume.kubernetes.io/storage-provisioner annotations (the external
// provisioner creates a volume pre-bound to the claim, which the next sync
// binds); a claim without a class gets FailedBinding. A bound claim whose
// volume went away, or is bound to another claim, is Lost.
//
// A volume sync keeps its phase: Available without a claimRef, Bound while
// its claim is bound to it, Released once its claim is gone. A Released
// volume is reclaimed by its policy: Retain keeps it Released; Delete leaves
// a provisioned volume (pv.kubernetes.io/provisioned-by) to its
// provisioner and fails any other one (no in-tree deleter); Recycle fails
// (no recycler), each with upstream's event.
package persistentvolume
