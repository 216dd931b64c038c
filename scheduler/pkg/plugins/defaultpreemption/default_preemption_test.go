package defaultpreemption

import (
	"context"
	"reflect"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/interpodaffinity"
	"skiff.dev/scheduler/pkg/plugins/noderesources"
	"skiff.dev/scheduler/pkg/plugins/tainttoleration"
	"skiff.dev/scheduler/pkg/plugins/testutil"
)

func prio(p *corev1.Pod, v int32) *corev1.Pod {
	p.Spec.Priority = &v
	return p
}

func onNode(p *corev1.Pod, node string) *corev1.Pod {
	p.Spec.NodeName = node
	return p
}

func cpuPod(name string, cpu string, priority int32) *corev1.Pod {
	return prio(testutil.Pod(name, [2]string{cpu, ""}), priority)
}

func antiAffinity(p *corev1.Pod, sel map[string]string) *corev1.Pod {
	p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: sel}, TopologyKey: corev1.LabelHostname,
		}},
	}}
	return p
}

func TestPostFilter(t *testing.T) {
	node := func(name string) *corev1.Node {
		n := testutil.Node(name, "2", "4Gi", 110)
		n.Labels = map[string]string{corev1.LabelHostname: name}
		return n
	}
	tainted := node("tainted")
	tainted.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	never := corev1.PreemptNever
	tests := []struct {
		name        string
		nodes       []*corev1.Node
		existing    []*corev1.Pod
		pod         *corev1.Pod
		wantNode    string
		wantVictims []string
		wantMsg     string
	}{
		{name: "the node whose most important victim matters least",
			nodes: []*corev1.Node{node("n1"), node("n2")},
			existing: []*corev1.Pod{
				onNode(cpuPod("a", "1", 10), "n1"), onNode(cpuPod("b", "1", 5), "n1"),
				onNode(cpuPod("c", "2", 50), "n2"),
			},
			pod: cpuPod("p", "1", 100), wantNode: "n1", wantVictims: []string{"b"}},
		{name: "the fewest victims at equal priority",
			nodes: []*corev1.Node{node("n1"), node("n2")},
			existing: []*corev1.Pod{
				onNode(cpuPod("a", "1", 5), "n1"), onNode(cpuPod("b", "1", 5), "n1"),
				onNode(cpuPod("c", "2", 5), "n2"),
			},
			pod: cpuPod("p", "2", 100), wantNode: "n2", wantVictims: []string{"c"}},
		{name: "no lower-priority pods",
			nodes:    []*corev1.Node{node("n1")},
			existing: []*corev1.Pod{onNode(cpuPod("a", "2", 100), "n1")},
			pod:      cpuPod("p", "1", 100),
			wantMsg:  "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
		{name: "evicting every lower pod is not enough",
			nodes:    []*corev1.Node{node("n1")},
			existing: []*corev1.Pod{onNode(cpuPod("a", "1500m", 100), "n1"), onNode(cpuPod("b", "500m", 1), "n1")},
			pod:      cpuPod("p", "1", 100),
			wantMsg:  "preemption: 0/1 nodes are available: 1 Insufficient cpu."},
		{name: "preemptionPolicy Never",
			nodes:    []*corev1.Node{node("n1")},
			existing: []*corev1.Pod{onNode(cpuPod("a", "2", 1), "n1")},
			pod: func() *corev1.Pod {
				p := cpuPod("p", "1", 100)
				p.Spec.PreemptionPolicy = &never
				return p
			}(),
			wantMsg: "preemption: not eligible due to preemptionPolicy=Never."},
		{name: "nodes rejected for good are not helped",
			nodes:    []*corev1.Node{node("n1"), tainted},
			existing: []*corev1.Pod{onNode(cpuPod("a", "2", 100), "n1"), onNode(cpuPod("b", "2", 1), "tainted")},
			pod:      cpuPod("p", "1", 100),
			wantMsg:  "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."},
		{name: "a victim that the pod's anti-affinity rejects",
			nodes: []*corev1.Node{node("n1"), node("n2")},
			existing: []*corev1.Pod{
				onNode(prio(testutil.LabeledPod("low", map[string]string{"app": "x"}), 1), "n1"),
				onNode(prio(testutil.LabeledPod("high", map[string]string{"app": "x"}), 1000), "n2"),
			},
			pod: antiAffinity(prio(testutil.Pod("p"), 100), map[string]string{"app": "x"}), wantNode: "n1", wantVictims: []string{"low"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nis []*framework.NodeInfo
			client := fake.NewSimpleClientset()
			for _, n := range tt.nodes {
				var pods []*corev1.Pod
				for _, p := range tt.existing {
					if p.Spec.NodeName == n.Name {
						pods = append(pods, p)
						if _, err := client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
							t.Fatal(err)
						}
					}
				}
				nis = append(nis, testutil.NodeInfo(n, pods...))
			}
			r := framework.Registry{
				noderesources.Name:    noderesources.NewFit,
				tainttoleration.Name:  framework.NoArgs(tainttoleration.New),
				interpodaffinity.Name: interpodaffinity.New,
				Name:                  New,
			}
			recorder := record.NewFakeRecorder(10)
			fwk, err := framework.New(r, framework.Profile{SchedulerName: "default-scheduler", Plugins: framework.Plugins{MultiPoint: framework.PluginSet{Enabled: []framework.PluginRef{
				{Name: tainttoleration.Name}, {Name: noderesources.Name}, {Name: interpodaffinity.Name}, {Name: Name},
			}}}}, testutil.Handle(framework.Listers{}, nis...), framework.WithClientSet(client), framework.WithEventRecorder(recorder))
			if err != nil {
				t.Fatal(err)
			}
			ctx, state := context.Background(), framework.NewCycleState()
			if st := fwk.RunPreFilterPlugins(ctx, state, tt.pod); !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			statuses := map[string]*framework.Status{}
			for _, ni := range nis {
				st := fwk.RunFilterPlugins(ctx, state, tt.pod, ni)
				if st.IsSuccess() {
					t.Fatalf("the pod fits %s without preemption", ni.Node().Name)
				}
				statuses[ni.Node().Name] = st
			}
			result, st := fwk.RunPostFilterPlugins(ctx, state, tt.pod, statuses)
			if tt.wantMsg != "" {
				if st.IsSuccess() || st.Message() != tt.wantMsg {
					t.Fatalf("status %v %q, want %q", st.Code(), st.Message(), tt.wantMsg)
				}
				if result != nil && result.NominatedNodeName != "" {
					t.Fatalf("nominated %q", result.NominatedNodeName)
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("status %v %q", st.Code(), st.Message())
			}
			if result.NominatedNodeName != tt.wantNode {
				t.Fatalf("nominated %q, want %q", result.NominatedNodeName, tt.wantNode)
			}
			list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			left := map[string]bool{}
			for _, p := range list.Items {
				left[p.Name] = true
			}
			var deleted []string
			for _, p := range tt.existing {
				if !left[p.Name] {
					deleted = append(deleted, p.Name)
				}
			}
			sort.Strings(deleted)
			if !reflect.DeepEqual(deleted, tt.wantVictims) {
				t.Fatalf("deleted %v, want %v", deleted, tt.wantVictims)
			}
			for range tt.wantVictims {
				ev := <-recorder.Events
				want := "Normal Preempted Preempted by pod " + string(tt.pod.UID) + " on node " + tt.wantNode
				if ev != want {
					t.Fatalf("event %q, want %q", ev, want)
				}
			}
		})
	}
}
