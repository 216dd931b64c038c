package authz

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/authn"
)

func TestRulesAllow(t *testing.T) {
	podsRead := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	tests := []struct {
		name string
		rule rbacv1.PolicyRule
		a    Attributes
		want bool
	}{
		{"verb and resource", podsRead, Attributes{ResourceRequest: true, Verb: "list", Resource: "pods"}, true},
		{"other verb", podsRead, Attributes{ResourceRequest: true, Verb: "delete", Resource: "pods"}, false},
		{"other group", podsRead, Attributes{ResourceRequest: true, Verb: "get", APIGroup: "apps", Resource: "pods"}, false},
		{"subresource needs its own rule", podsRead, Attributes{ResourceRequest: true, Verb: "get", Resource: "pods", Subresource: "log"}, false},
		{"star subresource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}},
			Attributes{ResourceRequest: true, Verb: "get", APIGroup: "apps", Resource: "deployments", Subresource: "scale"}, true},
		{"resource names", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}},
			Attributes{ResourceRequest: true, Verb: "get", Resource: "configmaps", Name: "b"}, false},
		{"resource names do not grant list", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}},
			Attributes{ResourceRequest: true, Verb: "list", Resource: "configmaps"}, false},
		{"non-resource prefix", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}},
			Attributes{Verb: "get", Path: "/apis/apps/v1"}, true},
		{"non-resource rule for a resource", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}},
			Attributes{ResourceRequest: true, Verb: "get", Resource: "pods"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RulesAllow(tc.a, []rbacv1.PolicyRule{tc.rule}); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRBACBindingsAggregationAndReset(t *testing.T) {
	r := NewRBAC()
	apply := func(ev watch.EventType, obj runtime.Object) { r.Apply(watch.Event{Type: ev, Object: obj}) }
	apply(watch.Added, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"agg": "view"}}}}})
	apply(watch.Added, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view-pods", Labels: map[string]string{"agg": "view"}},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}})
	apply(watch.Added, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "team"},
		RoleRef:  rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "robot"}}})
	robot := &authn.User{Name: "system:serviceaccount:team:robot"}
	get := func(ns string) Decision {
		d, _, _ := r.Authorize(context.Background(), Attributes{User: robot, ResourceRequest: true, Verb: "get", Resource: "pods", Namespace: ns})
		return d
	}
	if get("team") != Allow {
		t.Error("service account subject of a RoleBinding to an aggregated ClusterRole is not allowed")
	}
	if get("other") != NoOpinion {
		t.Error("a RoleBinding granted access in another namespace")
	}
	r.Reset("rolebindings")
	if get("team") != NoOpinion {
		t.Error("Reset kept a binding")
	}
	if !r.HasClusterObjects([]string{"view", "view-pods"}, nil) {
		t.Error("HasClusterObjects: the applied ClusterRoles are missing")
	}
	if r.HasClusterObjects([]string{"view"}, []string{"cluster-admin"}) {
		t.Error("HasClusterObjects: a ClusterRoleBinding never applied is reported present")
	}
}

func TestNodeAuthorizerGraph(t *testing.T) {
	n := NewNode()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "a",
		Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s1"}}}}}}
	n.Apply(watch.Event{Type: watch.Added, Object: pod})
	nodeA := &authn.User{Name: "system:node:a", Groups: []string{"system:nodes"}}
	nodeB := &authn.User{Name: "system:node:b", Groups: []string{"system:nodes"}}
	secret := func(u *authn.User) Decision {
		d, _, _ := n.Authorize(context.Background(), Attributes{User: u, ResourceRequest: true, Verb: "get", Resource: "secrets", Namespace: "ns", Name: "s1"})
		return d
	}
	if secret(nodeA) != Allow || secret(nodeB) != NoOpinion {
		t.Errorf("node a: %v, node b: %v", secret(nodeA), secret(nodeB))
	}
	// The pod moves away (deleted): the relationship is gone.
	n.Apply(watch.Event{Type: watch.Deleted, Object: pod})
	if secret(nodeA) != NoOpinion {
		t.Error("relationship kept after the pod was deleted")
	}
	n.Apply(watch.Event{Type: watch.Added, Object: pod})
	n.Reset()
	if secret(nodeA) != NoOpinion {
		t.Error("Reset kept the graph")
	}
	// Not a node: no opinion at all.
	if d, _, _ := n.Authorize(context.Background(), Attributes{User: &authn.User{Name: "alice"}, ResourceRequest: true, Verb: "get", Resource: "secrets"}); d != NoOpinion {
		t.Errorf("non-node user: %v", d)
	}
}

// A kubelet may create tokens only for the service accounts of pods bound
// to it (its pods' projected token volumes).
func TestNodeAuthorizerServiceAccountTokens(t *testing.T) {
	n := NewNode()
	n.Apply(watch.Event{Type: watch.Added, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{NodeName: "a", ServiceAccountName: "builder"}}})
	token := func(node, sa, verb, sub string) Decision {
		u := &authn.User{Name: "system:node:" + node, Groups: []string{"system:nodes"}}
		d, _, _ := n.Authorize(context.Background(), Attributes{User: u, ResourceRequest: true, Verb: verb,
			Resource: "serviceaccounts", Subresource: sub, Namespace: "ns", Name: sa})
		return d
	}
	tests := []struct {
		name, node, sa, verb, sub string
		want                      Decision
	}{
		{"its pod's account", "a", "builder", "create", "token", Allow},
		{"another node", "b", "builder", "create", "token", NoOpinion},
		{"an account no pod of it uses", "a", "default", "create", "token", NoOpinion},
		{"reading the account", "a", "builder", "get", "", NoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := token(tt.node, tt.sa, tt.verb, tt.sub); got != tt.want {
				t.Errorf("decision = %v, want %v", got, tt.want)
			}
		})
	}
}
