package validation

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var reclaimPolicies = sets.New(corev1.PersistentVolumeReclaimRetain, corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle)

// ValidatePersistentVolume validates a PV: capacity.storage, access modes,
// one volume source, a known reclaim policy.
func ValidatePersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	allErrs := validateObjectMeta(&pv.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	if len(pv.Spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(spec.Child("accessModes"), ""))
	}
	for _, m := range pv.Spec.AccessModes {
		if !supportedAccessModes.Has(m) {
			allErrs = append(allErrs, field.NotSupported(spec.Child("accessModes"), m, sets.List(supportedAccessModes)))
		}
	}
	if len(pv.Spec.Capacity) == 0 {
		allErrs = append(allErrs, field.Required(spec.Child("capacity"), ""))
	}
	if _, ok := pv.Spec.Capacity[corev1.ResourceStorage]; !ok || len(pv.Spec.Capacity) > 1 {
		allErrs = append(allErrs, field.NotSupported(spec.Child("capacity"), pv.Spec.Capacity, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	for k, q := range pv.Spec.Capacity {
		allErrs = append(allErrs, validateResourceQuantityValue(k, q, spec.Child("capacity").Key(string(k)))...)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != "" && !reclaimPolicies.Has(pv.Spec.PersistentVolumeReclaimPolicy) {
		allErrs = append(allErrs, field.NotSupported(spec.Child("persistentVolumeReclaimPolicy"), pv.Spec.PersistentVolumeReclaimPolicy, sets.List(reclaimPolicies)))
	}
	if pv.Spec.StorageClassName != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(pv.Spec.StorageClassName, false) {
			allErrs = append(allErrs, field.Invalid(spec.Child("storageClassName"), pv.Spec.StorageClassName, msg))
		}
	}
	if pv.Spec.VolumeMode != nil && !supportedVolumeModes.Has(*pv.Spec.VolumeMode) {
		allErrs = append(allErrs, field.NotSupported(spec.Child("volumeMode"), *pv.Spec.VolumeMode, sets.List(supportedVolumeModes)))
	}
	if pv.Spec.Local != nil && pv.Spec.NodeAffinity == nil {
		allErrs = append(allErrs, field.Required(spec.Child("nodeAffinity"), "Local volumes require node affinity"))
	}
	if na := pv.Spec.NodeAffinity; na != nil {
		if na.Required == nil {
			allErrs = append(allErrs, field.Required(spec.Child("nodeAffinity", "required"), "must specify required node constraints"))
		} else {
			allErrs = append(allErrs, validateNodeSelector(na.Required, false, spec.Child("nodeAffinity", "required"))...)
		}
	}
	return append(allErrs, validatePVSource(&pv.Spec.PersistentVolumeSource, spec)...)
}

// validatePVSource requires exactly one volume type and checks the common ones.
func validatePVSource(src *corev1.PersistentVolumeSource, spec *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	n := 0
	count := func(set bool) {
		if set {
			n++
		}
	}
	count(src.HostPath != nil)
	count(src.Local != nil)
	count(src.NFS != nil)
	count(src.CSI != nil)
	count(src.ISCSI != nil)
	count(src.FC != nil)
	count(src.RBD != nil)
	count(src.CephFS != nil)
	count(src.Glusterfs != nil)
	count(src.GCEPersistentDisk != nil)
	count(src.AWSElasticBlockStore != nil)
	count(src.AzureDisk != nil)
	count(src.AzureFile != nil)
	count(src.Cinder != nil)
	count(src.VsphereVolume != nil)
	count(src.Quobyte != nil)
	count(src.FlexVolume != nil)
	count(src.Flocker != nil)
	count(src.PhotonPersistentDisk != nil)
	count(src.PortworxVolume != nil)
	count(src.ScaleIO != nil)
	count(src.StorageOS != nil)
	switch {
	case n == 0:
		return append(allErrs, field.Required(spec, "must specify a volume type"))
	case n > 1:
		return append(allErrs, field.Forbidden(spec, "may not specify more than 1 volume type"))
	}
	switch {
	case src.HostPath != nil:
		if src.HostPath.Path == "" {
			allErrs = append(allErrs, field.Required(spec.Child("hostPath", "path"), ""))
		}
		allErrs = append(allErrs, validatePathNoBacksteps(src.HostPath.Path, spec.Child("hostPath", "path"))...)
	case src.Local != nil:
		if src.Local.Path == "" {
			allErrs = append(allErrs, field.Required(spec.Child("local", "path"), ""))
		}
		allErrs = append(allErrs, validatePathNoBacksteps(src.Local.Path, spec.Child("local", "path"))...)
	case src.NFS != nil:
		if src.NFS.Server == "" {
			allErrs = append(allErrs, field.Required(spec.Child("nfs", "server"), ""))
		}
		if src.NFS.Path == "" {
			allErrs = append(allErrs, field.Required(spec.Child("nfs", "path"), ""))
		} else if !strings.HasPrefix(src.NFS.Path, "/") {
			allErrs = append(allErrs, field.Invalid(spec.Child("nfs", "path"), src.NFS.Path, "must be an absolute path"))
		}
	case src.CSI != nil:
		if src.CSI.Driver == "" {
			allErrs = append(allErrs, field.Required(spec.Child("csi", "driver"), ""))
		}
		if src.CSI.VolumeHandle == "" {
			allErrs = append(allErrs, field.Required(spec.Child("csi", "volumeHandle"), ""))
		}
	}
	return allErrs
}

// ValidatePersistentVolumeUpdate: the volume source is immutable.
func ValidatePersistentVolumeUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&pv.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidatePersistentVolume(pv)...)
	if !equality.Semantic.DeepEqual(pv.Spec.PersistentVolumeSource, old.Spec.PersistentVolumeSource) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"), "spec.persistentvolumesource is forbidden once set"))
	}
	allErrs = append(allErrs, validateImmutableField(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil {
		allErrs = append(allErrs, validateImmutableField(pv.Spec.NodeAffinity, old.Spec.NodeAffinity, field.NewPath("nodeAffinity"))...)
	}
	return allErrs
}

// ValidatePersistentVolumeClaim validates a PVC on create.
func ValidatePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := validateObjectMeta(&pvc.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(allErrs, validatePersistentVolumeClaimSpec(&pvc.Spec, field.NewPath("spec"))...)
}

// ValidatePersistentVolumeClaimUpdate: the spec is immutable after creation
// except resources.requests (expansion of a bound claim) and
// volumeAttributesClassName.
func ValidatePersistentVolumeClaimUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&pvc.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidatePersistentVolumeClaim(pvc)...)
	newSpec := pvc.Spec.DeepCopy()
	// Binding fills in volumeName once, and storageClassName may be set once.
	if old.Spec.VolumeName == "" {
		newSpec.VolumeName = ""
	}
	if old.Spec.StorageClassName == nil {
		newSpec.StorageClassName = nil
	}
	bound := old.Status.Phase == corev1.ClaimBound
	if bound {
		newSpec.Resources = old.Spec.Resources
	}
	newSpec.VolumeAttributesClassName = old.Spec.VolumeAttributesClassName
	oldSpec := old.Spec.DeepCopy()
	if old.Spec.VolumeName == "" {
		oldSpec.VolumeName = ""
	}
	if old.Spec.StorageClassName == nil {
		oldSpec.StorageClassName = nil
	}
	if !equality.Semantic.DeepEqual(newSpec, oldSpec) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"), "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"))
	}
	// Upstream (RecoverVolumeExpansionFailure, on in v1.32): a bound
	// claim's request may shrink, but not to status.capacity or below; an
	// update that does not shrink it (a finalizer, an annotation) passes
	// even when the request is below the capacity it was bound with.
	capacity := old.Status.Capacity[corev1.ResourceStorage]
	newSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	oldSize := old.Spec.Resources.Requests[corev1.ResourceStorage]
	if bound && newSize.Cmp(oldSize) < 0 && newSize.Cmp(capacity) <= 0 {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	return allErrs
}
