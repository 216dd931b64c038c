package validation

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/apis/convert"
)

// validateCreateMore validates the kinds added with issue 8; ok is false for
// other kinds.
func validateCreateMore(obj runtime.Object) (field.ErrorList, bool) {
	switch o := obj.(type) {
	case *corev1.LimitRange:
		return ValidateLimitRange(o), true
	case *corev1.ResourceQuota:
		return ValidateResourceQuota(o), true
	case *corev1.ReplicationController:
		return ValidateReplicationController(o), true
	case *corev1.PodTemplate:
		return ValidatePodTemplate(o), true
	case *corev1.PersistentVolume:
		return ValidatePersistentVolume(o), true
	case *corev1.PersistentVolumeClaim:
		return ValidatePersistentVolumeClaim(o), true
	case *schedulingv1.PriorityClass:
		return ValidatePriorityClass(o), true
	case *nodev1.RuntimeClass:
		return ValidateRuntimeClass(o), true
	case *appsv1.StatefulSet:
		return ValidateStatefulSet(o), true
	case *appsv1.DaemonSet:
		return ValidateDaemonSet(o), true
	case *appsv1.ControllerRevision:
		return ValidateControllerRevision(o), true
	case *batchv1.Job:
		return ValidateJob(o), true
	case *batchv1.CronJob:
		return ValidateCronJob(o), true
	case *networkingv1.Ingress:
		return ValidateIngress(o), true
	case *networkingv1.IngressClass:
		return ValidateIngressClass(o), true
	case *networkingv1.NetworkPolicy:
		return ValidateNetworkPolicy(o), true
	case *policyv1.PodDisruptionBudget:
		return ValidatePodDisruptionBudget(o), true
	case *eventsv1.Event:
		return ValidateEventsV1Event(o), true
	case *storagev1.StorageClass:
		return ValidateStorageClass(o), true
	case *storagev1.CSIDriver:
		return ValidateCSIDriver(o), true
	case *storagev1.CSINode:
		return ValidateCSINode(o), true
	case *storagev1.CSIStorageCapacity:
		return ValidateCSIStorageCapacity(o), true
	case *storagev1.VolumeAttachment:
		return ValidateVolumeAttachment(o), true
	case *certificatesv1.CertificateSigningRequest:
		return ValidateCertificateSigningRequest(o), true
	case *flowcontrolv1.FlowSchema:
		return ValidateFlowSchema(o), true
	case *flowcontrolv1.PriorityLevelConfiguration:
		return ValidatePriorityLevelConfiguration(o), true
	}
	return nil, false
}

// sameKind calls fn with old as T, or reports a mismatch.
func sameKind[T runtime.Object](old runtime.Object, fn func(T) field.ErrorList) field.ErrorList {
	o, ok := old.(T)
	if !ok {
		return field.ErrorList{field.InternalError(field.NewPath(""), errMismatch(old))}
	}
	return fn(o)
}

