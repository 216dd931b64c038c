package integration

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The API server creates the default StorageClass local-path; a claim
// without a class gets it (DefaultStorageClass admission), a claim with
// storageClassName "" keeps it, and new claims and volumes carry the
// protection finalizers (StorageObjectInUseProtection admission).
func TestDefaultStorageClassAndProtectionFinalizers(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	var sc *storagev1.StorageClass
	if err := waitFor(t, func() (err error) {
		sc, err = c.StorageV1().StorageClasses().Get(ctx(t), "local-path", metav1.GetOptions{})
		return err
	}); err != nil {
		t.Fatalf("no local-path StorageClass: %v", err)
	}
	if sc.Provisioner != "skiff.dev/local-path" || sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" ||
		ptr.Deref(sc.VolumeBindingMode, "") != storagev1.VolumeBindingWaitForFirstConsumer ||
		ptr.Deref(sc.ReclaimPolicy, "") != corev1.PersistentVolumeReclaimDelete {
		t.Errorf("local-path: %+v", sc)
	}
	claim := func(name string, class *string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}}
	}
	got, err := c.CoreV1().PersistentVolumeClaims("default").Create(ctx(t), claim("defaulted", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(got.Spec.StorageClassName, "") != "local-path" || !slices.Contains(got.Finalizers, "kubernetes.io/pvc-protection") {
		t.Errorf("defaulted claim: class %v, finalizers %v", got.Spec.StorageClassName, got.Finalizers)
	}
	got, err = c.CoreV1().PersistentVolumeClaims("default").Create(ctx(t), claim("none", ptr.To("")), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(got.Spec.StorageClassName, "x") != "" {
		t.Errorf("claim with class \"\" got %q", *got.Spec.StorageClassName)
	}
	pv, err := c.CoreV1().PersistentVolumes().Create(ctx(t), &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv1"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/pv1"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pv.Finalizers, "kubernetes.io/pv-protection") {
		t.Errorf("volume finalizers %v", pv.Finalizers)
	}
}
