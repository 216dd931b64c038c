package nodeaffinity

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/testutil"
)

func req(key string, op corev1.NodeSelectorOperator, vals ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: vals}
}

func required(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
	}}
}

func exprs(r ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: r}
}

func TestFilter(t *testing.T) {
	labels := map[string]string{"zone": "a", "disk": "ssd", "cores": "8"}
	tests := []struct {
		name     string
		selector map[string]string
		affinity *corev1.Affinity
		want     bool
	}{
		{name: "nothing", want: true},
		{name: "selector match", selector: map[string]string{"zone": "a"}, want: true},
		{name: "selector mismatch", selector: map[string]string{"zone": "b"}, want: false},
		{name: "selector missing label", selector: map[string]string{"gpu": "yes"}, want: false},
		{name: "In", affinity: required(exprs(req("zone", corev1.NodeSelectorOpIn, "a", "b"))), want: true},
		{name: "In mismatch", affinity: required(exprs(req("zone", corev1.NodeSelectorOpIn, "b"))), want: false},
		{name: "NotIn", affinity: required(exprs(req("zone", corev1.NodeSelectorOpNotIn, "b"))), want: true},
		{name: "NotIn mismatch", affinity: required(exprs(req("zone", corev1.NodeSelectorOpNotIn, "a"))), want: false},
		{name: "Exists", affinity: required(exprs(req("disk", corev1.NodeSelectorOpExists))), want: true},
		{name: "DoesNotExist", affinity: required(exprs(req("disk", corev1.NodeSelectorOpDoesNotExist))), want: false},
		{name: "Gt", affinity: required(exprs(req("cores", corev1.NodeSelectorOpGt, "4"))), want: true},
		{name: "Gt equal", affinity: required(exprs(req("cores", corev1.NodeSelectorOpGt, "8"))), want: false},
		{name: "Lt", affinity: required(exprs(req("cores", corev1.NodeSelectorOpLt, "16"))), want: true},
		{name: "Gt not a number", affinity: required(exprs(req("cores", corev1.NodeSelectorOpGt, "x"))), want: false},
		{name: "terms ORed", affinity: required(exprs(req("zone", corev1.NodeSelectorOpIn, "b")), exprs(req("disk", corev1.NodeSelectorOpIn, "ssd"))), want: true},
		{name: "expressions ANDed", affinity: required(exprs(req("zone", corev1.NodeSelectorOpIn, "a"), req("disk", corev1.NodeSelectorOpIn, "hdd"))), want: false},
		{name: "empty term matches nothing", affinity: required(corev1.NodeSelectorTerm{}), want: false},
		{name: "no terms matches nothing", affinity: required(), want: false},
		{name: "matchFields name", affinity: required(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{req("metadata.name", corev1.NodeSelectorOpIn, "n1")}}), want: true},
		{name: "matchFields other name", affinity: required(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{req("metadata.name", corev1.NodeSelectorOpIn, "n2")}}), want: false},
		{name: "matchFields NotIn", affinity: required(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{req("metadata.name", corev1.NodeSelectorOpNotIn, "n2")}}), want: true},
		{name: "matchFields and expressions", affinity: required(corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{req("zone", corev1.NodeSelectorOpIn, "b")},
			MatchFields:      []corev1.NodeSelectorRequirement{req("metadata.name", corev1.NodeSelectorOpIn, "n1")}}), want: false},
		{name: "selector and affinity both needed", selector: map[string]string{"zone": "b"}, affinity: required(exprs(req("disk", corev1.NodeSelectorOpExists))), want: false},
		{name: "preferred only", affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := testutil.Node("n1", "1", "1Gi", 10)
			node.Labels = labels
			pod := testutil.Pod("p")
			pod.Spec.NodeSelector = tt.selector
			pod.Spec.Affinity = tt.affinity
			st := (&NodeAffinity{}).Filter(context.Background(), nil, pod, testutil.NodeInfo(node))
			if st.IsSuccess() != tt.want {
				t.Fatalf("success = %v, want %v (%s)", st.IsSuccess(), tt.want, st.Message())
			}
			if !tt.want && (st.Code() != framework.UnschedulableAndUnresolvable || st.Message() != ErrReasonPod) {
				t.Fatalf("status = %v %q", st.Code(), st.Message())
			}
		})
	}
}

func TestScore(t *testing.T) {
	pod := testutil.Pod("p")
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
			{Weight: 2, Preference: exprs(req("zone", corev1.NodeSelectorOpIn, "a"))},
			{Weight: 6, Preference: exprs(req("disk", corev1.NodeSelectorOpIn, "ssd"))},
		},
	}}
	tests := []struct {
		name   string
		labels map[string]string
		want   int64
	}{
		{name: "both", labels: map[string]string{"zone": "a", "disk": "ssd"}, want: 100},
		{name: "disk", labels: map[string]string{"disk": "ssd"}, want: 75},
		{name: "zone", labels: map[string]string{"zone": "a"}, want: 25},
		{name: "none", want: 0},
	}
	pl := &NodeAffinity{}
	var scores framework.NodeScoreList
	for _, tt := range tests {
		node := testutil.Node(tt.name, "1", "1Gi", 10)
		node.Labels = tt.labels
		s, st := pl.Score(context.Background(), nil, pod, testutil.NodeInfo(node))
		if !st.IsSuccess() {
			t.Fatal(st.Message())
		}
		scores = append(scores, framework.NodeScore{Name: tt.name, Score: s})
	}
	pl.NormalizeScore(context.Background(), nil, pod, scores)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if scores[i].Score != tt.want {
				t.Fatalf("score = %d, want %d", scores[i].Score, tt.want)
			}
		})
	}
}
