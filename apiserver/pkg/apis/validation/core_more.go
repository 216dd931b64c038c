package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// LimitRange.

var limitTypes = sets.New(corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim)

// ValidateLimitRange validates a LimitRange as upstream does: known types
// once each, no defaults for type Pod, and min <= defaultRequest <= default
// <= max with maxLimitRequestRatio >= 1 and <= max/min.
func ValidateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	allErrs := validateObjectMeta(&lr.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	seen := sets.New[corev1.LimitType]()
	limPath := field.NewPath("spec", "limits")
	for i := range lr.Spec.Limits {
		idx := limPath.Index(i)
		limit := &lr.Spec.Limits[i]
		allErrs = append(allErrs, validateQualifiedName(string(limit.Type), idx.Child("type"))...)
		if seen.Has(limit.Type) {
			allErrs = append(allErrs, field.Duplicate(idx.Child("type"), limit.Type))
		}
		seen.Insert(limit.Type)
		allErrs = append(allErrs, validateLimitRangeItem(limit, idx)...)
	}
	return allErrs
}

func validateLimitRangeResource(t corev1.LimitType, name corev1.ResourceName, value resource.Quantity, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch t {
	case corev1.LimitTypePod, corev1.LimitTypeContainer:
		allErrs = validateContainerResourceName(name, p)
	default:
		allErrs = validateResourceName(name, p)
	}
	return append(allErrs, validateResourceQuantityValue(name, value, p)...)
}

func validateLimitRangeItem(limit *corev1.LimitRangeItem, idx *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	keys := sets.New[corev1.ResourceName]()
	check := func(list corev1.ResourceList, name string) {
		for k, q := range list {
			allErrs = append(allErrs, validateLimitRangeResource(limit.Type, k, q, idx.Child(name).Key(string(k)))...)
			keys.Insert(k)
		}
	}
	check(limit.Max, "max")
	check(limit.Min, "min")
	if limit.Type == corev1.LimitTypePod {
		if len(limit.Default) > 0 {
			allErrs = append(allErrs, field.Forbidden(idx.Child("default"), "may not be specified when `type` is 'Pod'"))
		}
		if len(limit.DefaultRequest) > 0 {
			allErrs = append(allErrs, field.Forbidden(idx.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
		}
	} else {
		check(limit.Default, "default")
		check(limit.DefaultRequest, "defaultRequest")
	}
	if limit.Type == corev1.LimitTypePersistentVolumeClaim {
		_, minFound := limit.Min[corev1.ResourceStorage]
		_, maxFound := limit.Max[corev1.ResourceStorage]
		if !minFound && !maxFound {
			allErrs = append(allErrs, field.Required(idx.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
		}
	}
	for k, q := range limit.MaxLimitRequestRatio {
		allErrs = append(allErrs, validateLimitRangeResource(limit.Type, k, q, idx.Child("maxLimitRequestRatio").Key(string(k)))...)
		keys.Insert(k)
	}
	for _, k := range sets.List(keys) {
		allErrs = append(allErrs, validateLimitRangeBounds(limit, k, idx)...)
	}
	return allErrs
}

func validateLimitRangeBounds(limit *corev1.LimitRangeItem, k corev1.ResourceName, idx *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	minQ, minFound := limit.Min[k]
	maxQ, maxFound := limit.Max[k]
	defQ, defFound := limit.Default[k]
	reqQ, reqFound := limit.DefaultRequest[k]
	ratio, ratioFound := limit.MaxLimitRequestRatio[k]
	key := string(k)
	if minFound && maxFound && minQ.Cmp(maxQ) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("min").Key(key), minQ, fmt.Sprintf("min value %s is greater than max value %s", minQ.String(), maxQ.String())))
	}
	if reqFound && minFound && minQ.Cmp(reqQ) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("defaultRequest").Key(key), reqQ, fmt.Sprintf("min value %s is greater than default request value %s", minQ.String(), reqQ.String())))
	}
	if reqFound && maxFound && reqQ.Cmp(maxQ) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("defaultRequest").Key(key), reqQ, fmt.Sprintf("default request value %s is greater than max value %s", reqQ.String(), maxQ.String())))
	}
	if reqFound && defFound && reqQ.Cmp(defQ) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("defaultRequest").Key(key), reqQ, fmt.Sprintf("default request value %s is greater than default limit value %s", reqQ.String(), defQ.String())))
	}
	if defFound && minFound && minQ.Cmp(defQ) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("default").Key(key), minQ, fmt.Sprintf("min value %s is greater than default value %s", minQ.String(), defQ.String())))
	}
	if defFound && maxFound && defQ.Cmp(maxQ) > 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("default").Key(key), maxQ, fmt.Sprintf("default value %s is greater than max value %s", defQ.String(), maxQ.String())))
	}
	if ratioFound && ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("maxLimitRequestRatio").Key(key), ratio, fmt.Sprintf("ratio %s is less than 1", ratio.String())))
	}
	if ratioFound && minFound && maxFound {
		ratioValue, minValue, maxValue := float64(ratio.Value()), minQ.Value(), maxQ.Value()
		if ratio.Value() < resource.MaxMilliValue && minValue < resource.MaxMilliValue && maxValue < resource.MaxMilliValue {
			ratioValue, minValue, maxValue = float64(ratio.MilliValue())/1000, minQ.MilliValue(), maxQ.MilliValue()
		}
		ratioLimit := float64(maxValue) / float64(minValue)
		if ratioValue > ratioLimit {
			allErrs = append(allErrs, field.Invalid(idx.Child("maxLimitRequestRatio").Key(key), ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), ratioLimit)))
		}
	}
	if !isOvercommitAllowed(k) && defFound && reqFound && defQ.Cmp(reqQ) != 0 {
		allErrs = append(allErrs, field.Invalid(idx.Child("defaultRequest").Key(key), reqQ, fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", defQ.String(), reqQ.String(), key)))
	}
	return allErrs
}

// ResourceQuota.

var quotaScopes = sets.New(corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
	corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
	corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity)

// validateQuotaResourceName accepts upstream's standard quota resources,
// hugepages, and any fully qualified name (count/<resource>.<group>,
// requests.<extended>, <class>.storageclass.storage.k8s.io/requests.storage).
func validateQuotaResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	allErrs := validateQualifiedName(string(name), p)
	if len(allErrs) > 0 {
		return allErrs
	}
	s := string(name)
	if strings.Contains(s, "/") || isStandardResourceName(name) || isQuotaHugePageResourceName(name) ||
		strings.HasPrefix(s, "requests.") || strings.HasPrefix(s, "limits.") {
		return nil
	}
	return field.ErrorList{field.Invalid(p, name, "must be a standard resource for quota")}
}

