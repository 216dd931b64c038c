// Package qos computes a pod's quality-of-service class, which the API
// server records in its status and the kubelet arranges cgroups and
// evictions by.
package qos

import (
	corev1 "k8s.io/api/core/v1"
)

// Class computes the pod's QoS class as upstream does: BestEffort when no
// container requests or limits CPU or memory, Guaranteed when every
// container has CPU and memory limits equal to its requests, else
// Burstable.
func Class(pod *corev1.Pod) corev1.PodQOSClass {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	zero := true
	guaranteed := true
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		for name, q := range c.Resources.Requests {
			if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
				continue
			}
			if !q.IsZero() {
				zero = false
				cur := requests[name]
				cur.Add(q)
				requests[name] = cur
			}
		}
		seen := 0
		for name, q := range c.Resources.Limits {
			if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
				continue
			}
			if !q.IsZero() {
				zero = false
				seen++
				cur := limits[name]
				cur.Add(q)
				limits[name] = cur
			}
		}
		if seen != 2 {
			guaranteed = false
		}
	}
	if zero {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, r := range requests {
			if l, ok := limits[name]; !ok || l.Cmp(r) != 0 {
				guaranteed = false
			}
		}
	}
	if guaranteed && len(limits) == 2 {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
