package controllerutil

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// GetPodReadyCondition returns pod's Ready condition, or nil.
func GetPodReadyCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// IsPodReady reports whether pod's Ready condition is True.
func IsPodReady(pod *corev1.Pod) bool {
	c := GetPodReadyCondition(pod)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsPodAvailable reports whether pod has been ready for at least
// minReadySeconds at now.
func IsPodAvailable(pod *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	c := GetPodReadyCondition(pod)
	if c == nil || c.Status != corev1.ConditionTrue {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	minReady := time.Duration(minReadySeconds) * time.Second
	return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(minReady).Before(now)
}

// IsPodActive reports whether pod is neither finished nor being deleted.
func IsPodActive(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded &&
		pod.Status.Phase != corev1.PodFailed &&
		pod.DeletionTimestamp == nil
}

// FilterActivePods returns the active pods of pods.
func FilterActivePods(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if IsPodActive(p) {
			out = append(out, p)
		}
	}
	return out
}

// PodKey is the "namespace/name" key of pod.
func PodKey(pod *corev1.Pod) string {
	return pod.Namespace + "/" + pod.Name
}

// SelectingPod returns the controllers of controllers whose selector (read
// by selectorOf) is valid, not empty, and matches pod's labels: those that
// may want to adopt an orphan pod.
func SelectingPod[T any](controllers []T, selectorOf func(T) *metav1.LabelSelector, pod *corev1.Pod) []T {
	if len(pod.Labels) == 0 {
		return nil
	}
	var out []T
	for _, c := range controllers {
		sel, err := metav1.LabelSelectorAsSelector(selectorOf(c))
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, c)
	}
	return out
}
