package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ns(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "default"} }

func q(s string) resource.Quantity { return resource.MustParse(s) }

func TestCronSchedules(t *testing.T) {
	for s, ok := range map[string]bool{"*/5 * * * *": true, "0 0 1 jan mon": true, "@hourly": true, "@every 5m": true,
		"* * * *": false, "0 25 * * *": false, "@sometimes": false, "5-1 * * * *": false, "a * * * *": false} {
		if err := checkCronSchedule(s); (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", s, err, ok)
		}
	}
}

func withRestart(t corev1.PodTemplateSpec, p corev1.RestartPolicy) corev1.PodTemplateSpec {
	t.Spec.RestartPolicy = p
	return t
}
