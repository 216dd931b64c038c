package framework

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// onePodPerNode rejects nodes that already hold a pod.
type onePodPerNode struct{}

func (onePodPerNode) Name() string { return "OnePodPerNode" }
func (onePodPerNode) Filter(_ context.Context, _ *CycleState, _ *corev1.Pod, ni *NodeInfo) *Status {
	if len(ni.Pods) > 0 {
		return NewStatus(Unschedulable, "node is taken")
	}
	return nil
}

func priorityPod(name string, priority int32) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}, Spec: corev1.PodSpec{Priority: &priority}}
}

func TestNominatedPods(t *testing.T) {
	n := NewNominator()
	r := Registry{"OnePodPerNode": NoArgs(func() (Plugin, error) { return onePodPerNode{}, nil })}
	f, err := New(r, multiPoint("p", PluginRef{Name: "OnePodPerNode"}), NewHandle(Listers{}), WithNominator(n))
	if err != nil {
		t.Fatal(err)
	}
	ctx, node := context.Background(), nodeInfo("a")
	high, low, mid := priorityPod("high", 100), priorityPod("low", 1), priorityPod("mid", 50)
	n.Set(high, "a")
	tests := []struct {
		name string
		pod  *corev1.Pod
		want Code
	}{
		{name: "a lower-priority pod must leave room for the nominated one", pod: low, want: Unschedulable},
		{name: "an equal-priority pod too", pod: priorityPod("high2", 100), want: Unschedulable},
		{name: "the nominated pod itself fits", pod: high, want: Success},
		{name: "a higher-priority pod ignores the nomination", pod: priorityPod("top", 1000), want: Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.RunFilterPluginsWithNominatedPods(ctx, NewCycleState(), tt.pod, node).Code(); got != tt.want {
				t.Fatalf("code = %v, want %v", got, tt.want)
			}
		})
	}
	if len(node.Pods) != 0 {
		t.Fatal("the nominated pod was added to the node itself")
	}
	n.Set(mid, "a")
	n.Set(high, "b") // moved
	if got := n.NominatedPodsForNode("a"); len(got) != 1 || got[0].Pod.Name != "mid" {
		t.Fatalf("nominated to a: %v", got)
	}
	n.Set(mid, "")
	n.Delete(high.UID)
	if len(n.NominatedPodsForNode("a")) != 0 || len(n.NominatedPodsForNode("b")) != 0 {
		t.Fatal("nominations were not forgotten")
	}
	if st := f.RunFilterPluginsWithNominatedPods(ctx, NewCycleState(), low, node); !st.IsSuccess() {
		t.Fatalf("without nominations: %v", st.Message())
	}
}
