package validation

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/apis/defaults"
)

// Containers of a StatefulSet may mount its volumeClaimTemplates; a mount
// of neither a volume nor a claim template is still refused.
func TestStatefulSetMountsClaimTemplates(t *testing.T) {
	set := func(mount string) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
			Spec: appsv1.StatefulSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "busybox",
						VolumeMounts: []corev1.VolumeMount{{Name: mount, MountPath: "/data"}}}}},
				},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}},
			},
		}
		defaults.DefaultStatefulSet(s)
		return s
	}
	if errs := ValidateStatefulSet(set("data")); len(errs) > 0 {
		t.Errorf("a mount of a claim template: %v", errs)
	}
	if errs := ValidateStatefulSet(set("nothing")); len(errs) == 0 {
		t.Error("a mount of nothing was accepted")
	}
}
