package noderesources

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/testutil"
)

func TestScoringStrategies(t *testing.T) {
	gpu := corev1.ResourceName("example.com/gpu")
	node := testutil.Node("n", "4", "10000", 10)
	gpuNode := testutil.Node("g", "4", "10000", 10)
	gpuNode.Status.Allocatable[gpu] = resource.MustParse("4")
	withGPU := func(p *corev1.Pod, n string) *corev1.Pod {
		p.Spec.Containers[0].Resources.Requests[gpu] = resource.MustParse(n)
		return p
	}
	tests := []struct {
		name     string
		args     string
		node     *corev1.Node
		pod      *corev1.Pod
		existing []*corev1.Pod
		want     int64
	}{
		{name: "least allocated by default", node: node, pod: testutil.Pod("p", [2]string{"1", "3000"}),
			existing: []*corev1.Pod{testutil.Pod("e", [2]string{"1", "2000"})}, want: 50},
		{name: "most allocated", args: `{"scoringStrategy":{"type":"MostAllocated"}}`, node: node,
			pod: testutil.Pod("p", [2]string{"1", "3000"}), existing: []*corev1.Pod{testutil.Pod("e", [2]string{"1", "2000"})},
			// cpu 2/4 = 50, memory 5000/10000 = 50.
			want: 50},
		{name: "most allocated, weighted", args: `{"scoringStrategy":{"type":"MostAllocated","resources":[{"name":"cpu","weight":3},{"name":"memory","weight":1}]}}`,
			node: node, pod: testutil.Pod("p", [2]string{"3", "1000"}),
			// cpu 75*3 + memory 10*1 = 235 / 4 = 58.
			want: 58},
		{name: "most allocated caps at capacity", args: `{"scoringStrategy":{"type":"MostAllocated"}}`, node: node,
			pod: testutil.Pod("p", [2]string{"8", "20000"}), want: 100},
		{name: "least allocated with an extended resource the pod asks for",
			args: `{"scoringStrategy":{"resources":[{"name":"cpu","weight":1},{"name":"example.com/gpu","weight":1}]}}`,
			node: gpuNode, pod: withGPU(testutil.Pod("p", [2]string{"2", ""}), "1"),
			// cpu 50, gpu 75.
			want: 62},
		{name: "an extended resource the pod does not ask for is left out",
			args: `{"scoringStrategy":{"resources":[{"name":"cpu","weight":1},{"name":"example.com/gpu","weight":1}]}}`,
			node: gpuNode, pod: testutil.Pod("p", [2]string{"2", ""}), want: 50},
		{name: "requested to capacity ratio, bin packing shape",
			args: `{"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[{"utilization":0,"score":0},{"utilization":100,"score":10}]}}}`,
			node: node, pod: testutil.Pod("p", [2]string{"1", "3000"}),
			// cpu 25% -> 25, memory 30% -> 30: round(27.5) = 28.
			want: 28},
		{name: "requested to capacity ratio, spreading shape",
			args: `{"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[{"utilization":0,"score":10},{"utilization":100,"score":0}]}}}`,
			node: node, pod: testutil.Pod("p", [2]string{"1", "3000"}),
			// cpu 75, memory 70.
			want: 73},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw json.RawMessage
			if tt.args != "" {
				raw = json.RawMessage(tt.args)
			}
			pl, err := NewFit(raw, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := scoreOf(t, pl.(framework.ScorePlugin), tt.pod, testutil.NodeInfo(tt.node, tt.existing...)); got != tt.want {
				t.Fatalf("score = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFitArgs(t *testing.T) {
	tests := []struct {
		args    string
		wantErr string
	}{
		{args: `{"scoringStrategy":{"type":"MostAllocated"}}`},
		{args: `{"scoringStrategy":{"type":"Packed"}}`, wantErr: `scoringStrategy.type: Unsupported value: "Packed"`},
		{args: `{"scoringStrategy":{"type":"MostAllocated","resources":[{"name":"cpu","weight":101}]}}`, wantErr: "should be in a range 1-100"},
		{args: `{"scoringStrategy":{"type":"RequestedToCapacityRatio"}}`, wantErr: "at least one point"},
		{args: `{"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[{"utilization":50,"score":1},{"utilization":40,"score":11}]}}}`,
			wantErr: "sorted in increasing order"},
		{args: `{"scoringStrategy":{"type":"LeastAllocated","requestedToCapacityRatio":{"shape":[{"utilization":50,"score":1}]}}}`, wantErr: "only allowed"},
		{args: `{"ignoredResources":["x"]}`, wantErr: `unknown field "ignoredResources"`},
		{args: `not json`, wantErr: "decoding NodeResourcesFitArgs"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			_, err := NewFit(json.RawMessage(tt.args), nil)
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
