package framework

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodInfo is a pod with its requests computed once.
type PodInfo struct {
	Pod *corev1.Pod
	// Requests is what the pod requests (PodRequests).
	Requests *Resource
	// NonZeroRequests is the cpu and memory used for scoring, with
	// defaults for containers that request nothing.
	NonZeroRequests *Resource
	// The pod's inter-pod (anti-)affinity terms, parsed once.
	RequiredAffinityTerms      []AffinityTerm
	RequiredAntiAffinityTerms  []AffinityTerm
	PreferredAffinityTerms     []WeightedAffinityTerm
	PreferredAntiAffinityTerms []WeightedAffinityTerm
	// ParseError is set when a term's selector did not parse; that term is
	// left out of the lists above.
	ParseError error
}

// NewPodInfo computes a pod's requests and parses its affinity terms.
func NewPodInfo(pod *corev1.Pod) *PodInfo {
	pi := &PodInfo{
		Pod:             pod,
		Requests:        NewResource(PodRequests(pod, nil)),
		NonZeroRequests: NewResource(PodRequests(pod, NonZeroDefaults())),
	}
	pi.parseAffinity()
	return pi
}

// ProtocolPort is one host port.
type ProtocolPort struct {
	Protocol string
	Port     int32
}

// HostPortInfo is the host ports in use on a node, by host IP.
type HostPortInfo map[string]map[ProtocolPort]int

const defaultHostIP = "0.0.0.0"

func sanitize(ip, protocol string) (string, string) {
	if ip == "" {
		ip = defaultHostIP
	}
	if protocol == "" {
		protocol = string(corev1.ProtocolTCP)
	}
	return ip, protocol
}

// Add records a port.
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	ip, protocol = sanitize(ip, protocol)
	if h[ip] == nil {
		h[ip] = map[ProtocolPort]int{}
	}
	h[ip][ProtocolPort{protocol, port}]++
}

// Remove forgets a port.
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	ip, protocol = sanitize(ip, protocol)
	pp := ProtocolPort{protocol, port}
	if m := h[ip]; m != nil {
		m[pp]--
		if m[pp] <= 0 {
			delete(m, pp)
		}
		if len(m) == 0 {
			delete(h, ip)
		}
	}
}

// CheckConflict is true when the port is taken: by the same IP, or by any
// IP when either side is 0.0.0.0.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	ip, protocol = sanitize(ip, protocol)
	pp := ProtocolPort{protocol, port}
	if ip == defaultHostIP {
		for _, m := range h {
			if m[pp] > 0 {
				return true
			}
		}
		return false
	}
	for _, key := range []string{ip, defaultHostIP} {
		if h[key][pp] > 0 {
			return true
		}
	}
	return false
}

// NodeInfo is a node with the pods bound or assumed on it and what they
// request together.
type NodeInfo struct {
	node             *corev1.Node
	Pods             []*PodInfo
	Requested        *Resource
	NonZeroRequested *Resource
	Allocatable      *Resource
	UsedPorts        HostPortInfo
	// PodsWithAffinity are the pods with pod affinity or anti-affinity;
	// PodsWithRequiredAntiAffinity those with required anti-affinity terms.
	PodsWithAffinity             []*PodInfo
	PodsWithRequiredAntiAffinity []*PodInfo
	// ImageSizes maps each image name in node.status.images to its size;
	// it is replaced, never modified, so clones share it.
	ImageSizes map[string]int64
}

// NewNodeInfo returns a NodeInfo with the given pods.
func NewNodeInfo(pods ...*corev1.Pod) *NodeInfo {
	ni := &NodeInfo{Requested: &Resource{}, NonZeroRequested: &Resource{}, Allocatable: &Resource{}, UsedPorts: HostPortInfo{}}
	for _, p := range pods {
		ni.AddPod(p)
	}
	return ni
}

// Node returns the node, nil when only pods are known so far.
func (n *NodeInfo) Node() *corev1.Node { return n.node }

// SetNode sets the node and its allocatable.
func (n *NodeInfo) SetNode(node *corev1.Node) {
	n.node = node
	n.Allocatable = NewResource(node.Status.Allocatable)
	n.ImageSizes = imageSizes(node)
}

func imageSizes(node *corev1.Node) map[string]int64 {
	if len(node.Status.Images) == 0 {
		return nil
	}
	m := make(map[string]int64, len(node.Status.Images))
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			m[name] = img.SizeBytes
		}
	}
	return m
}

// RemoveNode forgets the node object, keeping the pods.
func (n *NodeInfo) RemoveNode() { n.node = nil }

// AddPod adds a pod.
func (n *NodeInfo) AddPod(pod *corev1.Pod) { n.AddPodInfo(NewPodInfo(pod)) }

// AddPodInfo adds a pod with precomputed requests.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.Pods = append(n.Pods, pi)
	if pi.hasAffinity() {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if pi.hasRequiredAntiAffinity() {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, 1)
}

// removeFrom returns list without the pod with uid; it copies, because
// clones share the backing arrays.
func removeFrom(list []*PodInfo, uid types.UID) []*PodInfo {
	for i, pi := range list {
		if pi.Pod.UID == uid {
			out := make([]*PodInfo, 0, len(list)-1)
			out = append(out, list[:i]...)
			return append(out, list[i+1:]...)
		}
	}
	return list
}

// RemovePod removes the pod with the pod's UID; false if absent.
func (n *NodeInfo) RemovePod(pod *corev1.Pod) bool {
	for _, pi := range n.Pods {
		if pi.Pod.UID == pod.UID {
			n.Pods = removeFrom(n.Pods, pod.UID)
			n.PodsWithAffinity = removeFrom(n.PodsWithAffinity, pod.UID)
			n.PodsWithRequiredAntiAffinity = removeFrom(n.PodsWithRequiredAntiAffinity, pod.UID)
			n.update(pi, -1)
			return true
		}
	}
	return false
}

// HasPod reports whether a pod with uid is on the node.
func (n *NodeInfo) HasPod(uid types.UID) bool {
	for _, pi := range n.Pods {
		if pi.Pod.UID == uid {
			return true
		}
	}
	return false
}

func (n *NodeInfo) update(pi *PodInfo, sign int64) {
	n.Requested.AddResource(pi.Requests, sign)
	n.NonZeroRequested.AddResource(pi.NonZeroRequests, sign)
	for _, c := range pi.Pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			if sign > 0 {
				n.UsedPorts.Add(p.HostIP, string(p.Protocol), p.HostPort)
			} else {
				n.UsedPorts.Remove(p.HostIP, string(p.Protocol), p.HostPort)
			}
		}
	}
}

// Clone copies the NodeInfo so a scheduling cycle can read it while the
// cache changes.
func (n *NodeInfo) Clone() *NodeInfo {
	c := &NodeInfo{
		node:             n.node,
		Pods:             append([]*PodInfo(nil), n.Pods...),
		PodsWithAffinity: append([]*PodInfo(nil), n.PodsWithAffinity...),
		ImageSizes:       n.ImageSizes,
		Requested:        n.Requested.Clone(),
		NonZeroRequested: n.NonZeroRequested.Clone(),
		Allocatable:      n.Allocatable.Clone(),
		UsedPorts:        HostPortInfo{},
	}
	c.PodsWithRequiredAntiAffinity = append([]*PodInfo(nil), n.PodsWithRequiredAntiAffinity...)
	for ip, m := range n.UsedPorts {
		c.UsedPorts[ip] = make(map[ProtocolPort]int, len(m))
		for k, v := range m {
			c.UsedPorts[ip][k] = v
		}
	}
	return c
}
