package kubelet

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A status update that conflicts is made again on the fresh pod, whose
// conditions set by others meanwhile (the eviction's DisruptionTarget)
// stay beside the kubelet's.
func TestStatusWriterKeepsConditionsSetMeanwhile(t *testing.T) {
	stale := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1", ResourceVersion: "1"},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}}}
	fresh := stale.DeepCopy()
	fresh.ResourceVersion = "2"
	fresh.Status.Conditions = append(fresh.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
	client := fake.NewSimpleClientset(fresh)
	conflicted := false
	client.PrependReactor("update", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && !conflicted {
			conflicted = true
			return true, nil, apierrors.NewConflict(corev1.Resource("pods"), "p", nil)
		}
		return false, nil, nil
	})
	mine := corev1.PodStatus{Phase: corev1.PodFailed, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}}
	if err := (&statusWriter{client: client}).UpdateStatus(context.Background(), stale, mine); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[corev1.PodConditionType]bool{corev1.PodReady: true, corev1.PodScheduled: true, corev1.DisruptionTarget: true}
	for _, c := range got.Status.Conditions {
		delete(want, c.Type)
	}
	if len(want) != 0 || got.Status.Phase != corev1.PodFailed {
		t.Errorf("status = %+v; missing conditions %v", got.Status, want)
	}
}
