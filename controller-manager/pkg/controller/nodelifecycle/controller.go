package nodelifecycle

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coordinformers "k8s.io/client-go/informers/coordination/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	coordlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName is the controller's name, as upstream names it.
const ControllerName = "node-lifecycle-controller"

// Upstream's defaults.
const (
	DefaultNodeMonitorPeriod         = 5 * time.Second
	DefaultNodeMonitorGracePeriod    = 40 * time.Second
	DefaultNodeStartupGracePeriod    = 60 * time.Second
	DefaultNodeEvictionRate          = 0.1
	DefaultSecondaryNodeEvictionRate = 0.01
	DefaultLargeClusterSizeThreshold = 50
	DefaultUnhealthyZoneThreshold    = 0.55
	// evictionPeriod is how often the rate-limited tainting and the pod
	// evictions run (upstream's NodeEvictionPeriod).
	evictionPeriod = 100 * time.Millisecond
	// LeaseNamespace holds the nodes' heartbeats.
	LeaseNamespace = corev1.NamespaceNodeLease
)

// Event reasons.
const (
	EventNodeNotReady          = "NodeNotReady"
	EventRegisteredNode        = "RegisteredNode"
	EventRemovingNode          = "RemovingNode"
	EventTaintManagerEviction  = "TaintManagerEviction"
	reasonNodeStatusUnknown    = "NodeStatusUnknown"
	reasonNodeStatusNeverUpd   = "NodeStatusNeverUpdated"
	messageNodeStatusUnknown   = "Kubelet stopped posting node status."
	messageNodeStatusNeverUpd  = "Kubelet never posted node status."
	reasonDeletionByTaintMgr   = "DeletionByTaintManager"
	messageDeletionByTaintMgr  = "Taint manager: deleting due to NoExecute taint"
	labelTopologyZone          = corev1.LabelTopologyZone
	labelTopologyRegion        = corev1.LabelTopologyRegion
	zoneKeySeparator           = ":\x00:"
	taintManagerEvictionFormat = "Marking for deletion Pod %s"
)

// Options configure the controller (the flags of upstream's name).
type Options struct {
	NodeMonitorPeriod         time.Duration
	NodeMonitorGracePeriod    time.Duration
	NodeStartupGracePeriod    time.Duration
	NodeEvictionRate          float64
	SecondaryNodeEvictionRate float64
	LargeClusterSizeThreshold int
	UnhealthyZoneThreshold    float64
	// Clock is the time source; nil means the real clock.
	Clock clock.WithTicker
}

// DefaultOptions are upstream's defaults.
func DefaultOptions() Options {
	return Options{
		NodeMonitorPeriod: DefaultNodeMonitorPeriod, NodeMonitorGracePeriod: DefaultNodeMonitorGracePeriod,
		NodeStartupGracePeriod: DefaultNodeStartupGracePeriod, NodeEvictionRate: DefaultNodeEvictionRate,
		SecondaryNodeEvictionRate: DefaultSecondaryNodeEvictionRate, LargeClusterSizeThreshold: DefaultLargeClusterSizeThreshold,
		UnhealthyZoneThreshold: DefaultUnhealthyZoneThreshold,
	}
}

// Validate reports bad options.
func (o Options) Validate() error {
	switch {
	case o.NodeMonitorPeriod <= 0:
		return fmt.Errorf("node monitor period must be positive, got %v", o.NodeMonitorPeriod)
	case o.NodeMonitorGracePeriod <= 0 || o.NodeStartupGracePeriod <= 0:
		return fmt.Errorf("node monitor and startup grace periods must be positive, got %v and %v", o.NodeMonitorGracePeriod, o.NodeStartupGracePeriod)
	case o.NodeEvictionRate < 0 || o.SecondaryNodeEvictionRate < 0:
		return fmt.Errorf("node eviction rates must not be negative, got %v and %v", o.NodeEvictionRate, o.SecondaryNodeEvictionRate)
	case o.UnhealthyZoneThreshold <= 0 || o.UnhealthyZoneThreshold > 1:
		return fmt.Errorf("unhealthy zone threshold must be in (0, 1], got %v", o.UnhealthyZoneThreshold)
	case o.LargeClusterSizeThreshold < 0:
		return fmt.Errorf("large cluster size threshold must not be negative, got %d", o.LargeClusterSizeThreshold)
	}
	return nil
}

