package validation

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// StatefulSet.

// ValidateStatefulSet validates a StatefulSet on create.
func ValidateStatefulSet(s *appsv1.StatefulSet) field.ErrorList {
	allErrs := validateObjectMeta(&s.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(allErrs, validateStatefulSetSpec(&s.Spec, nil, field.NewPath("spec"))...)
}

func validateStatefulSetSpec(spec, old *appsv1.StatefulSetSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch spec.PodManagementPolicy {
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	case "":
		allErrs = append(allErrs, field.Required(p.Child("podManagementPolicy"), ""))
	default:
		allErrs = append(allErrs, field.Invalid(p.Child("podManagementPolicy"), spec.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	switch spec.UpdateStrategy.Type {
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := spec.UpdateStrategy.RollingUpdate; ru != nil {
			if ru.Partition != nil {
				allErrs = append(allErrs, validateNonnegativeField(int64(*ru.Partition), p.Child("updateStrategy", "rollingUpdate", "partition"))...)
			}
			if ru.MaxUnavailable != nil {
				allErrs = append(allErrs, validatePositiveIntOrPercent(*ru.MaxUnavailable, p.Child("updateStrategy", "rollingUpdate", "maxUnavailable"))...)
			}
		}
	case appsv1.OnDeleteStatefulSetStrategyType:
		if spec.UpdateStrategy.RollingUpdate != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("updateStrategy", "rollingUpdate"), spec.UpdateStrategy.RollingUpdate,
				fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
		}
	case "":
		allErrs = append(allErrs, field.Required(p.Child("updateStrategy"), ""))
	default:
		allErrs = append(allErrs, field.Invalid(p.Child("updateStrategy"), spec.UpdateStrategy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)))
	}
	if spec.Ordinals != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(spec.Ordinals.Start), p.Child("ordinals", "start"))...)
	}
	if spec.ServiceName != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSLabel(spec.ServiceName, false) {
			allErrs = append(allErrs, field.Invalid(p.Child("serviceName"), spec.ServiceName, msg))
		}
	}
	allErrs = append(allErrs, validateNonnegativeField(int64(specReplicas(spec.Replicas)), p.Child("replicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	for i := range spec.VolumeClaimTemplates {
		allErrs = append(allErrs, validatePersistentVolumeClaimSpec(&spec.VolumeClaimTemplates[i].Spec, p.Child("volumeClaimTemplates").Index(i).Child("spec"))...)
	}
	var oldTmpl *corev1.PodTemplateSpec
	var opts podValidationOptions
	tmpl := withClaimVolumes(&spec.Template, spec.VolumeClaimTemplates)
	if old != nil {
		oldTmpl = withClaimVolumes(&old.Template, old.VolumeClaimTemplates)
		opts = podValidationOptionsFor(nil, &tmpl.Spec, &oldTmpl.Spec, &old.Template.ObjectMeta)
	} else {
		opts = podValidationOptionsFor(nil, &tmpl.Spec, nil, nil)
	}
	return append(allErrs, validateSelectorAndTemplate(spec.Selector, tmpl, oldTmpl, 0, "StatefulSet", p, opts)...)
}

// withClaimVolumes is the template as the StatefulSet's pods get it: each
// volumeClaimTemplate is a persistentVolumeClaim volume of its name (unless
// the template has a volume of that name), so containers may mount the
// claims, as upstream allows (it checks the union of the two).
func withClaimVolumes(tmpl *corev1.PodTemplateSpec, claims []corev1.PersistentVolumeClaim) *corev1.PodTemplateSpec {
	if len(claims) == 0 {
		return tmpl
	}
	out := tmpl.DeepCopy()
	for _, c := range claims {
		if slices.ContainsFunc(out.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.Name }) {
			continue
		}
		out.Spec.Volumes = append(out.Spec.Volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}})
	}
	return out
}

