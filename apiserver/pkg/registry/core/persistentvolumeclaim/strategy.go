// Package persistentvolumeclaim holds the PersistentVolumeClaim kind's
// strategies, defaults and selectable fields.
package persistentvolumeclaim

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidatePersistentVolumeClaim, validation.ValidatePersistentVolumeClaimUpdate)

// Strategy is the PersistentVolumeClaim's main endpoint: a new claim is
// Pending. StatusStrategy is its status.
var (
	Strategy       = rest.Main(rest.PrepareCreate(prepare), validated)
	StatusStrategy = rest.Status(validated)
)

// Default applies upstream's v1 defaults to a PersistentVolumeClaim.
var Default = rest.Defaults(defaults.DefaultPersistentVolumeClaim)

func prepare(obj runtime.Object) {
	if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok {
		pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
	}
}

// Fields are a PersistentVolumeClaim's selectable fields.
func Fields(obj runtime.Object) fields.Set {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	return fields.Set{"name": pvc.Name}
}
