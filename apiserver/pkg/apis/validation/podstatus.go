package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// ValidatePodStatusUpdate validates an update through the pods/status
// subresource: the node stays the same, the QoS class never changes,
// containers that must not restart stay terminated, and pod IPs are valid.
func ValidatePodStatusUpdate(newPod, oldPod *corev1.Pod) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&newPod.ObjectMeta, &oldPod.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validatePodSpecificAnnotationUpdates(newPod, oldPod, metadataPath.Child("annotations"), podValidationOptionsFor(&newPod.ObjectMeta, &newPod.Spec, &oldPod.Spec, &oldPod.ObjectMeta))...)
	// Upstream reports conditions under metadata.
	systemConditions := sets.New(corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized)
	for i, c := range newPod.Status.Conditions {
		if !systemConditions.Has(c.Type) {
			allErrs = append(allErrs, validateQualifiedName(string(c.Type), metadataPath.Child("conditions").Index(i).Child("Type"))...)
		}
	}
	statusPath := field.NewPath("status")
	if newPod.Spec.NodeName != oldPod.Spec.NodeName {
		allErrs = append(allErrs, field.Forbidden(statusPath.Child("nodeName"), "may not be changed directly"))
	}
	if n := newPod.Status.NominatedNodeName; n != oldPod.Status.NominatedNodeName && len(n) > 0 {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(n, false) {
			allErrs = append(allErrs, field.Invalid(statusPath.Child("nominatedNodeName"), n, msg))
		}
	}
	allErrs = append(allErrs, validateImmutableField(newPod.Status.QOSClass, oldPod.Status.QOSClass, statusPath.Child("qosClass"))...)
	allErrs = append(allErrs, validateContainerStateTransition(newPod.Status.ContainerStatuses, oldPod.Status.ContainerStatuses, statusPath.Child("containerStatuses"), oldPod.Spec.RestartPolicy, nil)...)
	allErrs = append(allErrs, validateContainerStateTransition(newPod.Status.InitContainerStatuses, oldPod.Status.InitContainerStatuses, statusPath.Child("initContainerStatuses"), oldPod.Spec.RestartPolicy, oldPod.Spec.InitContainers)...)
	// Ephemeral containers are never restarted.
	allErrs = append(allErrs, validateContainerStateTransition(newPod.Status.EphemeralContainerStatuses, oldPod.Status.EphemeralContainerStatuses, statusPath.Child("ephemeralContainerStatuses"), corev1.RestartPolicyNever, nil)...)
	allErrs = append(allErrs, validateStatusIPs(podIPStrings(newPod), statusPath.Child("podIPs"))...)
	hostIPs := hostIPStrings(newPod)
	if len(hostIPs) > 0 && newPod.Status.HostIP != "" && newPod.Status.HostIP != hostIPs[0] {
		allErrs = append(allErrs, field.Invalid(statusPath.Child("hostIPs").Index(0).Child("ip"), hostIPs[0], "must be equal to `hostIP`"))
	}
	allErrs = append(allErrs, validateStatusIPs(hostIPs, statusPath.Child("hostIPs"))...)
	return allErrs
}

func podIPStrings(pod *corev1.Pod) []string {
	ips := make([]string, 0, len(pod.Status.PodIPs))
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = append(ips, pod.Status.PodIP)
	}
	return ips
}

func hostIPStrings(pod *corev1.Pod) []string {
	ips := make([]string, 0, len(pod.Status.HostIPs))
	for _, ip := range pod.Status.HostIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) == 0 && pod.Status.HostIP != "" {
		ips = append(ips, pod.Status.HostIP)
	}
	return ips
}

// validateStatusIPs requires valid IPs, at most one per family, no duplicates.
func validateStatusIPs(ips []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ip := range ips {
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Index(i), ip)...)
	}
	if len(ips) > 1 && len(allErrs) == 0 {
		dualStack, err := netutils.IsDualStackIPStrings(ips)
		if err != nil {
			allErrs = append(allErrs, field.InternalError(fldPath, fmt.Errorf("failed to check for dual stack with error:%v", err)))
		}
		if !dualStack || len(ips) > 2 {
			allErrs = append(allErrs, field.Invalid(fldPath, ips, "may specify no more than one IP for each IP family"))
		}
		seen := sets.New[string]()
		for i, ip := range ips {
			if seen.Has(ip) {
				allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), ip))
			}
			seen.Insert(ip)
		}
	}
	return allErrs
}

// validateContainerStateTransition forbids terminated containers from
// running again when the restart policy does not allow it. Restartable
// (sidecar) init containers may always restart.
func validateContainerStateTransition(newStatuses, oldStatuses []corev1.ContainerStatus, fldPath *field.Path, restartPolicy corev1.RestartPolicy, initContainers []corev1.Container) field.ErrorList {
	if restartPolicy == corev1.RestartPolicyAlways {
		return nil
	}
	var allErrs field.ErrorList
	for i, oldStatus := range oldStatuses {
		if oldStatus.State.Terminated == nil {
			continue
		}
		if oldStatus.State.Terminated.ExitCode != 0 && restartPolicy == corev1.RestartPolicyOnFailure {
			continue
		}
		sidecar := false
		for _, c := range initContainers {
			if c.Name == oldStatus.Name && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				sidecar = true
			}
		}
		if sidecar {
			continue
		}
		for _, newStatus := range newStatuses {
			if oldStatus.Name == newStatus.Name && newStatus.State.Terminated == nil {
				allErrs = append(allErrs, field.Forbidden(fldPath.Index(i).Child("state"), "may not be transitioned to non-terminated state"))
			}
		}
	}
	return allErrs
}

// ValidatePodBinding validates a Binding posted to pods/binding.
func ValidatePodBinding(binding *corev1.Binding) field.ErrorList {
	var allErrs field.ErrorList
	if len(binding.Target.Kind) != 0 && binding.Target.Kind != "Node" {
		allErrs = append(allErrs, field.NotSupported(field.NewPath("target", "kind"), binding.Target.Kind, []string{"Node", "<empty>"}))
	}
	if len(binding.Target.Name) == 0 {
		allErrs = append(allErrs, field.Required(field.NewPath("target", "name"), ""))
	}
	return allErrs
}
