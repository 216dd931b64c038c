package authz

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/watch"
)

const (
	nodeUserPrefix = "system:node:"
	nodesGroup     = "system:nodes"
)

// podRefs is what one pod bound to a node lets that node read.
type podRefs struct {
	node       string
	namespace  string
	secrets    []string
	configMaps []string
	claims     []string
	// serviceAccount is the pod's, for its projected token.
	serviceAccount string
}

// Node is upstream's Node authorizer: a kubelet may read the secrets,
// config maps and claims of pods bound to it, write its own Node and Lease
// and the status of its own pods, and otherwise what NodeRules allow.
type Node struct {
	mu   sync.RWMutex
	pods map[string]*podRefs // namespace/name -> refs
	// refs counts, per node and namespace/kind/name, how many pods need it.
	refs map[string]map[string]int
	// rules are NodeRules, computed once.
	rules []rbacv1.PolicyRule
}

// NewNode returns a Node authorizer with an empty pod graph.
func NewNode() *Node {
	return &Node{pods: map[string]*podRefs{}, refs: map[string]map[string]int{}, rules: NodeRules()}
}

func refKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func (n *Node) addRefs(p *podRefs, delta int) {
	if p.node == "" {
		return
	}
	m := n.refs[p.node]
	if m == nil {
		m = map[string]int{}
		n.refs[p.node] = m
	}
	add := func(kind string, names []string) {
		for _, name := range names {
			k := refKey(kind, p.namespace, name)
			m[k] += delta
			if m[k] <= 0 {
				delete(m, k)
			}
		}
	}
	add("secrets", p.secrets)
	add("configmaps", p.configMaps)
	add("persistentvolumeclaims", p.claims)
	if p.serviceAccount != "" {
		add("serviceaccounts", []string{p.serviceAccount})
	}
}

// Reset forgets every pod, before the whole state is applied again.
func (n *Node) Reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pods, n.refs = map[string]*podRefs{}, map[string]map[string]int{}
}

// Apply records one pod watch event in the graph.
func (n *Node) Apply(ev watch.Event) {
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return
	}
	key := pod.Namespace + "/" + pod.Name
	n.mu.Lock()
	defer n.mu.Unlock()
	if old := n.pods[key]; old != nil {
		n.addRefs(old, -1)
		delete(n.pods, key)
	}
	if ev.Type == watch.Deleted || pod.Spec.NodeName == "" {
		return
	}
	p := refsOf(pod)
	n.pods[key] = p
	n.addRefs(p, 1)
}

func refsOf(pod *corev1.Pod) *podRefs {
	p := &podRefs{node: pod.Spec.NodeName, namespace: pod.Namespace, serviceAccount: pod.Spec.ServiceAccountName}
	for _, s := range pod.Spec.ImagePullSecrets {
		p.secrets = append(p.secrets, s.Name)
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Secret != nil:
			p.secrets = append(p.secrets, v.Secret.SecretName)
		case v.ConfigMap != nil:
			p.configMaps = append(p.configMaps, v.ConfigMap.Name)
		case v.PersistentVolumeClaim != nil:
			p.claims = append(p.claims, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			// The claim of a generic ephemeral volume, as upstream's graph.
			p.claims = append(p.claims, pod.Name+"-"+v.Name)
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if src.Secret != nil {
					p.secrets = append(p.secrets, src.Secret.Name)
				}
				if src.ConfigMap != nil {
					p.configMaps = append(p.configMaps, src.ConfigMap.Name)
				}
			}
		}
	}
	containers := append(append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...), ephemeral(pod)...)
	for _, c := range containers {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				p.secrets = append(p.secrets, e.SecretRef.Name)
			}
			if e.ConfigMapRef != nil {
				p.configMaps = append(p.configMaps, e.ConfigMapRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if e.ValueFrom.SecretKeyRef != nil {
				p.secrets = append(p.secrets, e.ValueFrom.SecretKeyRef.Name)
			}
			if e.ValueFrom.ConfigMapKeyRef != nil {
				p.configMaps = append(p.configMaps, e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	}
	return p
}

func ephemeral(pod *corev1.Pod) []corev1.Container {
	out := make([]corev1.Container, 0, len(pod.Spec.EphemeralContainers))
	for _, e := range pod.Spec.EphemeralContainers {
		out = append(out, corev1.Container(e.EphemeralContainerCommon))
	}
	return out
}

// NodeName returns the node a user is, if it is one.
func NodeName(a Attributes) (string, bool) {
	if a.User == nil || !strings.HasPrefix(a.User.Name, nodeUserPrefix) {
		return "", false
	}
	for _, g := range a.User.Groups {
		if g == nodesGroup {
			return strings.TrimPrefix(a.User.Name, nodeUserPrefix), true
		}
	}
	return "", false
}

// noRelation is the reason a node may not reach an object, built only when
// it is the answer.
func noRelation(node string) string {
	return fmt.Sprintf("no relationship found between node '%s' and this object", node)
}

// Authorize implements Authorizer.
func (n *Node) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	node, ok := NodeName(a)
	if !ok {
		return NoOpinion, "", nil
	}
	if !a.ResourceRequest {
		return NoOpinion, "", nil
	}
	if a.APIGroup == "" {
		switch a.Resource {
		case "secrets", "configmaps", "persistentvolumeclaims":
			if a.Resource == "persistentvolumeclaims" && (a.Verb == "list" || a.Verb == "watch") && a.Subresource == "" {
				// The local-path provisioner's watch (NodeRules).
				break
			}
			if a.Verb != "get" || a.Name == "" || a.Subresource != "" {
				return NoOpinion, fmt.Sprintf("can only get individual %s", a.Resource), nil
			}
			n.mu.RLock()
			_, related := n.refs[node][refKey(a.Resource, a.Namespace, a.Name)]
			n.mu.RUnlock()
			if related {
				return Allow, "", nil
			}
			return NoOpinion, noRelation(node), nil
		case "serviceaccounts":
			// A kubelet asks for the tokens of its pods' service accounts
			// (the projected token volume); upstream also checks, in
			// admission, that the token is bound to such a pod.
			if a.Subresource != "token" || a.Verb != "create" || a.Name == "" {
				return NoOpinion, "can only create tokens for individual service accounts", nil
			}
			n.mu.RLock()
			_, related := n.refs[node][refKey("serviceaccounts", a.Namespace, a.Name)]
			n.mu.RUnlock()
			if !related {
				return NoOpinion, noRelation(node), nil
			}
		case "nodes":
			switch a.Verb {
			case "get", "list", "watch", "create":
			default:
				if a.Name != node {
					return NoOpinion, fmt.Sprintf("node '%s' cannot modify node '%s'", node, a.Name), nil
				}
			}
		case "pods":
			writesPod := a.Subresource == "status" || (a.Subresource == "" && a.Verb == "delete")
			if writesPod {
				n.mu.RLock()
				p := n.pods[a.Namespace+"/"+a.Name]
				n.mu.RUnlock()
				if p == nil || p.node != node {
					return NoOpinion, noRelation(node), nil
				}
			}
		}
	}
	if a.APIGroup == "coordination.k8s.io" && a.Resource == "leases" {
		if a.Namespace != corev1.NamespaceNodeLease || (a.Verb != "create" && a.Name != node) {
			return NoOpinion, fmt.Sprintf("node '%s' may only use its own lease in %s", node, corev1.NamespaceNodeLease), nil
		}
	}
	if rulesAllow(&a, n.rules) {
		return Allow, "", nil
	}
	return NoOpinion, "", nil
}
