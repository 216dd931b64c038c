package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"skiff.dev/scheduler/app"
)

const zoneKey = corev1.LabelTopologyZone

func zoneNode(zone, host string) map[string]string {
	return map[string]string{zoneKey: zone, corev1.LabelHostname: host}
}

func labels(l map[string]string) podOpt { return func(p *corev1.Pod) { p.Labels = l } }

func TestSpreadAcrossZonesDoNotSchedule(t *testing.T) {
	t.Parallel()
	e := start(t)
	// Zone a has two nodes, so spreading by node alone would put half the
	// pods in zone a.
	e.node("a1", "8", "16Gi", 110, zoneNode("a", "a1"))
	e.node("a2", "8", "16Gi", 110, zoneNode("a", "a2"))
	e.node("b1", "8", "16Gi", 110, zoneNode("b", "b1"))
	e.node("c1", "8", "16Gi", 110, zoneNode("c", "c1"))
	web := map[string]string{"app": "web", "pod-template-hash": "5d8f"}
	spreadByZone := func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: zoneKey, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MatchLabelKeys: []string{"pod-template-hash"},
		}}
	}
	// Pods of another revision do not count; if they did, zone b could
	// take no new pod.
	for i := 0; i < 2; i++ {
		e.pod(fmt.Sprintf("old-rev-%d", i), "100m", labels(map[string]string{"app": "web", "pod-template-hash": "0000"}),
			func(p *corev1.Pod) { p.Spec.NodeName = "b1" })
	}
	for i := 0; i < 6; i++ {
		e.pod(fmt.Sprintf("web-%d", i), "100m", labels(web), spreadByZone)
	}
	perZone := map[string]int{}
	for i := 0; i < 6; i++ {
		n := e.waitBound(fmt.Sprintf("web-%d", i))
		perZone[map[string]string{"a1": "a", "a2": "a", "b1": "b", "c1": "c"}[n]]++
	}
	want := map[string]int{"a": 2, "b": 2, "c": 2}
	for z, c := range want {
		if perZone[z] != c {
			t.Fatalf("pods per zone = %v, want %v", perZone, want)
		}
	}
	// Zone c's node is cordoned but still a domain: from a:2 b:2 c:2 two
	// more pods fit in a and b (skew 1), a third would make skew 2.
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, "c1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Spec.Unschedulable = true
	if _, err := e.client.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web-6", "web-7"} {
		e.pod(name, "100m", labels(web), spreadByZone)
		if n := e.waitBound(name); n == "c1" {
			t.Fatalf("%s went to the cordoned node", name)
		}
	}
	e.pod("web-8", "100m", labels(web), spreadByZone)
	e.waitUnschedulable("web-8", "0/4 nodes are available: 1 node(s) were unschedulable, 3 node(s) didn't match pod topology spread constraints. "+
		"preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod..")
}

func TestAntiAffinityKeepsPodsApart(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.node("node-a", "4", "8Gi", 110, map[string]string{corev1.LabelHostname: "node-a"})
	e.node("node-b", "4", "8Gi", 110, map[string]string{corev1.LabelHostname: "node-b"})
	cache := map[string]string{"app": "cache"}
	apart := func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: cache}, TopologyKey: corev1.LabelHostname,
			}},
		}}
	}
	e.pod("cache-0", "100m", labels(cache), apart)
	e.pod("cache-1", "100m", labels(cache), apart)
	n0, n1 := e.waitBound("cache-0"), e.waitBound("cache-1")
	if n0 == n1 {
		t.Fatalf("both pods on %s", n0)
	}
	e.pod("cache-2", "100m", labels(cache), apart)
	e.waitUnschedulable("cache-2", "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. "+
		"preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..")

	// A pod with affinity to the cache lands beside one; deleting a cache
	// pod frees a node for the pending one.
	e.pod("client", "100m", func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: cache}, TopologyKey: corev1.LabelHostname,
			}},
		}}
	})
	e.waitBound("client")
	if err := e.client.CoreV1().Pods("default").Delete(e.ctx, "cache-0", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if n := e.waitBound("cache-2"); n != n0 {
		t.Fatalf("cache-2 went to %s, want the freed %s", n, n0)
	}
}

func TestProfileFromConfigMostAllocated(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *app.Options, kubeconfig string) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packer
  plugins:
    score:
      disabled:
      - name: '*'
      enabled:
      - name: NodeResourcesFit
        weight: 1
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
`, kubeconfig)
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		o.ConfigFile = path
		o.Client.Kubeconfig = "" // the file's clientConnection is used
	})
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		e.node(n, "4", "8Gi", 110, map[string]string{corev1.LabelHostname: n})
	}
	packed := func(p *corev1.Pod) { p.Spec.SchedulerName = "bin-packer" }
	// One at a time, so each pod sees the previous one's binding.
	var first string
	for i := 0; i < 5; i++ {
		name := fmt.Sprintf("packed-%d", i)
		e.pod(name, "500m", packed)
		n := e.waitBound(name)
		if first == "" {
			first = n
		}
		if n != first {
			t.Fatalf("%s went to %s, want %s with the others", name, n, first)
		}
	}
	// The default profile, served by the same scheduler, still spreads.
	e.pod("spread", "500m")
	if n := e.waitBound("spread"); n == first {
		t.Fatalf("the default profile placed its pod on the packed node %s", n)
	}
	// Events name the profile.
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, ev := range l.Items {
			if ev.InvolvedObject.Name == "packed-0" && ev.Reason == "Scheduled" && ev.Source.Component == "bin-packer" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Scheduled event from bin-packer: %v", err)
	}
}

func TestSystemDefaultSpreadingByReplicaSet(t *testing.T) {
	t.Parallel()
	// A profile that scores by topology spread only, so the system default
	// constraints alone decide.
	e := start(t, func(o *app.Options, kubeconfig string) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: '*'
      enabled:
      - name: PodTopologySpread
`, kubeconfig)
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		o.ConfigFile = path
	})
	e.node("a1", "8", "16Gi", 110, zoneNode("a", "a1"))
	e.node("a2", "8", "16Gi", 110, zoneNode("a", "a2"))
	e.node("b1", "8", "16Gi", 110, zoneNode("b", "b1"))
	web := map[string]string{"app": "web"}
	one := int32(1)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-5d8f", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: web},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: web},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
	}
	rs, err := e.client.AppsV1().ReplicaSets("default").Create(e.ctx, rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	owned := func(p *corev1.Pod) {
		p.Labels = web
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}
	}
	// Two replicas already run in zone b.
	for i := 0; i < 2; i++ {
		e.pod(fmt.Sprintf("web-b-%d", i), "100m", owned, func(p *corev1.Pod) { p.Spec.NodeName = "b1" })
	}
	// The system defaults (hostname maxSkew 3, zone maxSkew 5, selector
	// from the ReplicaSet) send the next three to zone a, the first two to
	// different nodes.
	var nodes []string
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("web-%d", i)
		e.pod(name, "100m", owned)
		nodes = append(nodes, e.waitBound(name))
	}
	for _, n := range nodes {
		if n == "b1" {
			t.Fatalf("pods went to %v; zone b already had two", nodes)
		}
	}
	if nodes[0] == nodes[1] {
		t.Fatalf("pods went to %v; the second should avoid the first's node", nodes)
	}
}
