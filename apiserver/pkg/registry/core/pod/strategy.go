// Package pod holds the Pod kind's strategies, defaults and selectable
// fields.
package pod

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/component-base/qos"
)

// Strategy is the Pod's main endpoint; StatusStrategy its status, which
// keeps the pod's owners (old kubelets corrupted them).
var (
	Strategy       = rest.Main(rest.PrepareCreate(prepare), rest.Validation(validation.ValidatePod, validation.ValidatePodUpdate))
	StatusStrategy = rest.Status(rest.Validation(validation.ValidatePod, validation.ValidatePodStatusUpdate),
		rest.KeepOnStatus(func(pod, old *corev1.Pod) { pod.OwnerReferences = old.OwnerReferences }))
)

// Default applies upstream's v1 defaults to a Pod.
var Default = rest.Defaults(defaults.DefaultPod)

func prepare(obj runtime.Object) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qos.Class(pod)}
}

// Fields are a Pod's selectable fields.
func Fields(obj runtime.Object) fields.Set {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	var podIPs []string
	for _, ip := range pod.Status.PodIPs {
		podIPs = append(podIPs, ip.IP)
	}
	return fields.Set{
		"spec.nodeName":            pod.Spec.NodeName,
		"spec.restartPolicy":       string(pod.Spec.RestartPolicy),
		"spec.schedulerName":       pod.Spec.SchedulerName,
		"spec.serviceAccountName":  pod.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(pod.Spec.HostNetwork),
		"status.phase":             string(pod.Status.Phase),
		"status.podIP":             podIP,
		"status.podIPs":            strings.Join(podIPs, ","),
		"status.nominatedNodeName": pod.Status.NominatedNodeName,
	}
}

// GracePeriod is upstream's CheckGracefulDelete for pods: the requested
// grace period, else the pod's own; zero for pods that never ran on a node
// or have finished.
func GracePeriod(obj runtime.Object, opts *metav1.DeleteOptions) int64 {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return 0
	}
	g := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		g = *pod.Spec.TerminationGracePeriodSeconds
	}
	if opts.GracePeriodSeconds != nil {
		g = *opts.GracePeriodSeconds
		if g < 0 {
			g = 1
		}
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return 0
	}
	return g
}
