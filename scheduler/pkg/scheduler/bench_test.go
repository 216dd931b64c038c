package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedcache "skiff.dev/scheduler/pkg/cache"
	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/imagelocality"
	"skiff.dev/scheduler/pkg/plugins/interpodaffinity"
	"skiff.dev/scheduler/pkg/plugins/nodeaffinity"
	"skiff.dev/scheduler/pkg/plugins/nodename"
	"skiff.dev/scheduler/pkg/plugins/nodeports"
	"skiff.dev/scheduler/pkg/plugins/noderesources"
	"skiff.dev/scheduler/pkg/plugins/nodeunschedulable"
	"skiff.dev/scheduler/pkg/plugins/podtopologyspread"
	"skiff.dev/scheduler/pkg/plugins/tainttoleration"
)

// benchmarkSchedulePod times one scheduling cycle (snapshot, filter, score,
// assume) with the given plugins on 1,000 nodes holding 10 pods each, the
// shape of test/bench without the API server.
func benchmarkSchedulePod(b *testing.B, plugins framework.Plugins, registry framework.Registry) {
	c := schedcache.New()
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"), corev1.ResourcePods: resource.MustParse("110")}
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
	newPod := func(i int) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: "bench", UID: types.UID(fmt.Sprintf("pod-%d", i)), Labels: map[string]string{"app": "bench"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.local/pause:3", Resources: corev1.ResourceRequirements{Requests: req}}}}}
	}
	for n := 0; n < 1000; n++ {
		name := fmt.Sprintf("node-%04d", n)
		c.AddNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
			Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc}})
		for i := 0; i < 10; i++ {
			p := newPod(n*10 + i)
			p.Spec.NodeName = name
			c.AddPod(p)
		}
	}
	handle := framework.NewHandle(framework.Listers{})
	fwk, err := framework.New(registry, framework.Profile{SchedulerName: "default-scheduler", Plugins: plugins}, handle)
	if err != nil {
		b.Fatal(err)
	}
	s := &Scheduler{cache: c, handle: handle, rnd: rand.New(rand.NewPCG(1, 2))}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pod := newPod(100000 + i)
		host, err := s.schedulePod(ctx, fwk, framework.NewCycleState(), pod)
		if err != nil {
			b.Fatal(err)
		}
		pod.Spec.NodeName = host
		if err := c.AssumePod(pod); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSchedulePodDefaultPlugins(b *testing.B) {
	r := framework.Registry{
		nodeunschedulable.Name:               framework.NoArgs(nodeunschedulable.New),
		nodename.Name:                        framework.NoArgs(nodename.New),
		tainttoleration.Name:                 framework.NoArgs(tainttoleration.New),
		nodeaffinity.Name:                    framework.NoArgs(nodeaffinity.New),
		nodeports.Name:                       framework.NoArgs(nodeports.New),
		noderesources.Name:                   noderesources.NewFit,
		noderesources.BalancedAllocationName: noderesources.NewBalancedAllocation,
		podtopologyspread.Name:               podtopologyspread.New,
		interpodaffinity.Name:                interpodaffinity.New,
		imagelocality.Name:                   imagelocality.New,
	}
	var refs []framework.PluginRef
	for _, n := range []string{nodeunschedulable.Name, nodename.Name, tainttoleration.Name, nodeaffinity.Name, nodeports.Name,
		noderesources.Name, podtopologyspread.Name, interpodaffinity.Name, noderesources.BalancedAllocationName, imagelocality.Name} {
		refs = append(refs, framework.PluginRef{Name: n})
	}
	benchmarkSchedulePod(b, framework.Plugins{MultiPoint: framework.PluginSet{Enabled: refs}}, r)
}
