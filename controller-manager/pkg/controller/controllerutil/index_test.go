package controllerutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestFromDeleted(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	tests := []struct {
		name string
		obj  any
		ok   bool
	}{
		{"the object", pod, true},
		{"a tombstone", cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: pod}, true},
		{"a tombstone of another kind", cache.DeletedFinalStateUnknown{Key: "ns/s", Obj: &corev1.Service{}}, false},
		{"something else", "p", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FromDeleted[*corev1.Pod](tt.obj)
			if ok != tt.ok || (ok && got != pod) {
				t.Errorf("FromDeleted = %v, %v; want ok %v", got, ok, tt.ok)
			}
		})
	}
}

func TestSelectingPod(t *testing.T) {
	sel := func(m map[string]string) *metav1.LabelSelector { return &metav1.LabelSelector{MatchLabels: m} }
	selectors := []*metav1.LabelSelector{
		sel(map[string]string{"app": "web"}),
		sel(map[string]string{"app": "db"}),
		{}, // empty: selects nothing
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bad"}}},
	}
	id := func(s *metav1.LabelSelector) *metav1.LabelSelector { return s }
	got := SelectingPod(selectors, id, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "x": "y"}}})
	if len(got) != 1 || got[0] != selectors[0] {
		t.Errorf("SelectingPod = %v, want the app=web selector", got)
	}
	if got := SelectingPod(selectors, id, &corev1.Pod{}); len(got) != 0 {
		t.Errorf("a pod without labels: %v", got)
	}
}
