package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A bound claim whose request is below the capacity it was bound with
// (a 3Gi claim on a 5Gi volume) may still be updated; shrinking the
// request to the capacity or below is refused, as upstream.
func TestPersistentVolumeClaimUpdateRequestBelowCapacity(t *testing.T) {
	claim := func(request string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", ResourceVersion: "1"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: "pv",
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(request)}},
			},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
				Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}},
		}
	}
	tests := []struct {
		name    string
		old     string
		new     string
		wantErr bool
	}{
		{name: "same request below capacity (finalizer removed)", old: "3Gi", new: "3Gi"},
		{name: "grown", old: "3Gi", new: "8Gi"},
		{name: "shrunk to above capacity", old: "8Gi", new: "6Gi"},
		{name: "shrunk to capacity", old: "8Gi", new: "5Gi", wantErr: true},
		{name: "shrunk below capacity", old: "8Gi", new: "1Gi", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidatePersistentVolumeClaimUpdate(claim(tt.new), claim(tt.old))
			if (len(errs) > 0) != tt.wantErr {
				t.Errorf("errors %v, want error %v", errs, tt.wantErr)
			}
		})
	}
}
