package testutil

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/scheduler/pkg/framework"
)

// Node returns a node with allocatable cpu, memory and pods.
func Node(name, cpu, mem string, pods int64) *corev1.Node {
	rl := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI)}
	if cpu != "" {
		rl[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		rl[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: rl}}
}

// NodeInfo wraps a node with pods.
func NodeInfo(node *corev1.Node, pods ...*corev1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}

// Pod returns a pod with one container per request pair (cpu, memory; "" for none).
func Pod(name string, reqs ...[2]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)}}
	for _, r := range reqs {
		p.Spec.Containers = append(p.Spec.Containers, Container(r[0], r[1]))
	}
	return p
}

// Container returns a container with the given requests ("" for none).
func Container(cpu, mem string) corev1.Container {
	c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}
	if cpu != "" {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return c
}

// Handle returns a framework handle whose snapshot holds nodes.
func Handle(l framework.Listers, nodes ...*framework.NodeInfo) *framework.StaticHandle {
	h := framework.NewHandle(l)
	h.SetSnapshot(framework.NewSnapshot(nodes))
	return h
}

// LabeledNode returns a node with allocatable room for 110 pods and the labels.
func LabeledNode(name string, labels map[string]string) *corev1.Node {
	n := Node(name, "4", "8Gi", 110)
	n.Labels = labels
	return n
}

// LabeledPod returns a pod in namespace default with the labels.
func LabeledPod(name string, labels map[string]string) *corev1.Pod {
	p := Pod(name, [2]string{"", ""})
	p.Labels = labels
	return p
}
