// Package storage tests the storage controllers (persistentvolume-binder,
// the claim and volume protection controllers, ephemeral-volume) against a
// real API server, with its StorageObjectInUseProtection and
// DefaultStorageClass admission and its default local-path class. No
// kubelet or scheduler runs: the tests play them where needed.
package storage