func validateQuotaList(list corev1.ResourceList, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for k, q := range list {
		kp := p.Key(string(k))
		allErrs = append(allErrs, validateQuotaResourceName(k, kp)...)
		allErrs = append(allErrs, validateResourceQuantityValue(k, q, kp)...)
	}
	return allErrs
}

// ValidateResourceQuota validates a ResourceQuota on create.
func ValidateResourceQuota(q *corev1.ResourceQuota) field.ErrorList {
	allErrs := validateObjectMeta(&q.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	allErrs = append(allErrs, validateQuotaList(q.Spec.Hard, spec.Child("hard"))...)
	for i, s := range q.Spec.Scopes {
		if !quotaScopes.Has(s) {
			allErrs = append(allErrs, field.Invalid(spec.Child("scopes").Index(i), s, "unsupported scope"))
		}
	}
	if sel := q.Spec.ScopeSelector; sel != nil {
		for i, req := range sel.MatchExpressions {
			rp := spec.Child("scopeSelector", "matchExpressions").Index(i)
			if !quotaScopes.Has(req.ScopeName) {
				allErrs = append(allErrs, field.Invalid(rp.Child("scopeName"), req.ScopeName, "unsupported scope"))
			}
			switch req.Operator {
			case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
				if len(req.Values) == 0 {
					allErrs = append(allErrs, field.Required(rp.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
				}
			case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
				if len(req.Values) != 0 {
					allErrs = append(allErrs, field.Invalid(rp.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
				}
			default:
				allErrs = append(allErrs, field.Invalid(rp.Child("operator"), req.Operator, "not a valid selector operator"))
			}
		}
	}
	return allErrs
}

// ValidateResourceQuotaUpdate validates an update (main or status endpoint).
func ValidateResourceQuotaUpdate(q, old *corev1.ResourceQuota) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&q.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateResourceQuota(q)...)
	status := field.NewPath("status")
	allErrs = append(allErrs, validateQuotaList(q.Status.Hard, status.Child("hard"))...)
	allErrs = append(allErrs, validateQuotaList(q.Status.Used, status.Child("used"))...)
	if !equality.Semantic.DeepEqual(q.Spec.Scopes, old.Spec.Scopes) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "scopes"), q.Spec.Scopes, fieldImmutableErrorMsg))
	}
	return allErrs
}