// ValidateStatefulSetUpdate: only replicas, ordinals, template,
// updateStrategy, persistentVolumeClaimRetentionPolicy and minReadySeconds
// may change.
func ValidateStatefulSetUpdate(s, old *appsv1.StatefulSet) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateStatefulSetSpec(&s.Spec, &old.Spec, field.NewPath("spec"))...)
	a, b := s.Spec.DeepCopy(), old.Spec.DeepCopy()
	for _, x := range []*appsv1.StatefulSetSpec{a, b} {
		x.Replicas, x.Ordinals, x.Template, x.UpdateStrategy = nil, nil, corev1.PodTemplateSpec{}, appsv1.StatefulSetUpdateStrategy{}
		x.PersistentVolumeClaimRetentionPolicy, x.MinReadySeconds = nil, 0
	}
	if !equality.Semantic.DeepEqual(a, b) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
	}
	return allErrs
}

// DaemonSet.

// ValidateDaemonSet validates a DaemonSet on create.
func ValidateDaemonSet(d *appsv1.DaemonSet) field.ErrorList {
	allErrs := validateObjectMeta(&d.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(allErrs, validateDaemonSetSpec(&d.Spec, nil, field.NewPath("spec"))...)
}

func validateDaemonSetSpec(spec, old *appsv1.DaemonSetSpec, p *field.Path) field.ErrorList {
	var oldTmpl *corev1.PodTemplateSpec
	opts := podValidationOptionsFor(nil, &spec.Template.Spec, nil, nil)
	if old != nil {
		oldTmpl = &old.Template
		opts = podValidationOptionsFor(nil, &spec.Template.Spec, &old.Template.Spec, &old.Template.ObjectMeta)
	}
	allErrs := validateSelectorAndTemplate(spec.Selector, &spec.Template, oldTmpl, 0, "DaemonSet", p, opts)
	allErrs = append(allErrs, validateNonnegativeField(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	sp := p.Child("updateStrategy")
	switch spec.UpdateStrategy.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if ru := spec.UpdateStrategy.RollingUpdate; ru == nil {
			allErrs = append(allErrs, field.Required(sp.Child("rollingUpdate"), ""))
		} else {
			unavailable, surge := 0, 0
			if ru.MaxUnavailable != nil {
				allErrs = append(allErrs, validatePositiveIntOrPercent(*ru.MaxUnavailable, sp.Child("rollingUpdate", "maxUnavailable"))...)
				unavailable = intOrPercentValue(*ru.MaxUnavailable)
			}
			if ru.MaxSurge != nil {
				allErrs = append(allErrs, validatePositiveIntOrPercent(*ru.MaxSurge, sp.Child("rollingUpdate", "maxSurge"))...)
				surge = intOrPercentValue(*ru.MaxSurge)
			}
			if unavailable == 0 && surge == 0 {
				allErrs = append(allErrs, field.Invalid(sp.Child("rollingUpdate", "maxUnavailable"), ru.MaxUnavailable, "may not be 0 when `maxSurge` is 0"))
			}
			if unavailable != 0 && surge != 0 {
				allErrs = append(allErrs, field.Invalid(sp.Child("rollingUpdate", "maxSurge"), ru.MaxSurge, "may not be set when maxUnavailable is non-zero"))
			}
		}
	case "":
		allErrs = append(allErrs, field.Required(sp.Child("type"), ""))
	default:
		allErrs = append(allErrs, field.NotSupported(sp.Child("type"), spec.UpdateStrategy.Type,
			[]string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)}))
	}
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	return allErrs
}

// ValidateDaemonSetUpdate: the selector is immutable.
func ValidateDaemonSetUpdate(d, old *appsv1.DaemonSet) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateDaemonSetSpec(&d.Spec, &old.Spec, field.NewPath("spec"))...)
	return append(allErrs, validateImmutableField(d.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
}

// ValidateControllerRevision: data is mandatory, revision non-negative.
func ValidateControllerRevision(r *appsv1.ControllerRevision) field.ErrorList {
	allErrs := validateObjectMeta(&r.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if r.Data.Raw == nil && r.Data.Object == nil {
		allErrs = append(allErrs, field.Required(field.NewPath("data"), "data is mandatory"))
	}
	return append(allErrs, validateNonnegativeField(r.Revision, field.NewPath("revision"))...)
}

// ValidateControllerRevisionUpdate: data is immutable.
func ValidateControllerRevisionUpdate(r, old *appsv1.ControllerRevision) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateControllerRevision(r)...)
	return append(allErrs, validateImmutableField(r.Data, old.Data, field.NewPath("data"))...)
}

