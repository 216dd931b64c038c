// Package protection holds the storage object in-use protection
// controllers, after upstream's pkg/controller/volume/pvcprotection and
// pvprotection ("persistentvolumeclaim-protection" and
// "persistentvolume-protection" in --controllers).
//
// The API server's StorageObjectInUseProtection admission puts the
// kubernetes.io/pvc-protection finalizer on every new claim and
// kubernetes.io/pv-protection on every new volume; these controllers add
// them to objects that predate it, and remove them from a deleted object
// once nothing uses it: a claim once no scheduled pod that has not finished
// mounts it (directly or as its generic ephemeral volume), a volume once it
// is no longer Bound. Until then the object stays, with its
// deletionTimestamp, and no data is lost.
package protection
