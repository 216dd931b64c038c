package server

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// LocalPathStorageClass is the default StorageClass skiff has out of the
// box, as k3s's local-path: directories on the node the scheduler chose,
// made and removed by that node's kubelet (docs/storage.md).
//
// Upstream ships a default class as an addon that the addon manager creates
// when missing (EnsureExists) and k3s as a manifest its deploy controller
// applies at start; skiff's API server creates it when missing at start, as
// it does the system PriorityClasses, and otherwise leaves it alone: an
// administrator may edit it, or turn it off with
// --local-path-storage-class=false.
func LocalPathStorageClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "local-path",
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       "skiff.dev/local-path",
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		// The size of a local-path volume is not enforced, so growing a
		// claim is only a matter of recording it (docs/storage.md).
		AllowVolumeExpansion: ptr.To(true),
	}
}