// ReplicationController and PodTemplate.

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

var reclaimPolicies = sets.New(corev1.PersistentVolumeReclaimRetain, corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle)

// ValidatePersistentVolume validates a PV: capacity.storage, access modes,
// one volume source, a known reclaim policy.
func ValidatePersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	allErrs := validateObjectMeta(&pv.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	if len(pv.Spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(spec.Child("accessModes"), ""))
	}
	for _, m := range pv.Spec.AccessModes {
		if !supportedAccessModes.Has(m) {
			allErrs = append(allErrs, field.NotSupported(spec.Child("accessModes"), m, sets.List(supportedAccessModes)))
		}
	}
	if len(pv.Spec.Capacity) == 0 {
		allErrs = append(allErrs, field.Required(spec.Child("capacity"), ""))
	}
	if _, ok := pv.Spec.Capacity[corev1.ResourceStorage]; !ok || len(pv.Spec.Capacity) > 1 {
		allErrs = append(allErrs, field.NotSupported(spec.Child("capacity"), pv.Spec.Capacity, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	for k, q := range pv.Spec.Capacity {
		allErrs = append(allErrs, validateResourceQuantityValue(k, q, spec.Child("capacity").Key(string(k)))...)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != "" && !reclaimPolicies.Has(pv.Spec.PersistentVolumeReclaimPolicy) {
		allErrs = append(allErrs, field.NotSupported(spec.Child("persistentVolumeReclaimPolicy"), pv.Spec.PersistentVolumeReclaimPolicy, sets.List(reclaimPolicies)))
	}
	if pv.Spec.StorageClassName != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(pv.Spec.StorageClassName, false) {
			allErrs = append(allErrs, field.Invalid(spec.Child("storageClassName"), pv.Spec.StorageClassName, msg))
		}
	}
	if pv.Spec.VolumeMode != nil && !supportedVolumeModes.Has(*pv.Spec.VolumeMode) {
		allErrs = append(allErrs, field.NotSupported(spec.Child("volumeMode"), *pv.Spec.VolumeMode, sets.List(supportedVolumeModes)))
	}
	if pv.Spec.Local != nil && pv.Spec.NodeAffinity == nil {
		allErrs = append(allErrs, field.Required(spec.Child("nodeAffinity"), "Local volumes require node affinity"))
	}
	if na := pv.Spec.NodeAffinity; na != nil {
		if na.Required == nil {
			allErrs = append(allErrs, field.Required(spec.Child("nodeAffinity", "required"), "must specify required node constraints"))
		} else {
			allErrs = append(allErrs, validateNodeSelector(na.Required, false, spec.Child("nodeAffinity", "required"))...)
		}
	}
	return append(allErrs, validatePVSource(&pv.Spec.PersistentVolumeSource, spec)...)
}

// validatePVSource requires exactly one volume type and checks the common ones.
func validatePVSource(src *corev1.PersistentVolumeSource, spec *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	n := 0
	count := func(set bool) {
		if set {
			n++
		}
	}
	count(src.HostPath != nil)
	count(src.Local != nil)
	count(src.NFS != nil)
	count(src.CSI != nil)
	count(src.ISCSI != nil)
	count(src.FC != nil)
	count(src.RBD != nil)
	count(src.CephFS != nil)
	count(src.Glusterfs != nil)
	count(src.GCEPersistentDisk != nil)
	count(src.AWSElasticBlockStore != nil)
	count(src.AzureDisk != nil)
	count(src.AzureFile != nil)
	count(src.Cinder != nil)
	count(src.VsphereVolume != nil)
	count(src.Quobyte != nil)
	count(src.FlexVolume != nil)
	count(src.Flocker != nil)
	count(src.PhotonPersistentDisk != nil)
	count(src.PortworxVolume != nil)
	count(src.ScaleIO != nil)
	count(src.StorageOS != nil)
	switch {
	case n == 0:
		return append(allErrs, field.Required(spec, "must specify a volume type"))
	case n > 1:
		return append(allErrs, field.Forbidden(spec, "may not specify more than 1 volume type"))
	}
	switch {
	case src.HostPath != nil:
		if src.HostPath.Path == "" {
			allErrs = append(allErrs, field.Required(spec.Child("hostPath", "path"), ""))
		}
		allErrs = append(allErrs, validatePathNoBacksteps(src.HostPath.Path, spec.Child("hostPath", "path"))...)
	case src.Local != nil:
		if src.Local.Path == "" {
			allErrs = append(allErrs, field.Required(spec.Child("local", "path"), ""))
		}
		allErrs = append(allErrs, validatePathNoBacksteps(src.Local.Path, spec.Child("local", "path"))...)
	case src.NFS != nil:
		if src.NFS.Server == "" {
			allErrs = append(allErrs, field.Required(spec.Child("nfs", "server"), ""))
		}
		if src.NFS.Path == "" {
			allErrs = append(allErrs, field.Required(spec.Child("nfs", "path"), ""))
		} else if !strings.HasPrefix(src.NFS.Path, "/") {
			allErrs = append(allErrs, field.Invalid(spec.Child("nfs", "path"), src.NFS.Path, "must be an absolute path"))
		}
	case src.CSI != nil:
		if src.CSI.Driver == "" {
			allErrs = append(allErrs, field.Required(spec.Child("csi", "driver"), ""))
		}
		if src.CSI.VolumeHandle == "" {
			allErrs = append(allErrs, field.Required(spec.Child("csi", "volumeHandle"), ""))
		}
	}
	return allErrs
}

// ValidatePersistentVolumeUpdate: the volume source is immutable.
func ValidatePersistentVolumeUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&pv.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidatePersistentVolume(pv)...)
	if !equality.Semantic.DeepEqual(pv.Spec.PersistentVolumeSource, old.Spec.PersistentVolumeSource) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"), "spec.persistentvolumesource is forbidden once set"))
	}
	allErrs = append(allErrs, validateImmutableField(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil {
		allErrs = append(allErrs, validateImmutableField(pv.Spec.NodeAffinity, old.Spec.NodeAffinity, field.NewPath("nodeAffinity"))...)
	}
	return allErrs
}

// ValidatePersistentVolumeClaim validates a PVC on create.
func ValidatePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := validateObjectMeta(&pvc.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(allErrs, validatePersistentVolumeClaimSpec(&pvc.Spec, field.NewPath("spec"))...)
}

// ValidatePersistentVolumeClaimUpdate: the spec is immutable after creation
// except resources.requests (expansion of a bound claim) and
// volumeAttributesClassName.
func ValidatePersistentVolumeClaimUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&pvc.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidatePersistentVolumeClaim(pvc)...)
	newSpec := pvc.Spec.DeepCopy()
	// Binding fills in volumeName once, and storageClassName may be set once.
	if old.Spec.VolumeName == "" {
		newSpec.VolumeName = ""
	}
	if old.Spec.StorageClassName == nil {
		newSpec.StorageClassName = nil
	}
	bound := old.Status.Phase == corev1.ClaimBound
	if bound {
		newSpec.Resources = old.Spec.Resources
	}
	newSpec.VolumeAttributesClassName = old.Spec.VolumeAttributesClassName
	oldSpec := old.Spec.DeepCopy()
	if old.Spec.VolumeName == "" {
		oldSpec.VolumeName = ""
	}
	if old.Spec.StorageClassName == nil {
		oldSpec.StorageClassName = nil
	}
	if !equality.Semantic.DeepEqual(newSpec, oldSpec) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"), "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"))
	}
	// Upstream (RecoverVolumeExpansionFailure, on in v1.32): a bound
	// claim's request may shrink, but not to status.capacity or below; an
	// update that does not shrink it (a finalizer, an annotation) passes
	// even when the request is below the capacity it was bound with.
	capacity := old.Status.Capacity[corev1.ResourceStorage]
	newSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	oldSize := old.Spec.Resources.Requests[corev1.ResourceStorage]
	if bound && newSize.Cmp(oldSize) < 0 && newSize.Cmp(capacity) <= 0 {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	return allErrs
}

// ValidateLimitRangeUpdate validates an update of a LimitRange: the
// metadata rules and the LimitRange as on create.
func ValidateLimitRangeUpdate(o, p *corev1.LimitRange) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateLimitRange(o)...)
}
