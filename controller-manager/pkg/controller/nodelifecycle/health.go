package nodelifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
)

// nodeHealth is what the controller last saw of a node.
type nodeHealth struct {
	probeTimestamp time.Time
	status         *corev1.NodeStatus
	leaseRenew     *metav1.MicroTime
}

// monitoredConditions are the conditions turned Unknown when the kubelet
// stops posting (upstream's list).
var monitoredConditions = []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}

// MonitorNodeHealth runs one health pass over every node.
func (c *Controller) MonitorNodeHealth(ctx context.Context) error {
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return err
	}
	c.registerAndRemove(ctx, nodes)
	counts := map[string]*zoneCount{}
	var errs []error
	for _, cached := range nodes {
		observed := readyCondition(&cached.Status)
		node, err := c.updateNodeHealth(ctx, cached)
		if err != nil {
			errs = append(errs, err)
			node = cached
		}
		current := readyCondition(&node.Status)
		zone := zoneKey(node)
		if counts[zone] == nil {
			counts[zone] = &zoneCount{}
		}
		if current != nil && current.Status == corev1.ConditionTrue {
			counts[zone].ready++
		} else {
			counts[zone].notReady++
		}
		if current != nil && current.Status != corev1.ConditionTrue && observed != nil && observed.Status == corev1.ConditionTrue {
			c.recordNodeStatusChange(node, EventNodeNotReady)
			if err := c.markPodsNotReady(ctx, node.Name); err != nil {
				errs = append(errs, err)
			}
		}
		node, err = c.reconcileNoScheduleTaints(ctx, node)
		if err != nil {
			errs = append(errs, err)
		}
		if err := c.processTaintBasedEviction(ctx, node, zone); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.handleDisruption(ctx, nodes, counts); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// registerAndRemove records RegisteredNode for new nodes and RemovingNode
// for nodes that are gone, and forgets the latter.
func (c *Controller) registerAndRemove(ctx context.Context, nodes []*corev1.Node) {
	present := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		present[n.Name] = true
		if uid, ok := c.known[n.Name]; !ok || uid != n.UID {
			c.known[n.Name] = n.UID
			klog.FromContext(ctx).V(2).Info("Controller observed a new Node", "node", klog.KObj(n))
			c.recordNodeEvent(n, corev1.EventTypeNormal, EventRegisteredNode, fmt.Sprintf("Registered Node %v in Controller", n.Name))
		}
	}
	for name, uid := range c.known {
		if present[name] {
			continue
		}
		klog.FromContext(ctx).V(2).Info("Controller observed a Node deletion", "node", name)
		c.recordNodeEvent(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid}}, corev1.EventTypeNormal, EventRemovingNode,
			fmt.Sprintf("Removing Node %v from Controller", name))
		delete(c.known, name)
		delete(c.health, name)
		for _, t := range c.tainters {
			t.remove(name)
		}
	}
}

func readyCondition(s *corev1.NodeStatus) *corev1.NodeCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == corev1.NodeReady {
			return &s.Conditions[i]
		}
	}
	return nil
}

// updateNodeHealth notes the node's heartbeats (its Ready condition and its
// Lease) and, when none came within the grace period, sets its conditions
// Unknown. It returns the node as it now is.
func (c *Controller) updateNodeHealth(ctx context.Context, node *corev1.Node) (*corev1.Node, error) {
	now := c.clock.Now()
	observed := readyCondition(&node.Status)
	grace := c.opts.NodeMonitorGracePeriod
	h := c.health[node.Name]
	if h == nil {
		h = &nodeHealth{probeTimestamp: now, status: node.Status.DeepCopy()}
		if observed == nil {
			h.probeTimestamp = node.CreationTimestamp.Time
		}
		c.health[node.Name] = h
	}
	if observed == nil {
		grace = c.opts.NodeStartupGracePeriod
	} else {
		saved := readyCondition(h.status)
		if saved == nil || !saved.LastHeartbeatTime.Equal(&observed.LastHeartbeatTime) {
			h.probeTimestamp = now
		}
	}
	h.status = node.Status.DeepCopy()
	if l := c.lease(node.Name); l != nil && l.Spec.RenewTime != nil &&
		(h.leaseRenew == nil || h.leaseRenew.Before(l.Spec.RenewTime)) {
		h.leaseRenew = l.Spec.RenewTime.DeepCopy()
		h.probeTimestamp = now
	}
	if !now.After(h.probeTimestamp.Add(grace)) {
		return node, nil
	}
	unknown, changed := withUnknownConditions(node, metav1.NewTime(now))
	if !changed {
		return node, nil
	}
	klog.FromContext(ctx).V(2).Info("Node hasn't been updated", "node", klog.KObj(node), "sinceProbe", now.Sub(h.probeTimestamp))
	updated, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, unknown, metav1.UpdateOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return node, nil
		}
		return nil, fmt.Errorf("setting the conditions of node %s to Unknown: %w", node.Name, err)
	}
	h.status = updated.Status.DeepCopy()
	return updated, nil
}

// withUnknownConditions returns a copy of node with the monitored
// conditions Unknown.
func withUnknownConditions(node *corev1.Node, now metav1.Time) (*corev1.Node, bool) {
	out := node.DeepCopy()
	changed := false
	for _, t := range monitoredConditions {
		i := -1
		for j := range out.Status.Conditions {
			if out.Status.Conditions[j].Type == t {
				i = j
				break
			}
		}
		if i < 0 {
			out.Status.Conditions = append(out.Status.Conditions, corev1.NodeCondition{
				Type: t, Status: corev1.ConditionUnknown, Reason: reasonNodeStatusNeverUpd, Message: messageNodeStatusNeverUpd,
				LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: now,
			})
			changed = true
			continue
		}
		cond := &out.Status.Conditions[i]
		if cond.Status == corev1.ConditionUnknown {
			continue
		}
		cond.Status = corev1.ConditionUnknown
		cond.Reason = reasonNodeStatusUnknown
		cond.Message = messageNodeStatusUnknown
		cond.LastTransitionTime = now
		changed = true
	}
	return out, changed
}

// markPodsNotReady sets the Ready condition of the node's pods to False,
// with a NodeNotReady event on each, as upstream does.
func (c *Controller) markPodsNotReady(ctx context.Context, nodeName string) error {
	pods, err := c.podLister.List(labels.Everything())
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range pods {
		if p.Spec.NodeName != nodeName || p.DeletionTimestamp != nil {
			continue
		}
		for i, cond := range p.Status.Conditions {
			if cond.Type != corev1.PodReady || cond.Status == corev1.ConditionFalse {
				continue
			}
			out := p.DeepCopy()
			out.Status.Conditions[i].Status = corev1.ConditionFalse
			out.Status.Conditions[i].LastTransitionTime = metav1.NewTime(c.clock.Now())
			if _, err := c.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("marking pod %s/%s not ready: %w", p.Namespace, p.Name, err))
				break
			}
			c.recorder.Eventf(p, corev1.EventTypeWarning, EventNodeNotReady, "Node is not ready")
			break
		}
	}
	return errors.Join(errs...)
}
