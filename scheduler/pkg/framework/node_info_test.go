package framework

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func affinityPod(name string, anti bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)}}
	term := corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, TopologyKey: "zone"}
	if anti {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}}
	} else {
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term}}}}
	}
	return p
}

func TestNodeInfoAffinityLists(t *testing.T) {
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain", UID: "plain"}}
	pref, anti := affinityPod("pref", false), affinityPod("anti", true)
	ni := NewNodeInfo(plain, pref, anti)
	ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Images: []corev1.ContainerImage{
		{Names: []string{"nginx:1", "docker.io/library/nginx:1"}, SizeBytes: 42},
	}}})
	if len(ni.PodsWithAffinity) != 2 || len(ni.PodsWithRequiredAntiAffinity) != 1 || ni.PodsWithRequiredAntiAffinity[0].Pod.Name != "anti" {
		t.Fatalf("lists: %d with affinity, %d with required anti-affinity", len(ni.PodsWithAffinity), len(ni.PodsWithRequiredAntiAffinity))
	}
	if ni.ImageSizes["docker.io/library/nginx:1"] != 42 || ni.ImageSizes["nginx:1"] != 42 {
		t.Fatalf("images: %v", ni.ImageSizes)
	}
	// The terms are parsed once, with the pod's namespace as default.
	if terms := ni.PodsWithRequiredAntiAffinity[0].RequiredAntiAffinityTerms; len(terms) != 1 || !terms[0].Namespaces.Has("ns") {
		t.Fatalf("parsed terms: %+v", terms)
	}
	clone := ni.Clone()
	clone.RemovePod(anti)
	if len(clone.PodsWithRequiredAntiAffinity) != 0 || len(clone.PodsWithAffinity) != 1 || len(clone.Pods) != 2 {
		t.Fatalf("clone after removal: %d pods, %d with affinity, %d with anti-affinity", len(clone.Pods), len(clone.PodsWithAffinity), len(clone.PodsWithRequiredAntiAffinity))
	}
	if len(ni.PodsWithRequiredAntiAffinity) != 1 || len(ni.Pods) != 3 {
		t.Fatal("removing from the clone changed the original")
	}
	snap := NewSnapshot([]*NodeInfo{ni, clone})
	if len(snap.HavePodsWithRequiredAntiAffinityList()) != 1 || len(snap.HavePodsWithAffinityList()) != 2 {
		t.Fatal("snapshot lists")
	}
	if _, err := snap.Get("missing"); err == nil {
		t.Fatal("Get of a missing node succeeded")
	}
}

type counter struct{ n int }

func (c *counter) Clone() any { return &counter{n: c.n} }

func TestCycleStateClone(t *testing.T) {
	s := NewCycleState()
	s.Write("c", &counter{n: 1})
	s.Write("shared", "read-only")
	s.skipFilter("P")
	c := s.Clone()
	v, _ := c.Read("c")
	v.(*counter).n = 5
	orig, _ := s.Read("c")
	if orig.(*counter).n != 1 {
		t.Fatal("the clone shares a Cloner value")
	}
	if !c.filterSkipped("P") {
		t.Fatal("the clone lost the skipped filters")
	}
	c.skipFilter("Q")
	if s.filterSkipped("Q") {
		t.Fatal("the clone shares the skip set")
	}
}
