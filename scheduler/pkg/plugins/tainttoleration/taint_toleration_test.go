package tainttoleration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/testutil"
)

func nodeWith(name string, taints ...corev1.Taint) *framework.NodeInfo {
	n := testutil.Node(name, "1", "1Gi", 10)
	n.Spec.Taints = taints
	return testutil.NodeInfo(n)
}

func TestFilter(t *testing.T) {
	noSched := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	noExec := corev1.Taint{Key: "bad", Value: "", Effect: corev1.TaintEffectNoExecute}
	prefer := corev1.Taint{Key: "soft", Value: "x", Effect: corev1.TaintEffectPreferNoSchedule}
	tests := []struct {
		name   string
		taints []corev1.Taint
		tols   []corev1.Toleration
		want   framework.Code
		reason string
	}{
		{name: "no taints", want: framework.Success},
		{name: "prefer only", taints: []corev1.Taint{prefer}, want: framework.Success},
		{name: "untolerated NoSchedule", taints: []corev1.Taint{noSched}, want: framework.UnschedulableAndUnresolvable,
			reason: "node(s) had untolerated taint {dedicated: gpu}"},
		{name: "untolerated NoExecute", taints: []corev1.Taint{noExec}, want: framework.UnschedulableAndUnresolvable,
			reason: "node(s) had untolerated taint {bad: }"},
		{name: "equal toleration", taints: []corev1.Taint{noSched}, want: framework.Success,
			tols: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}},
		{name: "wrong value", taints: []corev1.Taint{noSched}, want: framework.UnschedulableAndUnresolvable,
			tols:   []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "cpu"}},
			reason: "node(s) had untolerated taint {dedicated: gpu}"},
		{name: "exists, any effect", taints: []corev1.Taint{noSched, noExec}, want: framework.UnschedulableAndUnresolvable,
			tols:   []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
			reason: "node(s) had untolerated taint {bad: }"},
		{name: "tolerate all", taints: []corev1.Taint{noSched, noExec}, want: framework.Success,
			tols: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testutil.Pod("p")
			pod.Spec.Tolerations = tt.tols
			st := (&TaintToleration{}).Filter(context.Background(), nil, pod, nodeWith("n", tt.taints...))
			if st.Code() != tt.want || st.Message() != tt.reason {
				t.Fatalf("got %v %q, want %v %q", st.Code(), st.Message(), tt.want, tt.reason)
			}
		})
	}
}

func TestScore(t *testing.T) {
	p1 := corev1.Taint{Key: "a", Value: "1", Effect: corev1.TaintEffectPreferNoSchedule}
	p2 := corev1.Taint{Key: "b", Value: "2", Effect: corev1.TaintEffectPreferNoSchedule}
	tests := []struct {
		name string
		tols []corev1.Toleration
		want []int64 // for nodes with 0, 1 and 2 PreferNoSchedule taints
	}{
		{name: "no tolerations", want: []int64{100, 50, 0}},
		{name: "tolerate a", tols: []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectPreferNoSchedule}}, want: []int64{100, 100, 0}},
		{name: "NoSchedule toleration does not count", tols: []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, want: []int64{100, 50, 0}},
		{name: "tolerate all", tols: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, want: []int64{100, 100, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testutil.Pod("p")
			pod.Spec.Tolerations = tt.tols
			pl := &TaintToleration{}
			nodes := []*framework.NodeInfo{nodeWith("n0"), nodeWith("n1", p1), nodeWith("n2", p1, p2)}
			scores := framework.NodeScoreList{}
			for _, n := range nodes {
				s, st := pl.Score(context.Background(), nil, pod, n)
				if !st.IsSuccess() {
					t.Fatal(st.Message())
				}
				scores = append(scores, framework.NodeScore{Name: n.Node().Name, Score: s})
			}
			pl.ScoreExtensions().NormalizeScore(context.Background(), nil, pod, scores)
			for i, w := range tt.want {
				if scores[i].Score != w {
					t.Fatalf("scores = %v, want %v", scores, tt.want)
				}
			}
		})
	}
}
