// Package persistentvolume holds the PersistentVolume kind's strategies,
// defaults and selectable fields.
package persistentvolume

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidatePersistentVolume, validation.ValidatePersistentVolumeUpdate)

// Strategy is the PersistentVolume's main endpoint: a new volume is
// Pending. StatusStrategy is its status.
var (
	Strategy       = rest.Main(rest.PrepareCreate(prepare), validated)
	StatusStrategy = rest.Status(validated)
)

// Default applies upstream's v1 defaults to a PersistentVolume.
var Default = rest.Defaults(defaults.DefaultPersistentVolume)

func prepare(obj runtime.Object) {
	if pv, ok := obj.(*corev1.PersistentVolume); ok {
		now := metav1.NewTime(time.Now().Truncate(time.Second))
		pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &now}
	}
}

// Fields are a PersistentVolume's selectable fields.
func Fields(obj runtime.Object) fields.Set {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return nil
	}
	return fields.Set{"name": pv.Name}
}
