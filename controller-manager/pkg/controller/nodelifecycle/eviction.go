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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// tolerationTime says whether the pod tolerates all taints and for how
// long: negative means forever (upstream's GetMatchingTolerations and
// getMinTolerationTime: the first toleration matching each taint counts).
func tolerationTime(tolerations []corev1.Toleration, taints []corev1.Taint) (bool, time.Duration) {
	var used []corev1.Toleration
	for i := range taints {
		found := false
		for j := range tolerations {
			if tolerations[j].ToleratesTaint(&taints[i]) {
				used = append(used, tolerations[j])
				found = true
				break
			}
		}
		if !found {
			return false, 0
		}
	}
	minSeconds := int64(-1)
	for _, t := range used {
		if t.TolerationSeconds == nil {
			continue
		}
		if *t.TolerationSeconds <= 0 {
			return true, 0
		}
		if minSeconds < 0 || *t.TolerationSeconds < minSeconds {
			minSeconds = *t.TolerationSeconds
		}
	}
	if minSeconds < 0 {
		return true, -1
	}
	return true, time.Duration(minSeconds) * time.Second
}

func noExecuteTaints(node *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// doEvictionPass deletes the pods whose time on a NoExecute-tainted node
// is up.
func (c *Controller) doEvictionPass(ctx context.Context) error {
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return err
	}
	tainted := map[string][]corev1.Taint{}
	for _, n := range nodes {
		if taints := noExecuteTaints(n); len(taints) > 0 {
			tainted[n.Name] = taints
		}
	}
	seen := map[types.UID]bool{}
	var errs []error
	if len(tainted) > 0 {
		pods, err := c.podLister.List(labels.Everything())
		if err != nil {
			return err
		}
		now := c.clock.Now()
		for _, p := range pods {
			taints, ok := tainted[p.Spec.NodeName]
			if !ok || p.DeletionTimestamp != nil {
				continue
			}
			seen[p.UID] = true
			if c.evicted[p.UID] {
				continue
			}
			if err := c.evictIfDue(ctx, p, taints, now); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for uid := range c.evictionStart {
		if !seen[uid] {
			delete(c.evictionStart, uid)
		}
	}
	for uid := range c.evicted {
		if !seen[uid] {
			delete(c.evicted, uid)
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) evictIfDue(ctx context.Context, p *corev1.Pod, taints []corev1.Taint, now time.Time) error {
	tolerated, d := tolerationTime(p.Spec.Tolerations, taints)
	if tolerated {
		if d < 0 {
			return nil
		}
		start, ok := c.evictionStart[p.UID]
		if !ok {
			start = now
			c.evictionStart[p.UID] = start
		}
		if now.Before(start.Add(d)) {
			return nil
		}
	}
	return c.evict(ctx, p)
}

// evict deletes the pod, marking it with the DisruptionTarget condition
// first, as upstream's taint manager does.
func (c *Controller) evict(ctx context.Context, p *corev1.Pod) error {
	c.recorder.Eventf(p, corev1.EventTypeNormal, EventTaintManagerEviction, taintManagerEvictionFormat, p.Namespace+"/"+p.Name)
	marked := p.DeepCopy()
	setPodCondition(&marked.Status, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reasonDeletionByTaintMgr,
		Message: messageDeletionByTaintMgr, LastTransitionTime: metav1.NewTime(c.clock.Now()),
	})
	if _, err := c.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, marked, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(2).Info("Could not add the DisruptionTarget condition", "pod", klog.KObj(p), "err", err)
	}
	err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("evicting pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	klog.FromContext(ctx).Info("Evicted a pod from a tainted node", "pod", klog.KObj(p), "node", p.Spec.NodeName)
	delete(c.evictionStart, p.UID)
	c.evicted[p.UID] = true
	return nil
}

func setPodCondition(s *corev1.PodStatus, c corev1.PodCondition) {
	for i := range s.Conditions {
		if s.Conditions[i].Type == c.Type {
			s.Conditions[i] = c
			return
		}
	}
	s.Conditions = append(s.Conditions, c)
}