// CronJob (the Job is in job.go).

// ValidateCronJob validates a CronJob on create: a name of at most 52
// characters (the controller appends an 11-character suffix), a valid
// schedule and a valid job template.
func ValidateCronJob(c *batchv1.CronJob) field.ErrorList {
	allErrs := validateObjectMeta(&c.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if len(c.Name) > 52 {
		allErrs = append(allErrs, field.Invalid(metadataPath.Child("name"), c.Name, "must be no more than 52 characters"))
	}
	return append(allErrs, validateCronJobSpec(&c.Spec, nil, field.NewPath("spec"))...)
}

func validateCronJobSpec(spec, old *batchv1.CronJobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Schedule == "" {
		allErrs = append(allErrs, field.Required(p.Child("schedule"), ""))
	} else {
		// An object stored with a TZ= schedule before that was refused may
		// keep it.
		allowTZ := old != nil && strings.Contains(old.Schedule, "TZ")
		allErrs = append(allErrs, validateCronSchedule(spec.Schedule, allowTZ, spec.TimeZone, p.Child("schedule"))...)
	}
	allErrs = append(allErrs, validateTimeZone(spec.TimeZone, p.Child("timeZone"))...)
	switch spec.ConcurrencyPolicy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
	case "":
		allErrs = append(allErrs, field.Required(p.Child("concurrencyPolicy"), ""))
	default:
		allErrs = append(allErrs, field.NotSupported(p.Child("concurrencyPolicy"), spec.ConcurrencyPolicy,
			[]batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}))
	}
	if spec.StartingDeadlineSeconds != nil {
		allErrs = append(allErrs, validateNonnegativeField(*spec.StartingDeadlineSeconds, p.Child("startingDeadlineSeconds"))...)
	}
	for name, v := range map[string]*int32{"successfulJobsHistoryLimit": spec.SuccessfulJobsHistoryLimit, "failedJobsHistoryLimit": spec.FailedJobsHistoryLimit} {
		if v != nil {
			allErrs = append(allErrs, validateNonnegativeField(int64(*v), p.Child(name))...)
		}
	}
	jt := p.Child("jobTemplate")
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.JobTemplate.Labels, jt.Child("metadata", "labels"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(spec.JobTemplate.Annotations, jt.Child("metadata", "annotations"))...)
	var oldJob *batchv1.JobSpec
	if old != nil {
		oldJob = &old.JobTemplate.Spec
	}
	allErrs = append(allErrs, validateJobTemplateSpec(&spec.JobTemplate.Spec, oldJob, jt.Child("spec"))...)
	return allErrs
}

// ValidateCronJobUpdate validates an update of a CronJob.
func ValidateCronJobUpdate(c, old *batchv1.CronJob) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(allErrs, validateCronJobSpec(&c.Spec, &old.Spec, field.NewPath("spec"))...)
}

// PodDisruptionBudget.

// ValidatePodDisruptionBudget: minAvailable and maxUnavailable are
// exclusive, non-negative, and percentages are at most 100%.
func ValidatePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	allErrs := validateObjectMeta(&pdb.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	if pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable != nil {
		allErrs = append(allErrs, field.Invalid(spec, pdb.Spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	for name, v := range map[string]*intstr.IntOrString{"minAvailable": pdb.Spec.MinAvailable, "maxUnavailable": pdb.Spec.MaxUnavailable} {
		if v == nil {
			continue
		}
		allErrs = append(allErrs, validatePositiveIntOrPercent(*v, spec.Child(name))...)
		if pct, ok := percentValue(*v); ok && pct > 100 {
			allErrs = append(allErrs, field.Invalid(spec.Child(name), v, "must not be greater than 100%"))
		}
	}
	if pdb.Spec.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(pdb.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))...)
	}
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p != policyv1.IfHealthyBudget && *p != policyv1.AlwaysAllow {
		allErrs = append(allErrs, field.NotSupported(spec.Child("unhealthyPodEvictionPolicy"), *p,
			[]string{string(policyv1.IfHealthyBudget), string(policyv1.AlwaysAllow)}))
	}
	return allErrs
}

