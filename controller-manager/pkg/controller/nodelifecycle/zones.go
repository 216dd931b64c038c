package nodelifecycle

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
)

// zoneState is a zone's health, as upstream names it.
type zoneState string

const (
	stateNormal            zoneState = "Normal"
	stateFullDisruption    zoneState = "FullDisruption"
	statePartialDisruption zoneState = "PartialDisruption"
)

type zoneCount struct{ ready, notReady int }

// zoneKey is the node's zone: its region and zone labels.
func zoneKey(node *corev1.Node) string {
	region, zone := node.Labels[labelTopologyRegion], node.Labels[labelTopologyZone]
	if region == "" && zone == "" {
		return ""
	}
	return region + zoneKeySeparator + zone
}

// computeZoneState is upstream's ComputeZoneState.
func (c *Controller) computeZoneState(n zoneCount) zoneState {
	switch {
	case n.ready == 0 && n.notReady > 0:
		return stateFullDisruption
	case n.notReady > 2 && float64(n.notReady)/float64(n.notReady+n.ready) >= c.opts.UnhealthyZoneThreshold:
		return statePartialDisruption
	default:
		return stateNormal
	}
}

// zoneRate is the tainting rate of a zone of size nodes in state.
func (c *Controller) zoneRate(size int, state zoneState) float64 {
	switch state {
	case statePartialDisruption:
		if size <= c.opts.LargeClusterSizeThreshold {
			return 0
		}
		return c.opts.SecondaryNodeEvictionRate
	default:
		return c.opts.NodeEvictionRate
	}
}

// handleDisruption computes the zones' states and sets their tainting
// rates; when every zone is fully disrupted it stops tainting and removes
// the NoExecute taints.
func (c *Controller) handleDisruption(ctx context.Context, nodes []*corev1.Node, counts map[string]*zoneCount) error {
	logger := klog.FromContext(ctx)
	states := make(map[string]zoneState, len(counts))
	allFull := len(counts) > 0
	for zone, n := range counts {
		states[zone] = c.computeZoneState(*n)
		if states[zone] != stateFullDisruption {
			allFull = false
		}
	}
	var errs []error
	if allFull {
		if !c.fullDisruption {
			logger.Info("Controller detected that all Nodes are not-Ready. Entering master disruption mode")
			for _, n := range nodes {
				if err := c.markNodeAsReachable(ctx, n); err != nil {
					errs = append(errs, err)
				}
			}
		}
		c.fullDisruption = true
		for zone := range states {
			c.tainterFor(zone).setRate(0, c.clock.Now())
		}
		c.zones = states
		return errors.Join(errs...)
	}
	exiting := c.fullDisruption
	if exiting {
		logger.Info("Controller detected that some Nodes are Ready. Exiting master disruption mode")
	}
	c.fullDisruption = false
	for zone, state := range states {
		if old, ok := c.zones[zone]; exiting || !ok || old != state {
			n := counts[zone]
			if ok && old != state {
				logger.Info("Zone changed state", "zone", zone, "from", old, "to", state)
			}
			c.tainterFor(zone).setRate(c.zoneRate(n.ready+n.notReady, state), c.clock.Now())
		}
	}
	c.zones = states
	return nil
}

// tainter is a zone's queue of nodes waiting for a NoExecute taint and
// its token bucket (burst one), as upstream's RateLimitedTimedQueue.
type tainter struct {
	queue  []string
	queued map[string]bool
	qps    float64
	tokens float64
	last   time.Time
}

func (c *Controller) tainterFor(zone string) *tainter {
	t := c.tainters[zone]
	if t == nil {
		t = &tainter{queued: map[string]bool{}, qps: c.opts.NodeEvictionRate, tokens: 1, last: c.clock.Now()}
		c.tainters[zone] = t
	}
	return t
}

func (t *tainter) add(name string) {
	if !t.queued[name] {
		t.queued[name] = true
		t.queue = append(t.queue, name)
	}
}

func (t *tainter) remove(name string) {
	if !t.queued[name] {
		return
	}
	delete(t.queued, name)
	for i, n := range t.queue {
		if n == name {
			t.queue = append(t.queue[:i:i], t.queue[i+1:]...)
			return
		}
	}
}

// setRate swaps the limiter, as upstream's SwapLimiter: a new bucket,
// full, unless the rate is unchanged.
func (t *tainter) setRate(qps float64, now time.Time) {
	if qps == t.qps {
		return
	}
	t.qps, t.tokens, t.last = qps, 1, now
}

func (t *tainter) tryAccept(now time.Time) bool {
	if t.qps <= 0 {
		return false
	}
	t.tokens = min(1, t.tokens+now.Sub(t.last).Seconds()*t.qps)
	t.last = now
	if t.tokens >= 1 {
		t.tokens--
		return true
	}
	return false
}

// doNoExecuteTaintingPass taints the queued nodes each zone's rate allows.
func (c *Controller) doNoExecuteTaintingPass(ctx context.Context) error {
	var errs []error
	for _, t := range c.tainters {
		for len(t.queue) > 0 {
			name := t.queue[0]
			node, err := c.nodeLister.Get(name)
			if apierrors.IsNotFound(err) {
				t.remove(name)
				continue
			}
			if err != nil {
				errs = append(errs, err)
				break
			}
			var add, remove corev1.Taint
			switch ready := readyCondition(&node.Status); {
			case ready == nil || ready.Status == corev1.ConditionTrue:
				t.remove(name)
				continue
			case ready.Status == corev1.ConditionFalse:
				add, remove = NotReadyNoExecute, UnreachableNoExecute
			default:
				add, remove = UnreachableNoExecute, NotReadyNoExecute
			}
			if hasTaint(node, add) && !hasTaint(node, remove) {
				t.remove(name)
				continue
			}
			if !t.tryAccept(c.clock.Now()) {
				break
			}
			if err := c.swapTaints(ctx, node, []corev1.Taint{add}, []corev1.Taint{remove}); err != nil {
				errs = append(errs, err)
				break
			}
			klog.FromContext(ctx).V(2).Info("Tainted a node for eviction", "node", klog.KObj(node), "taint", add.Key)
			t.remove(name)
		}
	}
	return errors.Join(errs...)
}
