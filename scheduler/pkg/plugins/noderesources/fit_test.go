package noderesources

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/testutil"
)

func TestFitFilter(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	withInit := func(p *corev1.Pod, sidecar bool, cpu, mem string) *corev1.Pod {
		c := testutil.Container(cpu, mem)
		if sidecar {
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		return p
	}
	node := testutil.Node("n", "2", "2Gi", 3)
	tests := []struct {
		name     string
		pod      *corev1.Pod
		existing []*corev1.Pod
		want     []string
	}{
		{name: "fits", pod: testutil.Pod("p", [2]string{"1", "1Gi"}), existing: []*corev1.Pod{testutil.Pod("e", [2]string{"500m", "512Mi"})}},
		{name: "exactly full", pod: testutil.Pod("p", [2]string{"1", "1Gi"}), existing: []*corev1.Pod{testutil.Pod("e", [2]string{"1", "1Gi"})}},
		{name: "insufficient cpu", pod: testutil.Pod("p", [2]string{"1001m", ""}), existing: []*corev1.Pod{testutil.Pod("e", [2]string{"1", ""})},
			want: []string{"Insufficient cpu"}},
		{name: "insufficient cpu and memory", pod: testutil.Pod("p", [2]string{"3", "3Gi"}),
			want: []string{"Insufficient cpu", "Insufficient memory"}},
		{name: "two containers sum", pod: testutil.Pod("p", [2]string{"1", ""}, [2]string{"1500m", ""}),
			want: []string{"Insufficient cpu"}},
		{name: "too many pods", pod: testutil.Pod("p", [2]string{"", ""}),
			existing: []*corev1.Pod{testutil.Pod("a"), testutil.Pod("b"), testutil.Pod("c")},
			want:     []string{"Too many pods"}},
		{name: "too many pods and cpu", pod: testutil.Pod("p", [2]string{"3", ""}),
			existing: []*corev1.Pod{testutil.Pod("a"), testutil.Pod("b"), testutil.Pod("c")},
			want:     []string{"Too many pods", "Insufficient cpu"}},
		{name: "zero request on a full node", pod: testutil.Pod("p", [2]string{"", ""}), existing: []*corev1.Pod{testutil.Pod("e", [2]string{"2", "2Gi"})}},
		{name: "init container larger than containers", pod: withInit(testutil.Pod("p", [2]string{"500m", ""}), false, "2500m", ""),
			want: []string{"Insufficient cpu"}},
		{name: "init container max, not sum", pod: withInit(withInit(testutil.Pod("p", [2]string{"1", ""}), false, "2", ""), false, "2", "")},
		{name: "sidecar adds to containers", pod: withInit(testutil.Pod("p", [2]string{"1500m", ""}), true, "600m", ""),
			want: []string{"Insufficient cpu"}},
		{name: "init after sidecar counts both", pod: withInit(withInit(testutil.Pod("p", [2]string{"100m", ""}), true, "500m", ""), false, "1600m", ""),
			want: []string{"Insufficient cpu"}},
		{name: "overhead", pod: func() *corev1.Pod {
			p := testutil.Pod("p", [2]string{"1900m", ""})
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}
			return p
		}(), want: []string{"Insufficient cpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &Fit{}
			state := framework.NewCycleState()
			if st := pl.PreFilter(context.Background(), state, tt.pod); !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			st := pl.Filter(context.Background(), state, tt.pod, testutil.NodeInfo(node, tt.existing...))
			if !reflect.DeepEqual(st.Reasons(), tt.want) {
				t.Fatalf("reasons = %q, want %q", st.Reasons(), tt.want)
			}
			if tt.want != nil && st.Code() != framework.Unschedulable {
				t.Fatalf("code = %v", st.Code())
			}
		})
	}
}

func TestExtendedResource(t *testing.T) {
	gpu := corev1.ResourceName("example.com/gpu")
	node := testutil.Node("n", "2", "2Gi", 10)
	node.Status.Allocatable[gpu] = resource.MustParse("1")
	pod := testutil.Pod("p", [2]string{"", ""})
	pod.Spec.Containers[0].Resources.Requests[gpu] = resource.MustParse("2")
	st := (&Fit{}).Filter(context.Background(), nil, pod, testutil.NodeInfo(node))
	if st.Message() != "Insufficient example.com/gpu" {
		t.Fatalf("message = %q", st.Message())
	}
}

func scoreOf(t *testing.T, pl framework.ScorePlugin, pod *corev1.Pod, ni *framework.NodeInfo) int64 {
	t.Helper()
	s, st := pl.Score(context.Background(), nil, pod, ni)
	if !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	return s
}

func TestLeastAllocated(t *testing.T) {
	tests := []struct {
		name     string
		node     *corev1.Node
		pod      *corev1.Pod
		existing []*corev1.Pod
		want     int64
	}{
		{name: "half used", node: testutil.Node("n", "4", "10000", 10), pod: testutil.Pod("p", [2]string{"1", "3000"}),
			existing: []*corev1.Pod{testutil.Pod("e", [2]string{"1", "2000"})}, want: 50},
		{name: "empty pod uses defaults", node: testutil.Node("n", "1", "1000Mi", 10), pod: testutil.Pod("p", [2]string{"", ""}), want: 85},
		{name: "empty node", node: testutil.Node("n", "4", "10000", 10), pod: testutil.Pod("p", [2]string{"0", "0"}), want: 100},
		{name: "over capacity", node: testutil.Node("n", "1", "10000", 10), pod: testutil.Pod("p", [2]string{"2", "5000"}), want: 25},
		{name: "no allocatable", node: testutil.Node("n", "", "", 10), pod: testutil.Pod("p", [2]string{"1", "1"}), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scoreOf(t, &Fit{}, tt.pod, testutil.NodeInfo(tt.node, tt.existing...)); got != tt.want {
				t.Fatalf("score = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestBalancedAllocation(t *testing.T) {
	tests := []struct {
		name     string
		node     *corev1.Node
		pod      *corev1.Pod
		existing []*corev1.Pod
		want     int64
	}{
		{name: "balanced", node: testutil.Node("n", "4", "10000", 10), pod: testutil.Pod("p", [2]string{"1", "3000"}),
			existing: []*corev1.Pod{testutil.Pod("e", [2]string{"1", "2000"})}, want: 100},
		{name: "cpu heavy", node: testutil.Node("n", "4", "10000", 10), pod: testutil.Pod("p", [2]string{"3", ""}),
			existing: []*corev1.Pod{testutil.Pod("e", [2]string{"1", "2000"})}, want: 60},
		{name: "capped at one", node: testutil.Node("n", "1", "10000", 10), pod: testutil.Pod("p", [2]string{"2", ""}), want: 50},
		{name: "no requests", node: testutil.Node("n", "4", "10000", 10), pod: testutil.Pod("p", [2]string{"", ""}), want: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scoreOf(t, &BalancedAllocation{}, tt.pod, testutil.NodeInfo(tt.node, tt.existing...)); got != tt.want {
				t.Fatalf("score = %d, want %d", got, tt.want)
			}
		})
	}
}
