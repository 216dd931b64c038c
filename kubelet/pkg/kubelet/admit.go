package kubelet

import (
	"fmt"
	"runtime"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Upstream's reasons of a pod the kubelet refuses (pkg/kubelet/lifecycle).
const (
	reasonOSSelectorMismatch = "PodOSSelectorNodeLabelDoesNotMatch"
	reasonOSNotSupported     = "PodOSNotSupported"
	reasonNodeAffinity       = "NodeAffinity"
	reasonNodeName           = "NodeName"
	reasonNodePorts          = "NodePorts"
	reasonTaintToleration    = "TaintToleration"
)

// AdmitGeneral is upstream's predicate admission (lifecycle's
// predicateAdmitHandler and the scheduler's AdmissionCheck): a pod bound
// to this node (by the scheduler or, bypassing it, by spec.nodeName) may
// start only if its OS is the node's, the node has room for its requests
// beside the other active pods (OutOfcpu, OutOfmemory, OutOfpods, ...), its
// required node affinity and node selector match the node, its host ports
// are free and it tolerates the node's NoExecute taints. node may be nil
// (not known yet): then only the checks without it are made. The reason
// and message of the first failure are upstream's.
func AdmitGeneral(node *corev1.Node, others []*corev1.Pod, p *corev1.Pod) (ok bool, reason, message string) {
	if node != nil {
		if os, found := p.Spec.NodeSelector[corev1.LabelOSStable]; found && os != node.Labels[corev1.LabelOSStable] && node.Labels[corev1.LabelOSStable] != "" {
			return false, reasonOSSelectorMismatch, "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"
		}
	}
	if p.Spec.OS != nil && string(p.Spec.OS.Name) != runtime.GOOS {
		return false, reasonOSNotSupported, "Failed to admit pod as the OS field doesn't match node OS"
	}
	predicate := func(name, desc string) (bool, string, string) {
		return false, name, fmt.Sprintf("Predicate %s failed: %s", name, desc)
	}
	if node != nil {
		if short := insufficientResources(node, others, p); len(short) > 0 {
			// OutOfcpu, OutOfmemory, OutOfpods, OutOf<resource>.
			r := short[0]
			return false, "OutOf" + string(r.name), fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
				r.name, r.requested, r.used, r.capacity)
		}
		if match, _ := nodeaffinity.GetRequiredNodeAffinity(p).Match(node); !match {
			return predicate(reasonNodeAffinity, "node(s) didn't match Pod's node affinity/selector")
		}
		if p.Spec.NodeName != "" && p.Spec.NodeName != node.Name {
			return predicate(reasonNodeName, "node(s) didn't match the requested node name")
		}
	}
	if conflictingHostPorts(others, p) {
		return predicate(reasonNodePorts, "node(s) didn't have free ports for the requested pod ports")
	}
	if node != nil && !isStaticPod(p) {
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(node.Spec.Taints, p.Spec.Tolerations, func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoExecute
		}); untolerated {
			return predicate(reasonTaintToleration, "node(s) had taints that the pod didn't tolerate")
		}
	}
	return true, "", ""
}

func isStaticPod(p *corev1.Pod) bool {
	src := p.Annotations["kubernetes.io/config.source"]
	return src != "" && src != "api"
}

type shortage struct {
	name                      corev1.ResourceName
	requested, used, capacity int64
}

// insufficientResources is the scheduler's noderesources.Fits as the
// kubelet runs it: the pod count, then cpu (millicores), memory,
// ephemeral storage and the other resources the node advertises; a request
// of an extended resource the node does not know is left out, as upstream's
// removeMissingExtendedResources.
func insufficientResources(node *corev1.Node, others []*corev1.Pod, p *corev1.Pod) []shortage {
	alloc := node.Status.Allocatable
	var out []shortage
	if max, ok := alloc[corev1.ResourcePods]; ok && int64(len(others))+1 > max.Value() {
		out = append(out, shortage{corev1.ResourcePods, 1, int64(len(others)), max.Value()})
	}
	used := corev1.ResourceList{}
	for _, o := range others {
		for name, q := range resourcehelper.PodRequests(o, resourcehelper.PodResourcesOptions{}) {
			cur := used[name]
			cur.Add(q)
			used[name] = cur
		}
	}
	value := func(name corev1.ResourceName, q resource.Quantity) int64 {
		if name == corev1.ResourceCPU {
			return q.MilliValue()
		}
		return q.Value()
	}
	reqs := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		q, ok := reqs[name]
		if !ok || q.IsZero() {
			continue
		}
		capQ := alloc[name]
		if r, u, c := value(name, q), value(name, used[name]), value(name, capQ); r > c-u {
			out = append(out, shortage{name, r, u, c})
		}
	}
	for name, q := range reqs {
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage || q.IsZero() {
			continue
		}
		capQ, known := alloc[name]
		if !known && isExtendedResourceName(name) {
			continue
		}
		if r, u, c := q.Value(), value(name, used[name]), capQ.Value(); r > c-u {
			out = append(out, shortage{name, r, u, c})
		}
	}
	return out
}

// isExtendedResourceName: a domain-prefixed resource outside
// kubernetes.io, not a quota's requests.*, as upstream's helper.
func isExtendedResourceName(name corev1.ResourceName) bool {
	s := string(name)
	return strings.Contains(s, "/") && !strings.Contains(s, "kubernetes.io/") && !strings.HasPrefix(s, "requests.")
}

// hostPort is a port a pod takes on the node.
type hostPort struct {
	ip       string
	protocol corev1.Protocol
	port     int32
}

func hostPorts(p *corev1.Pod) []hostPort {
	var out []hostPort
	add := func(cs []corev1.Container) {
		for _, c := range cs {
			for _, cp := range c.Ports {
				if cp.HostPort <= 0 {
					continue
				}
				hp := hostPort{ip: cp.HostIP, protocol: cp.Protocol, port: cp.HostPort}
				if hp.ip == "" {
					hp.ip = "0.0.0.0"
				}
				if hp.protocol == "" {
					hp.protocol = corev1.ProtocolTCP
				}
				out = append(out, hp)
			}
		}
	}
	add(p.Spec.InitContainers)
	add(p.Spec.Containers)
	return out
}

// conflictingHostPorts is the scheduler's nodeports.Fits: a host port
// conflicts with one another pod holds on the same protocol and port whose
// IP is the same or either is 0.0.0.0.
func conflictingHostPorts(others []*corev1.Pod, p *corev1.Pod) bool {
	want := hostPorts(p)
	if len(want) == 0 {
		return false
	}
	for _, o := range others {
		for _, used := range hostPorts(o) {
			for _, w := range want {
				if w.port == used.port && w.protocol == used.protocol &&
					(w.ip == used.ip || w.ip == "0.0.0.0" || used.ip == "0.0.0.0") {
					return true
				}
			}
		}
	}
	return false
}
