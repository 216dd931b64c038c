package validation

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var volumeBindingModes = sets.New(storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer)

// ValidateStorageClass: a qualified provisioner, Retain or Delete, a known
// binding mode, parameters of at most 256 KiB.
func ValidateStorageClass(sc *storagev1.StorageClass) field.ErrorList {
	allErrs := validateObjectMeta(&sc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	pp := field.NewPath("provisioner")
	if sc.Provisioner == "" {
		allErrs = append(allErrs, field.Required(pp, ""))
	} else {
		allErrs = append(allErrs, validateQualifiedName(strings.ToLower(sc.Provisioner), pp)...)
	}
	size := 0
	for k, v := range sc.Parameters {
		size += len(k) + len(v)
		if k == "" {
			allErrs = append(allErrs, field.Invalid(field.NewPath("parameters"), k, "field can not be empty."))
		}
	}
	if size > 256*1024 {
		allErrs = append(allErrs, field.TooLong(field.NewPath("parameters"), "", 256*1024))
	}
	if sc.ReclaimPolicy != nil && *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimRetain && *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		allErrs = append(allErrs, field.NotSupported(field.NewPath("reclaimPolicy"), *sc.ReclaimPolicy,
			[]string{string(corev1.PersistentVolumeReclaimDelete), string(corev1.PersistentVolumeReclaimRetain)}))
	}
	if sc.VolumeBindingMode == nil {
		allErrs = append(allErrs, field.Required(field.NewPath("volumeBindingMode"), ""))
	} else if !volumeBindingModes.Has(*sc.VolumeBindingMode) {
		allErrs = append(allErrs, field.NotSupported(field.NewPath("volumeBindingMode"), *sc.VolumeBindingMode, sets.List(volumeBindingModes)))
	}
	return allErrs
}

// ValidateStorageClassUpdate: parameters, provisioner, reclaimPolicy and
// volumeBindingMode are immutable.
func ValidateStorageClassUpdate(sc, old *storagev1.StorageClass) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&sc.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateStorageClass(sc)...)
	if !equality.Semantic.DeepEqual(sc.Parameters, old.Parameters) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	if sc.Provisioner != old.Provisioner {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("provisioner"), "updates to provisioner are forbidden."))
	}
	if !equality.Semantic.DeepEqual(sc.ReclaimPolicy, old.ReclaimPolicy) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
	}
	return append(allErrs, validateImmutableField(sc.VolumeBindingMode, old.VolumeBindingMode, field.NewPath("volumeBindingMode"))...)
}

// ValidateCSIDriver: a qualified driver name and a complete spec.
func ValidateCSIDriver(d *storagev1.CSIDriver) field.ErrorList {
	allErrs := validateObjectMeta(&d.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if len(d.Name) > 63 {
		allErrs = append(allErrs, field.TooLong(metadataPath.Child("name"), "", 63))
	}
	spec := field.NewPath("spec")
	if d.Spec.AttachRequired == nil {
		allErrs = append(allErrs, field.Required(spec.Child("attachedRequired"), ""))
	}
	if d.Spec.PodInfoOnMount == nil {
		allErrs = append(allErrs, field.Required(spec.Child("podInfoOnMount"), ""))
	}
	for i, m := range d.Spec.VolumeLifecycleModes {
		if m != storagev1.VolumeLifecyclePersistent && m != storagev1.VolumeLifecycleEphemeral {
			allErrs = append(allErrs, field.NotSupported(spec.Child("volumeLifecycleModes").Index(i), m,
				[]string{string(storagev1.VolumeLifecyclePersistent), string(storagev1.VolumeLifecycleEphemeral)}))
		}
	}
	return allErrs
}

// ValidateCSIDriverUpdate: attachRequired, volumeLifecycleModes and
// fsGroupPolicy are immutable.
func ValidateCSIDriverUpdate(d, old *storagev1.CSIDriver) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateCSIDriver(d)...)
	spec := field.NewPath("spec")
	allErrs = append(allErrs, validateImmutableField(d.Spec.AttachRequired, old.Spec.AttachRequired, spec.Child("attachRequired"))...)
	allErrs = append(allErrs, validateImmutableField(d.Spec.FSGroupPolicy, old.Spec.FSGroupPolicy, spec.Child("fsGroupPolicy"))...)
	return append(allErrs, validateImmutableField(d.Spec.VolumeLifecycleModes, old.Spec.VolumeLifecycleModes, spec.Child("volumeLifecycleModes"))...)
}

