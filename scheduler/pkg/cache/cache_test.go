package cache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/scheduler/pkg/framework"
)

func node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("10"),
	}}}
}

func pod(name, nodeName, cpu string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
	}
}

func requested(t *testing.T, c *Cache) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, ni := range c.Snapshot() {
		out[ni.Node().Name] = ni.Requested.MilliCPU
	}
	return out
}

func TestAssumeLifecycle(t *testing.T) {
	tests := []struct {
		name string
		run  func(c *Cache)
		want map[string]int64
	}{
		{name: "assumed pods count", run: func(c *Cache) {
			_ = c.AssumePod(pod("p1", "a", "500m"))
			_ = c.AssumePod(pod("p2", "a", "700m"))
		}, want: map[string]int64{"a": 1200, "b": 0}},
		{name: "forget after failed binding", run: func(c *Cache) {
			p := pod("p1", "a", "500m")
			_ = c.AssumePod(p)
			c.ForgetPod(p)
		}, want: map[string]int64{"a": 0, "b": 0}},
		{name: "informer confirms", run: func(c *Cache) {
			p := pod("p1", "a", "500m")
			_ = c.AssumePod(p)
			c.FinishBinding(p)
			c.AddPod(p)
			c.ForgetPod(p) // no effect once confirmed
		}, want: map[string]int64{"a": 500, "b": 0}},
		{name: "informer reports another node", run: func(c *Cache) {
			_ = c.AssumePod(pod("p1", "a", "500m"))
			c.AddPod(pod("p1", "b", "500m"))
		}, want: map[string]int64{"a": 0, "b": 500}},
		{name: "delete", run: func(c *Cache) {
			c.AddPod(pod("p1", "a", "500m"))
			c.AddPod(pod("p2", "a", "1"))
			c.RemovePod(pod("p1", "a", "500m"))
		}, want: map[string]int64{"a": 1000, "b": 0}},
		{name: "update", run: func(c *Cache) {
			c.AddPod(pod("p1", "a", "500m"))
			c.UpdatePod(pod("p1", "a", "500m"), pod("p1", "a", "1500m"))
		}, want: map[string]int64{"a": 1500, "b": 0}},
		{name: "pods of an unknown node are kept but not listed", run: func(c *Cache) {
			c.AddPod(pod("p1", "z", "500m"))
		}, want: map[string]int64{"a": 0, "b": 0}},
		{name: "node removed", run: func(c *Cache) {
			c.RemoveNode(node("b"))
		}, want: map[string]int64{"a": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			c.AddNode(node("a"))
			c.AddNode(node("b"))
			tt.run(c)
			got := requested(t, c)
			if len(got) != len(tt.want) {
				t.Fatalf("requested = %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Fatalf("requested = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestAssumeErrors(t *testing.T) {
	c := New()
	if err := c.AssumePod(pod("p", "", "1")); err == nil {
		t.Fatal("assumed a pod without a node")
	}
	if err := c.AssumePod(pod("p", "a", "1")); err != nil {
		t.Fatal(err)
	}
	if !c.IsAssumed("p") {
		t.Fatal("not assumed")
	}
	if err := c.AssumePod(pod("p", "a", "1")); err == nil {
		t.Fatal("assumed twice")
	}
}

func TestSnapshotIsACopy(t *testing.T) {
	c := New()
	c.AddNode(node("a"))
	snap := c.Snapshot()
	c.AddPod(pod("p", "a", "1"))
	if snap[0].Requested.MilliCPU != 0 || len(snap[0].Pods) != 0 {
		t.Fatal("snapshot changed with the cache")
	}
}

func TestSnapshotCopiesOnlyChangedNodes(t *testing.T) {
	c := New()
	for _, n := range []string{"b", "a", "c"} {
		c.AddNode(node(n))
	}
	first := c.Snapshot()
	if len(first) != 3 || first[0].Node().Name != "a" || first[2].Node().Name != "c" {
		t.Fatalf("first snapshot: %v", names(first))
	}
	if err := c.AssumePod(pod("p", "b", "500m")); err != nil {
		t.Fatal(err)
	}
	second := c.Snapshot()
	if second[0] != first[0] || second[2] != first[2] {
		t.Fatal("unchanged nodes were copied again")
	}
	if second[1] == first[1] || second[1].Requested.MilliCPU != 500 || first[1].Requested.MilliCPU != 0 {
		t.Fatalf("changed node: first %d, second %d", first[1].Requested.MilliCPU, second[1].Requested.MilliCPU)
	}
	c.RemoveNode(node("a"))
	c.AddNode(node("d"))
	c.AddPod(pod("q", "z", "1")) // a node without a Node object is not listed
	third := c.Snapshot()
	if got := names(third); len(got) != 3 || got[0] != "b" || got[1] != "c" || got[2] != "d" {
		t.Fatalf("third snapshot: %v", got)
	}
	if len(second) != 3 || second[0].Node().Name != "a" {
		t.Fatal("a later snapshot changed an earlier one")
	}
}

func names(nis []*framework.NodeInfo) []string {
	var out []string
	for _, ni := range nis {
		out = append(out, ni.Node().Name)
	}
	return out
}
