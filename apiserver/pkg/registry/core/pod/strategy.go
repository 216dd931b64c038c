// Package pod holds the Pod kind's strategies, defaults and selectable
// fields.
package pod

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
	"skiff.dev/component-base/qos"
)

// Strategy is the Pod's main endpoint; StatusStrategy its status, which
// keeps the pod's owners (old kubelets corrupted them) and, as upstream's
// podStatusStrategy.GetResetFields, resets them and deletionTimestamp.
var (
	Strategy       = rest.Main(rest.PrepareCreate(prepare), rest.Validation(validation.ValidatePod, validation.ValidatePodUpdate))
	StatusStrategy = rest.Status(rest.Validation(validation.ValidatePod, validation.ValidatePodStatusUpdate),
		rest.KeepOnStatus(func(pod, old *corev1.Pod) { pod.OwnerReferences = old.OwnerReferences }),
		rest.ResetFields(fieldpath.MakePathOrDie("metadata", "deletionTimestamp"), fieldpath.MakePathOrDie("metadata", "ownerReferences")))
)

// SubEphemeralContainers names the pods/ephemeralcontainers subresource.
const SubEphemeralContainers = "ephemeralcontainers"

// EphemeralContainersStrategy serves pods/ephemeralcontainers: of the
// object sent, only spec.ephemeralContainers is taken (upstream's
// dropNonEphemeralContainerUpdates), and existing ephemeral containers may
// neither be removed nor changed.
var EphemeralContainersStrategy rest.Strategy = ephemeralContainersStrategy{
	rest.Main(rest.Validation(validation.ValidatePod, validation.ValidatePodEphemeralContainersUpdate)),
}

type ephemeralContainersStrategy struct{ rest.Generic }

func (s ephemeralContainersStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, ok1 := obj.(*corev1.Pod)
	oldPod, ok2 := old.(*corev1.Pod)
	if !ok1 || !ok2 {
		return
	}
	kept := oldPod.DeepCopy()
	kept.TypeMeta = pod.TypeMeta
	kept.Name, kept.Namespace = pod.Name, pod.Namespace
	kept.ResourceVersion, kept.UID = pod.ResourceVersion, pod.UID
	kept.Spec.EphemeralContainers = pod.Spec.EphemeralContainers
	*pod = *kept
}

// Subresource names the endpoint: ephemeralcontainers.
func (ephemeralContainersStrategy) Subresource() string { return SubEphemeralContainers }

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

// ValidateBinding checks a Binding (pods/binding) of the pod named name: a
// target node is named, of kind Node, and the binding names the pod.
func ValidateBinding(b *corev1.Binding, name string) error {
	var errs field.ErrorList
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Binding").GroupKind(), b.Name, errs)
	}
	if b.Name != "" && b.Name != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", b.Name, name))
	}
	return nil
}

// Bind returns the update that assigns a stored pod to b's node, as the
// scheduler's binding does: refused for a pod being deleted or already
// assigned; b's annotations are added and PodScheduled set at now.
func Bind(b *corev1.Binding, now time.Time) func(existing runtime.Object) (runtime.Object, error) {
	return func(existing runtime.Object) (runtime.Object, error) {
		pod := existing.DeepCopyObject().(*corev1.Pod)
		if pod.DeletionTimestamp != nil {
			return nil, fmt.Errorf("%w: pod %s is being deleted, cannot be assigned to a host", storage.ErrConflict, pod.Name)
		}
		if pod.Spec.NodeName != "" {
			return nil, fmt.Errorf("%w: pod %s is already assigned to node %q", storage.ErrConflict, pod.Name, pod.Spec.NodeName)
		}
		pod.Spec.NodeName = b.Target.Name
		for k, v := range b.Annotations {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
		setPodCondition(pod, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)})
		return pod, nil
	}
}

func setPodCondition(pod *corev1.Pod, c corev1.PodCondition) {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == c.Type {
			if pod.Status.Conditions[i].Status == c.Status {
				c.LastTransitionTime = pod.Status.Conditions[i].LastTransitionTime
			}
			pod.Status.Conditions[i] = c
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}
