package admission

import (
	"context"
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// Upstream's plugin names.
const (
	DefaultStorageClassName          = "DefaultStorageClass"
	StorageObjectInUseProtectionName = "StorageObjectInUseProtection"
)

// The finalizers StorageObjectInUseProtection puts on new claims and
// volumes; the pvc-protection and pv-protection controllers remove them.
const (
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
)

// The annotations that mark a StorageClass as the default.
const (
	annDefaultStorageClass     = "storageclass.kubernetes.io/is-default-class"
	annBetaDefaultStorageClass = "storageclass.beta.kubernetes.io/is-default-class"
)

// DefaultStorageClass gives a new claim that names no class (a nil
// storageClassName; "" means "no class" and is kept) the default
// StorageClass: the one annotated storageclass.kubernetes.io/is-default-class
// "true", the newest of several, as upstream's plugin does. Without a
// default class the claim is left as it is; the binder assigns one if a
// default appears later.
type DefaultStorageClass struct {
	Objects Objects
}

// Name implements Plugin.
func (*DefaultStorageClass) Name() string { return DefaultStorageClassName }

// Admit implements MutationInterface.
func (d *DefaultStorageClass) Admit(ctx context.Context, a *Attributes) error {
	if !isCreateOf(a, "", "persistentvolumeclaims") {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok || pvc.Spec.StorageClassName != nil {
		return nil
	}
	if _, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return nil
	}
	classes, err := d.Objects.List(ctx, "storage.k8s.io", "storageclasses", "")
	if err != nil {
		return err
	}
	var best *storagev1.StorageClass
	for _, o := range classes {
		sc, ok := o.(*storagev1.StorageClass)
		if !ok || (sc.Annotations[annDefaultStorageClass] != "true" && sc.Annotations[annBetaDefaultStorageClass] != "true") {
			continue
		}
		if best == nil || sc.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(&best.CreationTimestamp) && sc.Name < best.Name) {
			best = sc
		}
	}
	if best == nil {
		return nil
	}
	klog.FromContext(ctx).V(4).Info("Defaulting storage class for claim", "PVC", klog.KRef(a.Namespace, pvc.Name), "class", best.Name)
	name := best.Name
	pvc.Spec.StorageClassName = &name
	return nil
}

// StorageObjectInUseProtection puts the kubernetes.io/pvc-protection
// finalizer on every new claim and kubernetes.io/pv-protection on every new
// volume, as upstream's plugin does, so that neither goes away while in use.
type StorageObjectInUseProtection struct{}

// Name implements Plugin.
func (*StorageObjectInUseProtection) Name() string { return StorageObjectInUseProtectionName }

// Admit implements MutationInterface.
func (*StorageObjectInUseProtection) Admit(_ context.Context, a *Attributes) error {
	if a.Operation != Create || a.Subresource != "" || a.Resource.Group != "" {
		return nil
	}
	var meta *metav1.ObjectMeta
	var finalizer string
	switch o := a.Object.(type) {
	case *corev1.PersistentVolumeClaim:
		meta, finalizer = &o.ObjectMeta, PVCProtectionFinalizer
	case *corev1.PersistentVolume:
		meta, finalizer = &o.ObjectMeta, PVProtectionFinalizer
	default:
		return nil
	}
	if !slices.Contains(meta.Finalizers, finalizer) {
		meta.Finalizers = append(meta.Finalizers, finalizer)
	}
	return nil
}

// PersistentVolumeClaimResizeName is upstream's plugin name.
const PersistentVolumeClaimResizeName = "PersistentVolumeClaimResize"

// PersistentVolumeClaimResize refuses to grow a bound claim unless its
// StorageClass allows volume expansion, as upstream's plugin does.
type PersistentVolumeClaimResize struct {
	Objects Objects
}

// Name implements Plugin.
func (*PersistentVolumeClaimResize) Name() string { return PersistentVolumeClaimResizeName }

// Validate implements ValidationInterface.
func (r *PersistentVolumeClaimResize) Validate(ctx context.Context, a *Attributes) error {
	if a.Operation != Update || a.Subresource != "" || a.Resource.Group != "" || a.Resource.Resource != "persistentvolumeclaims" {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	old, okOld := a.OldObject.(*corev1.PersistentVolumeClaim)
	if !ok || !okOld || old.Status.Phase != corev1.ClaimBound {
		return nil
	}
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) <= 0 {
		return nil
	}
	refuse := forbidden(a, errResize)
	className := ""
	if pvc.Spec.StorageClassName != nil {
		className = *pvc.Spec.StorageClassName
	}
	if className == "" {
		return refuse
	}
	obj, err := r.Objects.Get(ctx, "storage.k8s.io", "storageclasses", "", className)
	if err != nil {
		return refuse
	}
	if sc, ok := obj.(*storagev1.StorageClass); !ok || sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion {
		return refuse
	}
	return nil
}

var errResize = errors.New("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize")
