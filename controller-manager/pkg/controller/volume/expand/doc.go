// Package expand is the volume expansion controller
// ("persistentvolume-expander" in --controllers), after upstream's
// pkg/controller/volume/expand, for the volumes skiff has.
//
// The API server's PersistentVolumeClaimResize admission lets a bound
// claim's request grow only when its StorageClass has allowVolumeExpansion.
// A bound claim whose request is above its status.capacity is expanded:
// a volume of skiff's local-path provisioner, whose size is not enforced
// on disk, is grown by recording it - the volume's spec.capacity, then the
// claim's status.capacity (events Resizing, VolumeResizeSuccessful); a
// volume of any other provisioner is handed to that provisioner's resizer
// through the volume.kubernetes.io/storage-resizer annotation
// (ExternalExpanding), as upstream does for CSI volumes.
package expand
