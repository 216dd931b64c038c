package authz

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/authn"
)

// A kubelet may get the claims of its pods, their ephemeral volumes'
// claims (<pod>-<volume>) included, and list and watch claims (the
// local-path provisioner); another node may not get them.
func TestNodeAuthorizerClaims(t *testing.T) {
	n := NewNode()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "a", Volumes: []corev1.Volume{
		{Name: "d", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		{Name: "s", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
	}}}
	n.Apply(watch.Event{Type: watch.Added, Object: pod})
	nodeA := &authn.User{Name: "system:node:a", Groups: []string{"system:nodes"}}
	nodeB := &authn.User{Name: "system:node:b", Groups: []string{"system:nodes"}}
	decide := func(u *authn.User, verb, name string) Decision {
		d, _, _ := n.Authorize(context.Background(), Attributes{User: u, ResourceRequest: true, Verb: verb, Resource: "persistentvolumeclaims", Namespace: "ns", Name: name})
		return d
	}
	for _, name := range []string{"data", "p-s"} {
		if decide(nodeA, "get", name) != Allow || decide(nodeB, "get", name) != NoOpinion {
			t.Errorf("get %s: node a %v, node b %v", name, decide(nodeA, "get", name), decide(nodeB, "get", name))
		}
	}
	if decide(nodeB, "list", "") != Allow || decide(nodeB, "watch", "") != Allow {
		t.Error("a node may not list or watch claims")
	}
	if decide(nodeB, "update", "data") != NoOpinion {
		t.Error("a node may update a claim")
	}
}
