package informers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestTrimManagedFields(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	out, err := TrimManagedFields(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.ManagedFields != nil || got.Name != "p" || got.Labels["a"] != "b" {
		t.Errorf("trimmed pod: %+v", got.ObjectMeta)
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: pod}
	if out, err := TrimManagedFields(tomb); err != nil || out.(cache.DeletedFinalStateUnknown).Key != "ns/p" {
		t.Errorf("a tombstone: %v %v", out, err)
	}
}