// Controller watches node health, taints nodes and evicts pods.
type Controller struct {
	client      kubernetes.Interface
	nodeLister  corelisters.NodeLister
	leaseLister coordlisters.LeaseLister
	podLister   corelisters.PodLister
	synced      []cache.InformerSynced
	recorder    record.EventRecorder
	metrics     *metrics.Metrics
	opts        Options
	clock       clock.WithTicker

	// The fields below are used by the controller's single loop only.
	health         map[string]*nodeHealth
	known          map[string]types.UID
	zones          map[string]zoneState
	tainters       map[string]*tainter
	fullDisruption bool
	// evictionStart is when the pod (by UID) was first seen on a node
	// with NoExecute taints.
	evictionStart map[types.UID]time.Time
	// evicted are the pods deleted whose deletion the cache has not shown.
	evicted map[types.UID]bool
}

// NewController builds the controller.
func NewController(client kubernetes.Interface, nodeInformer coreinformers.NodeInformer, leaseInformer coordinformers.LeaseInformer,
	podInformer coreinformers.PodInformer, recorder record.EventRecorder, m *metrics.Metrics, opts Options) (*Controller, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	if recorder == nil {
		recorder = &record.FakeRecorder{}
	}
	return &Controller{
		client:      client,
		nodeLister:  nodeInformer.Lister(),
		leaseLister: leaseInformer.Lister(),
		podLister:   podInformer.Lister(),
		synced: []cache.InformerSynced{nodeInformer.Informer().HasSynced, leaseInformer.Informer().HasSynced,
			podInformer.Informer().HasSynced},
		recorder:      recorder,
		metrics:       m,
		opts:          opts,
		clock:         clk,
		health:        map[string]*nodeHealth{},
		known:         map[string]types.UID{},
		zones:         map[string]zoneState{},
		tainters:      map[string]*tainter{},
		evictionStart: map[types.UID]time.Time{},
		evicted:       map[types.UID]bool{},
	}, nil
}

// Run monitors nodes every NodeMonitorPeriod and taints and evicts every
// 100ms until ctx is done. workers is unused: one loop does everything, so
// the controller's state needs no locks.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "controller", ControllerName)
	defer logger.Info("Shutting down controller", "controller", ControllerName)
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return nil
	}
	monitor := c.clock.NewTicker(c.opts.NodeMonitorPeriod)
	defer monitor.Stop()
	evict := c.clock.NewTicker(evictionPeriod)
	defer evict.Stop()
	c.monitor(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-monitor.C():
			c.monitor(ctx)
		case <-evict.C():
			if err := c.TaintAndEvict(ctx); err != nil {
				utilruntime.HandleErrorWithContext(ctx, err, "Node lifecycle: tainting and evicting")
			}
		}
	}
}

// monitor runs a health pass; it is what the sync metrics count.
func (c *Controller) monitor(ctx context.Context) {
	start := time.Now()
	err := c.MonitorNodeHealth(ctx)
	c.metrics.ObserveSync(ControllerName, start, err)
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Node lifecycle: monitoring node health")
	}
}

// TaintAndEvict runs one rate-limited tainting pass and one eviction pass.
func (c *Controller) TaintAndEvict(ctx context.Context) error {
	err := c.doNoExecuteTaintingPass(ctx)
	if evErr := c.doEvictionPass(ctx); evErr != nil && err == nil {
		err = evErr
	}
	return err
}

// recordNodeEvent records an event on a node as upstream does.
func (c *Controller) recordNodeEvent(node *corev1.Node, eventType, reason, message string) {
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
	c.recorder.Eventf(ref, eventType, reason, "Node %s event: %s", node.Name, message)
}

// recordNodeStatusChange records a status change as upstream does.
func (c *Controller) recordNodeStatusChange(node *corev1.Node, status string) {
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: types.UID(node.Name)}
	c.recorder.Eventf(ref, corev1.EventTypeNormal, status, "Node %s status is now: %s", node.Name, status)
}

func (c *Controller) lease(name string) *coordinationv1.Lease {
	l, err := c.leaseLister.Leases(LeaseNamespace).Get(name)
	if err != nil {
		return nil
	}
	return l
}
