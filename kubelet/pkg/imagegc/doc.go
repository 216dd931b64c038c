// Package imagegc is the kubelet's image garbage collector, as upstream's
// (pkg/kubelet/images/image_gc_manager.go of Kubernetes v1.32).
//
// The manager keeps a record per image ID: when it was first detected, when
// a container last used it, and its size. Every 5 minutes (Start), when the
// image filesystem is at least --image-gc-high-threshold percent full
// (85 by default), it removes images that no container uses, least
// recently used first (then earliest detected), skipping images detected
// less than --image-minimum-gc-age ago (2 minutes) and pinned images,
// until the freed bytes bring usage down to --image-gc-low-threshold (80).
// If not enough could be freed it records a FreeDiskSpaceFailed event on
// the node; a periodic collection that fails twice in a row records
// ImageGCFailed. DeleteUnusedImages removes every unused image old enough,
// whatever the usage; the eviction manager calls it under disk pressure.
//
// The container runtime and the filesystem statistics come through the
// Runtime interface and the ImageFS function.
package imagegc