// validateUpdateMore validates updates of the kinds added with issue 8.
func validateUpdateMore(obj, old runtime.Object) (field.ErrorList, bool) {
	switch o := obj.(type) {
	case *corev1.LimitRange:
		return sameKind(old, func(p *corev1.LimitRange) field.ErrorList {
			return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateLimitRange(o)...)
		}), true
	case *corev1.ResourceQuota:
		return sameKind(old, func(p *corev1.ResourceQuota) field.ErrorList { return ValidateResourceQuotaUpdate(o, p) }), true
	case *corev1.ReplicationController:
		return sameKind(old, func(p *corev1.ReplicationController) field.ErrorList {
			return ValidateReplicationControllerUpdate(o, p)
		}), true
	case *corev1.PodTemplate:
		return sameKind(old, func(p *corev1.PodTemplate) field.ErrorList { return ValidatePodTemplateUpdate(o, p) }), true
	case *corev1.PersistentVolume:
		return sameKind(old, func(p *corev1.PersistentVolume) field.ErrorList { return ValidatePersistentVolumeUpdate(o, p) }), true
	case *corev1.PersistentVolumeClaim:
		return sameKind(old, func(p *corev1.PersistentVolumeClaim) field.ErrorList {
			return ValidatePersistentVolumeClaimUpdate(o, p)
		}), true
	case *schedulingv1.PriorityClass:
		return sameKind(old, func(p *schedulingv1.PriorityClass) field.ErrorList { return ValidatePriorityClassUpdate(o, p) }), true
	case *nodev1.RuntimeClass:
		return sameKind(old, func(p *nodev1.RuntimeClass) field.ErrorList { return ValidateRuntimeClassUpdate(o, p) }), true
	case *appsv1.StatefulSet:
		return sameKind(old, func(p *appsv1.StatefulSet) field.ErrorList { return ValidateStatefulSetUpdate(o, p) }), true
	case *appsv1.DaemonSet:
		return sameKind(old, func(p *appsv1.DaemonSet) field.ErrorList { return ValidateDaemonSetUpdate(o, p) }), true
	case *appsv1.ControllerRevision:
		return sameKind(old, func(p *appsv1.ControllerRevision) field.ErrorList { return ValidateControllerRevisionUpdate(o, p) }), true
	case *batchv1.Job:
		return sameKind(old, func(p *batchv1.Job) field.ErrorList { return ValidateJobUpdate(o, p) }), true
	case *batchv1.CronJob:
		return sameKind(old, func(p *batchv1.CronJob) field.ErrorList { return ValidateCronJobUpdate(o, p) }), true
	case *networkingv1.Ingress:
		return sameKind(old, func(p *networkingv1.Ingress) field.ErrorList {
			return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateIngress(o)...)
		}), true
	case *networkingv1.IngressClass:
		return sameKind(old, func(p *networkingv1.IngressClass) field.ErrorList { return ValidateIngressClassUpdate(o, p) }), true
	case *networkingv1.NetworkPolicy:
		return sameKind(old, func(p *networkingv1.NetworkPolicy) field.ErrorList {
			return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateNetworkPolicy(o)...)
		}), true
	case *policyv1.PodDisruptionBudget:
		return sameKind(old, func(p *policyv1.PodDisruptionBudget) field.ErrorList { return ValidatePodDisruptionBudgetUpdate(o, p) }), true
	case *eventsv1.Event:
		return sameKind(old, func(p *eventsv1.Event) field.ErrorList { return ValidateEvent(convert.EventToCore(o)) }), true
	case *storagev1.StorageClass:
		return sameKind(old, func(p *storagev1.StorageClass) field.ErrorList { return ValidateStorageClassUpdate(o, p) }), true
	case *storagev1.CSIDriver:
		return sameKind(old, func(p *storagev1.CSIDriver) field.ErrorList { return ValidateCSIDriverUpdate(o, p) }), true
	case *storagev1.CSINode:
		return sameKind(old, func(p *storagev1.CSINode) field.ErrorList {
			return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateCSINode(o)...)
		}), true
	case *storagev1.CSIStorageCapacity:
		return sameKind(old, func(p *storagev1.CSIStorageCapacity) field.ErrorList {
			errs := append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateCSIStorageCapacity(o)...)
			errs = append(errs, validateImmutableField(o.StorageClassName, p.StorageClassName, field.NewPath("storageClassName"))...)
			return append(errs, validateImmutableField(o.NodeTopology, p.NodeTopology, field.NewPath("nodeTopology"))...)
		}), true
	case *storagev1.VolumeAttachment:
		return sameKind(old, func(p *storagev1.VolumeAttachment) field.ErrorList { return ValidateVolumeAttachmentUpdate(o, p) }), true
	case *certificatesv1.CertificateSigningRequest:
		return sameKind(old, func(p *certificatesv1.CertificateSigningRequest) field.ErrorList {
			return ValidateCertificateSigningRequestUpdate(o, p)
		}), true
	case *flowcontrolv1.FlowSchema:
		return sameKind(old, func(p *flowcontrolv1.FlowSchema) field.ErrorList {
			return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateFlowSchema(o)...)
		}), true
	case *flowcontrolv1.PriorityLevelConfiguration:
		return sameKind(old, func(p *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
			return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidatePriorityLevelConfiguration(o)...)
		}), true
	}
	return nil, false
}

// ValidateEventsV1Event is upstream's strict validation of events created
// through events.k8s.io/v1, on top of the legacy rules every Event passes.
func ValidateEventsV1Event(e *eventsv1.Event) field.ErrorList {
	core := convert.EventToCore(e)
	allErrs := ValidateEvent(core)
	allErrs = append(allErrs, validateObjectMeta(&e.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)...)
	if e.Series != nil {
		if e.Series.Count < 2 {
			allErrs = append(allErrs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
		}
		if e.Series.LastObservedTime.IsZero() {
			allErrs = append(allErrs, field.Required(field.NewPath("series.lastObservedTime"), ""))
		}
	}
	if e.EventTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
		allErrs = append(allErrs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.Type)))
	}
	if !e.DeprecatedFirstTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("deprecatedFirstTimestamp"), "", "needs to be unset"))
	}
	if !e.DeprecatedLastTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("deprecatedLastTimestamp"), "", "needs to be unset"))
	}
	if e.DeprecatedCount != 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("deprecatedCount"), "", "needs to be unset"))
	}
	if e.DeprecatedSource.Component != "" || e.DeprecatedSource.Host != "" {
		allErrs = append(allErrs, field.Invalid(field.NewPath("deprecatedSource"), "", "needs to be unset"))
	}
	return allErrs
}
