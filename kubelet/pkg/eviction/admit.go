package eviction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Upstream's markers of pods that are never evicted nor refused.
const (
	configSourceAnnotation = "kubernetes.io/config.source"
	configMirrorAnnotation = "kubernetes.io/config.mirror"
	apiserverSource        = "api"
	// SystemCriticalPriority is the lowest priority of a critical pod.
	SystemCriticalPriority int32 = 2 * 1000000000
)

// IsCriticalPod is upstream's test: a static pod, a mirror pod, or a pod
// with a priority of at least SystemCriticalPriority.
func IsCriticalPod(pod *corev1.Pod) bool {
	if src, ok := pod.Annotations[configSourceAnnotation]; ok && src != apiserverSource {
		return true
	}
	if _, ok := pod.Annotations[configMirrorAnnotation]; ok {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= SystemCriticalPriority
}

// Admit is upstream's eviction admit handler: under memory pressure alone
// it refuses BestEffort pods (unless they tolerate the memory-pressure
// taint); under disk or PID pressure it refuses every pod. Critical pods
// are always admitted. reason is "Evicted" and message names the
// conditions, e.g. "The node had condition: [DiskPressure]. ".
func (m *Manager) Admit(pod *corev1.Pod) (ok bool, reason, message string) {
	conds := m.Conditions()
	if len(conds) == 0 || IsCriticalPod(pod) {
		return true, "", ""
	}
	if len(conds) == 1 && conds[0] == corev1.NodeMemoryPressure {
		if !isBestEffort(pod) || toleratesMemoryPressure(pod) {
			return true, "", ""
		}
	}
	return false, Reason, fmt.Sprintf(nodeConditionMessageFmt, conds)
}

func toleratesMemoryPressure(pod *corev1.Pod) bool {
	taint := &corev1.Taint{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(taint) {
			return true
		}
	}
	return false
}

// isBestEffort: no container (init containers included) requests or
// limits cpu or memory.
func isBestEffort(pod *corev1.Pod) bool {
	all := append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		for _, list := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q, ok := list[name]; ok && !q.IsZero() {
					return false
				}
			}
		}
	}
	return true
}
