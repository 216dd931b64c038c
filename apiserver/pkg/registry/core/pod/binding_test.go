package pod

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/storage"
)

// A binding writes the node and PodScheduled into the stored pod; a dry
// run writes nothing; a bound pod, or a target that is not a Node, is
// refused.
func TestCreateBinding(t *testing.T) {
	ctx := context.Background()
	pods, _ := evictionFixture(0, 0)
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}
	if err := CreateBinding(ctx, pods, "ns", "p", b, true); err != nil {
		t.Fatal(err)
	}
	if n := pods.objs["p"].(*corev1.Pod).Spec.NodeName; n != "" {
		t.Fatalf("a dry run bound the pod to %q", n)
	}
	if err := CreateBinding(ctx, pods, "ns", "p", b, false); err != nil {
		t.Fatal(err)
	}
	pod := pods.objs["p"].(*corev1.Pod)
	scheduled := false
	for _, c := range pod.Status.Conditions {
		scheduled = scheduled || (c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue)
	}
	if pod.Spec.NodeName != "n1" || !scheduled {
		t.Errorf("bound pod: node %q, conditions %+v", pod.Spec.NodeName, pod.Status.Conditions)
	}
	if err := CreateBinding(ctx, pods, "ns", "p", b, false); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("second binding: err = %v, want a conflict", err)
	}
	bad := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Pod", Name: "n1"}}
	if err := CreateBinding(ctx, pods, "ns", "p", bad, false); !apierrors.IsInvalid(err) {
		t.Errorf("binding to a Pod: err = %v, want 422", err)
	}
}
