package disruption

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// StalePodDisruptionTimeout is how long a pod may carry a True
// DisruptionTarget condition without being deleted before the controller
// sets the condition back to False (upstream's 2 minutes): the disruption
// that set it (an eviction, a taint) did not go through.
const StalePodDisruptionTimeout = 2 * time.Minute

// staleDisruptionCondition reports whether pod has a DisruptionTarget
// condition that becomes stale, and how long until it is. Conditions the
// kubelet set, and those of pods being deleted or finished, never are.
func (c *Controller) staleDisruptionCondition(pod *corev1.Pod) (bool, time.Duration) {
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false, 0
	}
	cond := podCondition(pod, corev1.DisruptionTarget)
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason == corev1.PodReasonTerminationByKubelet {
		return false, 0
	}
	return true, max(StalePodDisruptionTimeout-c.clock.Since(cond.LastTransitionTime.Time), 0)
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// watchStaleDisruption queues pod for the moment its DisruptionTarget
// condition becomes stale.
func (c *Controller) watchStaleDisruption(pod *corev1.Pod) {
	stale, after := c.staleDisruptionCondition(pod)
	if !stale {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(pod)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.staleQueue.AddAfter(key, after)
}

// syncStalePod sets the DisruptionTarget condition of the pod keyed key
// to False once it is stale.
func (c *Controller) syncStalePod(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	pod, err := c.podLister.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	stale, after := c.staleDisruptionCondition(pod)
	if !stale {
		return nil
	}
	if after > 0 {
		c.staleQueue.AddAfter(key, after)
		return nil
	}
	updated := pod.DeepCopy()
	cond := podCondition(updated, corev1.DisruptionTarget)
	cond.Status, cond.LastTransitionTime = corev1.ConditionFalse, metav1.NewTime(c.clock.Now())
	if _, err := c.client.CoreV1().Pods(namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Reset the stale DisruptionTarget condition to False", "pod", klog.KObj(pod))
	return nil
}
