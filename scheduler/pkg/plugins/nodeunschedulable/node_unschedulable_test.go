package nodeunschedulable

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/testutil"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name          string
		unschedulable bool
		tolerations   []corev1.Toleration
		want          framework.Code
	}{
		{name: "schedulable", want: framework.Success},
		{name: "cordoned", unschedulable: true, want: framework.UnschedulableAndUnresolvable},
		{name: "cordoned, tolerated", unschedulable: true, want: framework.Success,
			tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}},
		{name: "cordoned, tolerate everything", unschedulable: true, want: framework.Success,
			tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
		{name: "cordoned, other toleration", unschedulable: true, want: framework.UnschedulableAndUnresolvable,
			tolerations: []corev1.Toleration{{Key: "x", Operator: corev1.TolerationOpExists}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := testutil.Node("n", "1", "1Gi", 10)
			node.Spec.Unschedulable = tt.unschedulable
			pod := testutil.Pod("p")
			pod.Spec.Tolerations = tt.tolerations
			st := (&NodeUnschedulable{}).Filter(context.Background(), nil, pod, testutil.NodeInfo(node))
			if st.Code() != tt.want {
				t.Fatalf("code = %v, want %v", st.Code(), tt.want)
			}
			if tt.want != framework.Success && st.Message() != ErrReason {
				t.Fatalf("message = %q", st.Message())
			}
		})
	}
}
