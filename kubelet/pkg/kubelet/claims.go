package kubelet

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Claim implements pod.ClaimReader.
func (o Objects) Claim(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	return o.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
}

// Volume implements pod.ClaimReader.
func (o Objects) Volume(ctx context.Context, name string) (*corev1.PersistentVolume, error) {
	return o.Client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
}
