package scheduler

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestNodeSchedulingPropertiesChanged(t *testing.T) {
	base := &corev1.Node{}
	base.Labels = map[string]string{"a": "1"}
	base.Spec.Taints = []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}}
	base.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	tests := []struct {
		name   string
		change func(n *corev1.Node)
		want   bool
	}{
		{name: "heartbeat only", change: func(n *corev1.Node) {
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		}, want: false},
		{name: "same cpu spelled differently", change: func(n *corev1.Node) {
			n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m")}
		}, want: false},
		{name: "label", change: func(n *corev1.Node) { n.Labels = map[string]string{"a": "2"} }, want: true},
		{name: "taint value", change: func(n *corev1.Node) { n.Spec.Taints[0].Value = "w" }, want: true},
		{name: "taint removed", change: func(n *corev1.Node) { n.Spec.Taints = nil }, want: true},
		{name: "uncordoned", change: func(n *corev1.Node) { n.Spec.Unschedulable = true }, want: true},
		{name: "allocatable", change: func(n *corev1.Node) {
			n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
		}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := base.DeepCopy()
			tt.change(n)
			if got := nodeSchedulingPropertiesChanged(base, n); got != tt.want {
				t.Fatalf("changed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTruncateMessage(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{name: "short", in: "0/1 nodes are available: 1 Too many pods.", want: 41},
		{name: "long", in: strings.Repeat("x", 2000), want: 1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := truncateMessage(tt.in)
			if len(got) != tt.want {
				t.Fatalf("len = %d, want %d", len(got), tt.want)
			}
			if len(tt.in) > 1024 && !strings.HasSuffix(got, " ...") {
				t.Fatalf("no ellipsis: %q", got[len(got)-10:])
			}
		})
	}
}

func TestNumFeasibleNodesToFind(t *testing.T) {
	p := func(v int32) *int32 { return &v }
	tests := []struct {
		name    string
		global  int32
		profile *int32
		nodes   int
		want    int
	}{
		{name: "small cluster: all", nodes: 99, want: 99},
		{name: "adaptive at 1000 nodes: 42%", nodes: 1000, want: 420},
		{name: "adaptive floor of 5%", nodes: 6000, want: 300},
		{name: "never fewer than 100", nodes: 150, global: 10, want: 100},
		{name: "global setting", nodes: 1000, global: 70, want: 700},
		{name: "profile setting wins", nodes: 1000, global: 70, profile: p(100), want: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Scheduler{percentage: tt.global}
			if got := s.numFeasibleNodesToFind(tt.profile, tt.nodes); got != tt.want {
				t.Fatalf("got %d, want %d", got, tt.want)
			}
		})
	}
}
