package registry

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestDeletionFinalizers(t *testing.T) {
	bg, fg, orphan := metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan
	tests := []struct {
		name     string
		existing []string
		opts     metav1.DeleteOptions
		want     []string
	}{
		{name: "default keeps", existing: []string{"a"}, want: []string{"a"}},
		{name: "foreground", opts: metav1.DeleteOptions{PropagationPolicy: &fg}, want: []string{metav1.FinalizerDeleteDependents}},
		{name: "orphan", existing: []string{"a"}, opts: metav1.DeleteOptions{PropagationPolicy: &orphan}, want: []string{"a", metav1.FinalizerOrphanDependents}},
		{name: "background clears gc finalizers", existing: []string{metav1.FinalizerOrphanDependents, "a"}, opts: metav1.DeleteOptions{PropagationPolicy: &bg}, want: []string{"a"}},
		{name: "orphanDependents true", opts: metav1.DeleteOptions{OrphanDependents: ptr.To(true)}, want: []string{metav1.FinalizerOrphanDependents}},
		{name: "orphanDependents false", existing: []string{metav1.FinalizerOrphanDependents}, opts: metav1.DeleteOptions{OrphanDependents: ptr.To(false)}, want: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := deletionFinalizers(tc.existing, &tc.opts)
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGenerateNameSuffix(t *testing.T) {
	for i := 0; i < 100; i++ {
		n := generateName("my-replicaset-")
		suffix := strings.TrimPrefix(n, "my-replicaset-")
		if len(suffix) != 5 || strings.Trim(suffix, "bcdfghjklmnpqrstvwxz2456789") != "" {
			t.Fatalf("generated %q", n)
		}
	}
	if n := generateName(strings.Repeat("x", 70)); len(n) != 63 {
		t.Errorf("long base: %d characters, want 63", len(n))
	}
}