// ValidateCSINode: unique driver names and node IDs present.
func ValidateCSINode(n *storagev1.CSINode) field.ErrorList {
	allErrs := validateObjectMeta(&n.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	seen := sets.New[string]()
	dp := field.NewPath("spec", "drivers")
	for i, d := range n.Spec.Drivers {
		if d.Name == "" {
			allErrs = append(allErrs, field.Required(dp.Index(i).Child("name"), ""))
		}
		if seen.Has(d.Name) {
			allErrs = append(allErrs, field.Duplicate(dp.Index(i).Child("name"), d.Name))
		}
		seen.Insert(d.Name)
		if d.NodeID == "" {
			allErrs = append(allErrs, field.Required(dp.Index(i).Child("nodeID"), ""))
		}
	}
	return allErrs
}

// ValidateCSIStorageCapacity: a storage class name and non-negative sizes.
func ValidateCSIStorageCapacity(c *storagev1.CSIStorageCapacity) field.ErrorList {
	allErrs := validateObjectMeta(&c.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if c.StorageClassName == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("storageClassName"), ""))
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
		}
	}
	if c.NodeTopology != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(c.NodeTopology, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("nodeTopology"))...)
	}
	if c.Capacity != nil {
		allErrs = append(allErrs, validateNonnegativeQuantity(*c.Capacity, field.NewPath("capacity"))...)
	}
	if c.MaximumVolumeSize != nil {
		allErrs = append(allErrs, validateNonnegativeQuantity(*c.MaximumVolumeSize, field.NewPath("maximumVolumeSize"))...)
	}
	return allErrs
}

// ValidateVolumeAttachment: an attacher, a node and exactly one source.
func ValidateVolumeAttachment(va *storagev1.VolumeAttachment) field.ErrorList {
	allErrs := validateObjectMeta(&va.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	if va.Spec.Attacher == "" {
		allErrs = append(allErrs, field.Required(spec.Child("attacher"), ""))
	}
	if va.Spec.NodeName == "" {
		allErrs = append(allErrs, field.Required(spec.Child("nodeName"), ""))
	}
	src := va.Spec.Source
	switch {
	case src.PersistentVolumeName == nil && src.InlineVolumeSpec == nil:
		allErrs = append(allErrs, field.Required(spec.Child("source"), "must specify exactly one of persistentVolumeName and inlineVolumeSpec"))
	case src.PersistentVolumeName != nil && src.InlineVolumeSpec != nil:
		allErrs = append(allErrs, field.Forbidden(spec.Child("source"), "must specify exactly one of persistentVolumeName and inlineVolumeSpec"))
	case src.PersistentVolumeName != nil && *src.PersistentVolumeName == "":
		allErrs = append(allErrs, field.Required(spec.Child("source", "persistentVolumeName"), "must specify non empty persistentVolumeName"))
	}
	return allErrs
}

// ValidateVolumeAttachmentUpdate: the spec is immutable.
func ValidateVolumeAttachmentUpdate(va, old *storagev1.VolumeAttachment) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&va.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateVolumeAttachment(va)...)
	if !equality.Semantic.DeepEqual(va.Spec, old.Spec) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec"), va.Spec, "field is immutable"))
	}
	return allErrs
}

// ValidateCSINodeUpdate validates an update of a CSINode: the metadata
// rules and the CSINode as on create.
func ValidateCSINodeUpdate(o, p *storagev1.CSINode) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateCSINode(o)...)
}

// ValidateCSIStorageCapacityUpdate validates an update of a
// CSIStorageCapacity: the metadata rules, the object as on create, and
// storageClassName and nodeTopology unchanged.
func ValidateCSIStorageCapacityUpdate(o, p *storagev1.CSIStorageCapacity) field.ErrorList {
	errs := append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateCSIStorageCapacity(o)...)
	errs = append(errs, validateImmutableField(o.StorageClassName, p.StorageClassName, field.NewPath("storageClassName"))...)
	return append(errs, validateImmutableField(o.NodeTopology, p.NodeTopology, field.NewPath("nodeTopology"))...)
}
