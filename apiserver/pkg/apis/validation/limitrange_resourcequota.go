package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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

// ValidateLimitRangeUpdate validates an update of a LimitRange: the
// metadata rules and the LimitRange as on create.
func ValidateLimitRangeUpdate(o, p *corev1.LimitRange) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateLimitRange(o)...)
}
