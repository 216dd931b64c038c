package validation

import (
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var metadataPath = field.NewPath("metadata")

// validateObjectMeta is upstream's core ValidateObjectMeta: the generic
// object meta rules plus the check that unqualified finalizer names are
// standard ones. Core, apps and discovery kinds use it.
func validateObjectMeta(meta *metav1.ObjectMeta, requiresNamespace bool, nameFn apimachineryvalidation.ValidateNameFunc, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(meta, requiresNamespace, nameFn, fldPath)
	for i := range meta.Finalizers {
		allErrs = append(allErrs, validateKubeFinalizerName(meta.Finalizers[i], fldPath.Child("finalizers").Index(i))...)
	}
	return allErrs
}

// validateObjectMetaUpdate is upstream's core ValidateObjectMetaUpdate.
func validateObjectMetaUpdate(newMeta, oldMeta *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(newMeta, oldMeta, fldPath)
	for i := range newMeta.Finalizers {
		allErrs = append(allErrs, validateKubeFinalizerName(newMeta.Finalizers[i], fldPath.Child("finalizers").Index(i))...)
	}
	return allErrs
}

// validateKubeFinalizerName requires a finalizer without a "/" to be one of
// the standard names.
func validateKubeFinalizerName(name string, fldPath *field.Path) field.ErrorList {
	if len(strings.Split(name, "/")) == 1 && !isStandardFinalizerName(name) {
		return field.ErrorList{field.Invalid(fldPath, name, "name is neither a standard finalizer name nor is it fully qualified")}
	}
	return nil
}

// validateFinalizerName validates a namespace's spec.finalizers entry.
func validateFinalizerName(name string, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateFinalizerName(name, fldPath)
	allErrs = append(allErrs, validateKubeFinalizerName(name, fldPath)...)
	return allErrs
}
