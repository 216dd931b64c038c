package nodeipam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName is the controller's name, as upstream names it.
const ControllerName = "node-ipam-controller"

// Upstream's defaults (skiff's cluster CIDR).
const (
	DefaultClusterCIDR          = "10.244.0.0/16"
	DefaultNodeCIDRMaskSize     = 24
	DefaultNodeCIDRMaskSizeIPv6 = 64
)

// Event reasons, as upstream records them on the node.
const (
	EventCIDRNotAvailable     = "CIDRNotAvailable"
	EventCIDRAssignmentFailed = "CIDRAssignmentFailed"
)

// Options configure the controller.
type Options struct {
	// ClusterCIDR is --cluster-cidr: one CIDR, or an IPv4 and an IPv6 CIDR
	// separated by a comma (dual stack).
	ClusterCIDR string
	// NodeCIDRMaskSize is --node-cidr-mask-size: the size of each node's
	// IPv4 subnet.
	NodeCIDRMaskSize int
	// NodeCIDRMaskSizeIPv6 is --node-cidr-mask-size-ipv6.
	NodeCIDRMaskSizeIPv6 int
	// ServiceCIDR, when set and inside a cluster CIDR, is never handed out.
	ServiceCIDR string
}

// DefaultOptions are the defaults.
func DefaultOptions() Options {
	return Options{ClusterCIDR: DefaultClusterCIDR, NodeCIDRMaskSize: DefaultNodeCIDRMaskSize, NodeCIDRMaskSizeIPv6: DefaultNodeCIDRMaskSizeIPv6}
}

// Controller gives nodes their pod CIDRs.
type Controller struct {
	client     kubernetes.Interface
	nodeLister corelisters.NodeLister
	synced     cache.InformerSynced
	recorder   record.EventRecorder
	queue      workqueue.TypedRateLimitingInterface[string]
	metrics    *metrics.Metrics
	sets       []*CIDRSet

	mu sync.Mutex
	// assigned is what this controller knows each node holds; it keeps a
	// node from getting a second subnet before the informer shows the first.
	assigned map[string][]*net.IPNet
}

// NewController builds the controller; a bad CIDR or mask size is an error.
func NewController(client kubernetes.Interface, nodeInformer coreinformers.NodeInformer, recorder record.EventRecorder, m *metrics.Metrics, opts Options) (*Controller, error) {
	sets, err := newSets(opts)
	if err != nil {
		return nil, err
	}
	if opts.ServiceCIDR != "" {
		_, svc, err := net.ParseCIDR(strings.TrimSpace(opts.ServiceCIDR))
		if err != nil {
			return nil, fmt.Errorf("invalid service CIDR %q: %w", opts.ServiceCIDR, err)
		}
		for _, s := range sets {
			if err := s.Occupy(svc); err != nil {
				return nil, err
			}
		}
	}
	if recorder == nil {
		recorder = &record.FakeRecorder{}
	}
	c := &Controller{
		client:     client,
		nodeLister: nodeInformer.Lister(),
		synced:     nodeInformer.Informer().HasSynced,
		recorder:   recorder,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "node_ipam")),
		metrics:  m,
		sets:     sets,
		assigned: map[string][]*net.IPNet{},
	}
	_, err = nodeInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(obj) },
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.nodeDeleted,
	})
	return c, err
}

func newSets(opts Options) ([]*CIDRSet, error) {
	if strings.TrimSpace(opts.ClusterCIDR) == "" {
		return nil, errors.New("node IPAM needs a cluster CIDR")
	}
	parts := strings.Split(opts.ClusterCIDR, ",")
	if len(parts) > 2 {
		return nil, fmt.Errorf("cluster CIDR %q: at most two CIDRs (one per IP family) are allowed", opts.ClusterCIDR)
	}
	var sets []*CIDRSet
	families := map[bool]bool{}
	for _, p := range parts {
		_, cidr, err := net.ParseCIDR(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("invalid cluster CIDR %q: %w", p, err)
		}
		v4 := cidr.IP.To4() != nil
		if families[v4] {
			return nil, fmt.Errorf("cluster CIDR %q: two CIDRs of the same IP family", opts.ClusterCIDR)
		}
		families[v4] = true
		mask := opts.NodeCIDRMaskSize
		if !v4 {
			mask = opts.NodeCIDRMaskSizeIPv6
		}
		s, err := NewCIDRSet(cidr, mask)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	return sets, nil
}

func nodeOf(obj any) *corev1.Node {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	n, _ := obj.(*corev1.Node)
	return n
}

func (c *Controller) enqueue(obj any) {
	if n := nodeOf(obj); n != nil {
		c.queue.Add(n.Name)
	}
}

// nodeDeleted releases the deleted node's subnets.
func (c *Controller) nodeDeleted(obj any) {
	n := nodeOf(obj)
	if n == nil {
		return
	}
	c.mu.Lock()
	cidrs := c.assigned[n.Name]
	delete(c.assigned, n.Name)
	c.mu.Unlock()
	if len(cidrs) == 0 {
		cidrs = parseCIDRs(n.Spec.PodCIDRs)
	}
	for _, cidr := range cidrs {
		c.release(cidr)
	}
}

func (c *Controller) release(cidr *net.IPNet) {
	for _, s := range c.sets {
		_ = s.Release(cidr)
	}
}

func (c *Controller) occupy(cidr *net.IPNet) {
	for _, s := range c.sets {
		_ = s.Occupy(cidr)
	}
}

func parseCIDRs(in []string) []*net.IPNet {
	var out []*net.IPNet
	for _, s := range in {
		if _, cidr, err := net.ParseCIDR(s); err == nil {
			out = append(out, cidr)
		}
	}
	return out
}

// Run waits for the informer caches, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: []cache.InformerSynced{c.synced},
		Started: c.occupyExisting,
	}.Run(ctx, workers)
}

