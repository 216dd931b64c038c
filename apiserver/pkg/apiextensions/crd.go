package apiextensions

import (
	"context"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	"skiff.dev/apiserver/pkg/registry"
)

// CleanupFinalizer is upstream's finalizer that keeps a CRD until all its
// instances are deleted.
const CleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// CRDResource is the table row of apiextensions.k8s.io/v1
// CustomResourceDefinition: cluster-scoped, with status.
func CRDResource() *registry.Resource {
	return &registry.Resource{
		Group: apiextensionsv1.GroupName, Version: "v1", Kind: "CustomResourceDefinition",
		Resource: "customresourcedefinitions", SingularName: "customresourcedefinition",
		ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"},
		EtcdPrefix: "apiextensions.k8s.io/customresourcedefinitions",
		New:        func() runtime.Object { return &apiextensionsv1.CustomResourceDefinition{} },
		NewList:    func() runtime.Object { return &apiextensionsv1.CustomResourceDefinitionList{} },
		Strategy:   crdStrategy{}, StatusStrategy: crdStatusStrategy{},
		Default:      defaultCRD,
		MarkDeleting: markCRDDeleting,
	}
}

func defaultCRD(obj runtime.Object) {
	if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	}
}

// markCRDDeleting is upstream's first delete of a CRD: the cleanup
// finalizer and the Terminating condition; the controller then deletes the
// instances and removes the finalizer.
func markCRDDeleting(obj runtime.Object) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return
	}
	if !hasFinalizer(crd, CleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, CleanupFinalizer)
	}
	setCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
		Reason: "InstanceDeletionPending", Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
	})
}

func hasFinalizer(crd *apiextensionsv1.CustomResourceDefinition, f string) bool {
	for _, x := range crd.Finalizers {
		if x == f {
			return true
		}
	}
	return false
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// crdStrategy serves the main endpoint: status is the server's.
type crdStrategy struct{}

func (crdStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	if v := storageVersion(crd); v != "" {
		crd.Status.StoredVersions = []string{v}
	}
	crd.Generation = 1
}

func (crdStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	crd, oldCRD := obj.(*apiextensionsv1.CustomResourceDefinition), old.(*apiextensionsv1.CustomResourceDefinition)
	crd.Status = *oldCRD.Status.DeepCopy()
	if !equality.Semantic.DeepEqual(crd.Spec, oldCRD.Spec) {
		crd.Generation = oldCRD.Generation + 1
	}
	if v := storageVersion(crd); v != "" && !contains(crd.Status.StoredVersions, v) {
		crd.Status.StoredVersions = append(crd.Status.StoredVersions, v)
	}
}

func (crdStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateCRD(obj.(*apiextensionsv1.CustomResourceDefinition))
}

func (crdStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateCRDUpdate(obj.(*apiextensionsv1.CustomResourceDefinition), old.(*apiextensionsv1.CustomResourceDefinition))
}

// GetResetFields: an apply through the main resource resets the status.
func (crdStrategy) GetResetFields() []fieldpath.Path {
	return []fieldpath.Path{fieldpath.MakePathOrDie("status")}
}

func (crdStrategy) AllowCreateOnUpdate() bool      { return false }
func (crdStrategy) AllowUnconditionalUpdate() bool { return false }

// crdStatusStrategy serves customresourcedefinitions/status: only status
// changes.
type crdStatusStrategy struct{ crdStrategy }

func (crdStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	crd, oldCRD := obj.(*apiextensionsv1.CustomResourceDefinition), old.(*apiextensionsv1.CustomResourceDefinition)
	status := crd.Status
	*crd = *oldCRD.DeepCopy()
	crd.Status = status
}

func (crdStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	return validateStoredVersions(crd, field.NewPath("status", "storedVersions"))
}

// Subresource names the endpoint for admission.
func (crdStatusStrategy) Subresource() string { return registry.SubStatus }

// GetResetFields: an apply through status resets the spec.
func (crdStatusStrategy) GetResetFields() []fieldpath.Path {
	return []fieldpath.Path{fieldpath.MakePathOrDie("spec")}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// condition returns the CRD's condition of type t, or nil.
func condition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == t {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

func conditionTrue(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	c := condition(crd, t)
	return c != nil && c.Status == apiextensionsv1.ConditionTrue
}

// IsEstablished reports whether the CRD's resources are served.
func IsEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return conditionTrue(crd, apiextensionsv1.Established)
}

// setCondition sets c, keeping the transition time when the status is unchanged.
func setCondition(crd *apiextensionsv1.CustomResourceDefinition, c apiextensionsv1.CustomResourceDefinitionCondition) {
	c.LastTransitionTime = metav1.NewTime(time.Now().Truncate(time.Second))
	if cur := condition(crd, c.Type); cur != nil {
		if cur.Status == c.Status {
			c.LastTransitionTime = cur.LastTransitionTime
		}
		*cur = c
		return
	}
	crd.Status.Conditions = append(crd.Status.Conditions, c)
}
