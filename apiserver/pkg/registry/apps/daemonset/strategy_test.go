package daemonset

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDaemonSetTemplateGeneration(t *testing.T) {
	ctx := context.Background()
	mainS, statusS := Strategy, StatusStrategy
	mk := func(image string, ann map[string]string) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ds", Annotations: ann},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}}}
	}
	gen := func(ds *appsv1.DaemonSet) string { return ds.Annotations[appsv1.DeprecatedTemplateGeneration] }

	created := mk("a", nil)
	mainS.PrepareForCreate(ctx, created)
	if gen(created) != "1" || created.Generation != 1 {
		t.Fatalf("create: template generation %q, generation %d; want 1, 1", gen(created), created.Generation)
	}
	high := mk("a", map[string]string{appsv1.DeprecatedTemplateGeneration: "7"})
	mainS.PrepareForCreate(ctx, high)
	if gen(high) != "7" {
		t.Errorf("create with 7: %q, want the client's 7", gen(high))
	}

	tests := []struct {
		name     string
		strategy daemonSetStrategy
		update   *appsv1.DaemonSet
		want     string
	}{
		{"template changed", mainS, mk("b", map[string]string{appsv1.DeprecatedTemplateGeneration: "1"}), "2"},
		{"template unchanged, client sets 9", mainS, mk("a", map[string]string{appsv1.DeprecatedTemplateGeneration: "9"}), "1"},
		{"annotation dropped", mainS, mk("a", nil), "1"},
		{"status endpoint keeps it", statusS, mk("b", map[string]string{appsv1.DeprecatedTemplateGeneration: "5"}), "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.strategy.PrepareForUpdate(ctx, tt.update, created.DeepCopy())
			if got := gen(tt.update); got != tt.want {
				t.Errorf("template generation = %q, want %q", got, tt.want)
			}
		})
	}
}