// occupyExisting marks every existing node's podCIDRs as used.
func (c *Controller) occupyExisting() error {
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range nodes {
		cidrs := parseCIDRs(n.Spec.PodCIDRs)
		if len(cidrs) == 0 && n.Spec.PodCIDR != "" {
			cidrs = parseCIDRs([]string{n.Spec.PodCIDR})
		}
		for _, cidr := range cidrs {
			c.occupy(cidr)
		}
		if len(cidrs) > 0 {
			c.assigned[n.Name] = cidrs
		}
	}
	return nil
}

// sync gives node name its subnets when it has none.
func (c *Controller) sync(ctx context.Context, name string) error {
	node, err := c.nodeLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(node.Spec.PodCIDRs) > 0 || node.Spec.PodCIDR != "" {
		c.adopt(node)
		return nil
	}
	cidrs, err := c.allocate(node)
	if err != nil {
		return err
	}
	if err := c.patch(ctx, name, cidrs); err != nil {
		c.recordNodeStatusChange(node, EventCIDRAssignmentFailed)
		return err
	}
	klog.FromContext(ctx).V(2).Info("Assigned pod CIDRs to the node", "node", klog.KObj(node), "podCIDRs", cidrStrings(cidrs))
	return nil
}

// adopt records the subnets a node already has as its own.
func (c *Controller) adopt(node *corev1.Node) {
	cidrs := parseCIDRs(node.Spec.PodCIDRs)
	if len(cidrs) == 0 {
		cidrs = parseCIDRs([]string{node.Spec.PodCIDR})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.assigned[node.Name]
	if equalCIDRs(old, cidrs) {
		return
	}
	for _, cidr := range old {
		c.release(cidr)
	}
	for _, cidr := range cidrs {
		c.occupy(cidr)
	}
	c.assigned[node.Name] = cidrs
}

// allocate returns the node's subnets: the ones already given to it (a
// patch the cache has not shown yet) or new ones, one per cluster CIDR.
func (c *Controller) allocate(node *corev1.Node) ([]*net.IPNet, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cidrs, ok := c.assigned[node.Name]; ok {
		return cidrs, nil
	}
	var cidrs []*net.IPNet
	for _, s := range c.sets {
		cidr, err := s.AllocateNext()
		if err != nil {
			for _, got := range cidrs {
				c.release(got)
			}
			c.recordNodeStatusChange(node, EventCIDRNotAvailable)
			return nil, fmt.Errorf("allocating a pod CIDR for node %s from %s: %w", node.Name, s.Cluster(), err)
		}
		cidrs = append(cidrs, cidr)
	}
	c.assigned[node.Name] = cidrs
	return cidrs, nil
}

// patch sets spec.podCIDR and spec.podCIDRs, and nothing else. When the
// patch fails for good, the subnets are released.
func (c *Controller) patch(ctx context.Context, name string, cidrs []*net.IPNet) error {
	strs := cidrStrings(cidrs)
	body, err := json.Marshal(map[string]any{"spec": map[string]any{"podCIDR": strs[0], "podCIDRs": strs}})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
	if err == nil {
		return nil
	}
	if apierrors.IsNotFound(err) {
		c.forget(name)
		return nil
	}
	if apierrors.IsInvalid(err) {
		// The node got other CIDRs meanwhile (they are immutable): let the
		// next sync adopt them.
		c.forget(name)
	}
	return fmt.Errorf("patching the pod CIDRs of node %s: %w", name, err)
}

func (c *Controller) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cidr := range c.assigned[name] {
		c.release(cidr)
	}
	delete(c.assigned, name)
}

// recordNodeStatusChange records an event as upstream's
// RecordNodeStatusChange does (the node's name stands in for its UID).
func (c *Controller) recordNodeStatusChange(node *corev1.Node, status string) {
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: types.UID(node.Name)}
	c.recorder.Eventf(ref, corev1.EventTypeNormal, status, "Node %s status is now: %s", node.Name, status)
}

func cidrStrings(cidrs []*net.IPNet) []string {
	out := make([]string, len(cidrs))
	for i, c := range cidrs {
		out[i] = c.String()
	}
	return out
}

func equalCIDRs(a, b []*net.IPNet) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].String() != b[i].String() {
			return false
		}
	}
	return true
}
