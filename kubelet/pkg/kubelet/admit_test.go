package kubelet

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"

	"skiff.dev/kubelet/pkg/pod"
)

func admitNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelOSStable: "linux", "zone": "a"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi"),
			corev1.ResourcePods: resource.MustParse("3"),
		}},
	}
}

func admitPod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func withHostPort(port int32, ip string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port, HostIP: ip})
	}
}

func withCPU(q string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
	}
}

func TestAdmitGeneral(t *testing.T) {
	tests := []struct {
		name        string
		node        *corev1.Node
		others      []*corev1.Pod
		pod         *corev1.Pod
		wantReason  string
		wantMessage string
	}{
		{name: "fits", node: admitNode(), others: []*corev1.Pod{admitPod("a", withHostPort(80, ""))}, pod: admitPod("p", withHostPort(81, ""))},
		{name: "host port taken", node: admitNode(), others: []*corev1.Pod{admitPod("a", withHostPort(21017, ""))}, pod: admitPod("p", withHostPort(21017, "")),
			wantReason: "NodePorts", wantMessage: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"},
		{name: "host port on another IP", others: []*corev1.Pod{admitPod("a", withHostPort(80, "127.0.0.1"))}, pod: admitPod("p", withHostPort(80, "127.0.0.2"))},
		{name: "host port on a wildcard", others: []*corev1.Pod{admitPod("a", withHostPort(80, "127.0.0.1"))}, pod: admitPod("p", withHostPort(80, "")),
			wantReason: "NodePorts"},
		{name: "host port on another protocol", others: []*corev1.Pod{admitPod("a", withHostPort(53, ""))}, pod: admitPod("p", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 53, HostPort: 53, Protocol: corev1.ProtocolUDP}}
		})},
		{name: "out of cpu", node: admitNode(), others: []*corev1.Pod{admitPod("a", withCPU("1500m"))}, pod: admitPod("p", withCPU("600m")),
			wantReason: "OutOfcpu", wantMessage: "Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000"},
		{name: "init container request counts", node: admitNode(), pod: admitPod("p", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}}}
		}), wantReason: "OutOfmemory"},
		{name: "too many pods", node: admitNode(), others: []*corev1.Pod{admitPod("a"), admitPod("b"), admitPod("c")}, pod: admitPod("p"),
			wantReason: "OutOfpods", wantMessage: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"},
		{name: "unknown extended resource left out", node: admitNode(), pod: admitPod("p", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}
		})},
		{name: "node selector", node: admitNode(), pod: admitPod("p", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "b"} }),
			wantReason: "NodeAffinity", wantMessage: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
		{name: "os selector", node: admitNode(), pod: admitPod("p", func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{corev1.LabelOSStable: "windows"}
		}), wantReason: "PodOSSelectorNodeLabelDoesNotMatch"},
		{name: "os field", pod: admitPod("p", func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Windows} }), wantReason: "PodOSNotSupported"},
		{name: "NoExecute taint", node: func() *corev1.Node {
			n := admitNode()
			n.Spec.Taints = []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoExecute}, {Key: "s", Effect: corev1.TaintEffectNoSchedule}}
			return n
		}(), pod: admitPod("p"), wantReason: "TaintToleration"},
		{name: "NoExecute taint tolerated, NoSchedule ignored", node: func() *corev1.Node {
			n := admitNode()
			n.Spec.Taints = []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoExecute}, {Key: "s", Effect: corev1.TaintEffectNoSchedule}}
			return n
		}(), pod: admitPod("p", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason, msg := AdmitGeneral(tc.node, tc.others, tc.pod)
			if ok != (tc.wantReason == "") || reason != tc.wantReason {
				t.Fatalf("AdmitGeneral() = %v, %q, %q; want reason %q", ok, reason, msg, tc.wantReason)
			}
			if tc.wantMessage != "" && msg != tc.wantMessage {
				t.Errorf("message = %q, want %q", msg, tc.wantMessage)
			}
		})
	}
}

// A refused pod stays refused while its Failed status is on its way (the
// host port it wanted may free up meanwhile), and a pod whose phase is
// terminal no longer holds its host ports.
func TestKubeletRejectionIsFinal(t *testing.T) {
	a := admitPod("a", withHostPort(80, ""))
	a.UID, a.Status.Phase = "ua", corev1.PodPending
	b := admitPod("b", withHostPort(80, ""))
	b.UID, b.Status.Phase = "ub", corev1.PodPending
	client := fake.NewSimpleClientset(a.DeepCopy(), b.DeepCopy())
	// a's worker never gets past preparing: it stays active.
	k := New(Options{NodeName: "n1", Client: client, Runtime: &fakeRuntime{}, Network: &fakeNetwork{}, Lifecycle: &pod.Lifecycle{Hooks: []pod.Hook{notReady{}}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		k.wg.Wait()
	}()
	k.update(ctx, a)
	k.update(ctx, b)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.CoreV1().Pods("ns").Get(ctx, "b", metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.PodFailed && got.Status.Reason == "NodePorts", nil
	}); err != nil {
		t.Fatalf("pod b was not marked Failed (NodePorts): %v", err)
	}
	// a ends (Failed); b's update, still Pending in this event, must not
	// start it now that the port is free.
	done := a.DeepCopy()
	done.Status.Phase = corev1.PodFailed
	k.update(ctx, done)
	k.update(ctx, b)
	k.mu.Lock()
	_, started := k.workers[b.UID]
	active := len(k.activePodsLocked())
	k.mu.Unlock()
	if started {
		t.Error("a refused pod was started later")
	}
	if active != 0 {
		t.Errorf("%d active pods, want none (a is Failed)", active)
	}
	// A new pod wanting the port is admitted.
	c := admitPod("c", withHostPort(80, ""))
	c.UID = "uc"
	if ok, reason, _ := AdmitGeneral(nil, k.ActivePods(), c); !ok {
		t.Errorf("pod c refused (%s) though a is Failed", reason)
	}
}

type notReady struct{}

func (notReady) Name() string                              { return "not-ready" }
func (notReady) Prepare(context.Context, *pod.State) error { return errors.New("not ready") }