// ValidatePodDisruptionBudgetUpdate also checks the status counters.
func ValidatePodDisruptionBudgetUpdate(pdb, old *policyv1.PodDisruptionBudget) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&pdb.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidatePodDisruptionBudget(pdb)...)
	s := field.NewPath("status")
	for name, v := range map[string]int32{"disruptionsAllowed": pdb.Status.DisruptionsAllowed, "currentHealthy": pdb.Status.CurrentHealthy,
		"desiredHealthy": pdb.Status.DesiredHealthy, "expectedPods": pdb.Status.ExpectedPods} {
		allErrs = append(allErrs, validateNonnegativeField(int64(v), s.Child(name))...)
	}
	return allErrs
}

// ValidateReplicationController validates an RC on create.
func ValidateReplicationController(rc *corev1.ReplicationController) field.ErrorList {
	allErrs := validateObjectMeta(&rc.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(allErrs, validateRCSpec(&rc.Spec, nil, field.NewPath("spec"))...)
}

// ValidateReplicationControllerUpdate validates an update.
func ValidateReplicationControllerUpdate(rc, old *corev1.ReplicationController) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateRCSpec(&rc.Spec, &old.Spec, field.NewPath("spec"))...)
	s := field.NewPath("status")
	for name, v := range map[string]int32{"replicas": rc.Status.Replicas, "fullyLabeledReplicas": rc.Status.FullyLabeledReplicas,
		"readyReplicas": rc.Status.ReadyReplicas, "availableReplicas": rc.Status.AvailableReplicas} {
		allErrs = append(allErrs, validateNonnegativeField(int64(v), s.Child(name))...)
	}
	return allErrs
}

func validateRCSpec(spec, old *corev1.ReplicationControllerSpec, p *field.Path) field.ErrorList {
	replicas := specReplicas(spec.Replicas)
	allErrs := validateNonnegativeField(int64(replicas), p.Child("replicas"))
	allErrs = append(allErrs, validateNonnegativeField(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	selector := labels.Set(spec.Selector).AsSelector()
	if selector.Empty() {
		allErrs = append(allErrs, field.Required(p.Child("selector"), ""))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.Selector, p.Child("selector"))...)
	tp := p.Child("template")
	if spec.Template == nil {
		return append(allErrs, field.Required(tp, ""))
	}
	if !selector.Empty() && !selector.Matches(labels.Set(spec.Template.Labels)) {
		allErrs = append(allErrs, field.Invalid(tp.Child("metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	var oldSpec *corev1.PodSpec
	var oldMeta *corev1.PodTemplateSpec
	if old != nil && old.Template != nil {
		oldSpec, oldMeta = &old.Template.Spec, old.Template
	}
	var opts podValidationOptions
	if oldMeta != nil {
		opts = podValidationOptionsFor(nil, &spec.Template.Spec, oldSpec, &oldMeta.ObjectMeta)
	} else {
		opts = podValidationOptionsFor(nil, &spec.Template.Spec, nil, nil)
	}
	allErrs = append(allErrs, validatePodTemplateSpec(spec.Template, tp, opts)...)
	if spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(tp.Child("spec", "restartPolicy"), spec.Template.Spec.RestartPolicy, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if spec.Template.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Invalid(tp.Child("spec", "activeDeadlineSeconds"), spec.Template.Spec.ActiveDeadlineSeconds, "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return allErrs
}

// ValidatePodTemplate validates a PodTemplate.
func ValidatePodTemplate(pt *corev1.PodTemplate) field.ErrorList {
	allErrs := validateObjectMeta(&pt.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	opts := podValidationOptionsFor(nil, &pt.Template.Spec, nil, nil)
	return append(allErrs, validatePodTemplateSpec(&pt.Template, field.NewPath("template"), opts)...)
}

// ValidatePodTemplateUpdate validates an update of a PodTemplate.
func ValidatePodTemplateUpdate(pt, old *corev1.PodTemplate) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&pt.ObjectMeta, &old.ObjectMeta, metadataPath)
	opts := podValidationOptionsFor(nil, &pt.Template.Spec, &old.Template.Spec, &old.Template.ObjectMeta)
	return append(allErrs, validatePodTemplateSpec(&pt.Template, field.NewPath("template"), opts)...)
}

// PersistentVolume and PersistentVolumeClaim.
