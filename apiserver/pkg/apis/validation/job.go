package validation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Job: the rules of upstream's pkg/apis/batch/validation for the spec (the
// Indexed completion mode, backoffLimitPerIndex and maxFailedIndexes,
// podFailurePolicy, successPolicy, podReplacementPolicy, managedBy) and for
// its updates (which fields are immutable, when the template may change).

// Upstream's limits.
const (
	// An Indexed Job's parallelism and failed indexes are capped so that
	// status.completedIndexes and status.failedIndexes stay bounded.
	maxParallelismForIndexedJob   = 100_000
	maxFailedIndexesForIndexedJob = 100_000
	// Above completionsSoftLimit completions, a Job with a backoff limit per
	// index needs maxFailedIndexes, and both it and parallelism are capped.
	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000

	maxPodFailurePolicyRules                   = 20
	maxPodFailurePolicyOnExitCodesValues       = 255
	maxPodFailurePolicyOnPodConditionsPatterns = 20
	maxManagedByLength                         = 63
	maxSuccessPolicySucceededIndexesLength     = 64 * 1024
	maxSuccessPolicyRules                      = 20
)

var (
	podFailurePolicyActions = []batchv1.PodFailurePolicyAction{
		batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyActionFailIndex,
		batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore,
	}
	podFailurePolicyOnExitCodesOperators = []batchv1.PodFailurePolicyOnExitCodesOperator{
		batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn,
	}
	podFailurePolicyConditionStatuses = []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionUnknown}
	podReplacementPolicies            = []batchv1.PodReplacementPolicy{batchv1.Failed, batchv1.TerminatingOrFailed}
)

// ValidateJob validates a Job on create.
func ValidateJob(j *batchv1.Job) field.ErrorList {
	allErrs := validateObjectMeta(&j.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	allErrs = append(allErrs, validateJobSelector(&j.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateJobSpec(&j.Spec, nil, field.NewPath("spec"))...)
	if isIndexedJob(&j.Spec) && j.Spec.Completions != nil && *j.Spec.Completions > 0 {
		// The controller names an Indexed Job's pods' hostnames
		// <job>-<index>; the largest must be a DNS label.
		hostname := fmt.Sprintf("%s-%d", j.Name, *j.Spec.Completions-1)
		if errs := apimachineryvalidation.NameIsDNSLabel(hostname, false); len(errs) > 0 {
			allErrs = append(allErrs, field.Invalid(metadataPath.Child("name"), j.Name,
				fmt.Sprintf("will not able to create pod with invalid DNS label: %s", hostname)))
		}
	}
	return allErrs
}

func isIndexedJob(spec *batchv1.JobSpec) bool {
	return ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
}

// validateJobSelector: a Job needs a valid selector that matches its
// template's labels.
func validateJobSelector(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	if spec.Selector == nil {
		return field.ErrorList{field.Required(p.Child("selector"), "")}
	}
	allErrs := metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))
	if sel, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !sel.Matches(labels.Set(spec.Template.Labels)) {
		allErrs = append(allErrs, field.Invalid(p.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	return allErrs
}

// validateJobSpec validates what a Job and a CronJob's job template share
// (everything but the selector); old is the spec before an update.
func validateJobSpec(spec, old *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, f := range []struct {
		name string
		v    *int32
	}{
		{"parallelism", spec.Parallelism}, {"completions", spec.Completions}, {"backoffLimit", spec.BackoffLimit},
		{"ttlSecondsAfterFinished", spec.TTLSecondsAfterFinished}, {"backoffLimitPerIndex", spec.BackoffLimitPerIndex},
		{"maxFailedIndexes", spec.MaxFailedIndexes},
	} {
		if f.v != nil {
			allErrs = append(allErrs, validateNonnegativeField(int64(*f.v), p.Child(f.name))...)
		}
	}
	if spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, validateNonnegativeField(*spec.ActiveDeadlineSeconds, p.Child("activeDeadlineSeconds"))...)
	}
	if spec.MaxFailedIndexes != nil && spec.BackoffLimitPerIndex == nil {
		allErrs = append(allErrs, field.Required(p.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
	}
	if spec.ManagedBy != nil {
		allErrs = append(allErrs, utilvalidation.IsDomainPrefixedPath(p.Child("managedBy"), *spec.ManagedBy)...)
		if len(*spec.ManagedBy) > maxManagedByLength {
			allErrs = append(allErrs, field.TooLong(p.Child("managedBy"), "", maxManagedByLength))
		}
	}
	allErrs = append(allErrs, validateJobCompletionMode(spec, p)...)
	if spec.PodFailurePolicy != nil {
		allErrs = append(allErrs, validatePodFailurePolicy(spec, p.Child("podFailurePolicy"))...)
	}
	if spec.SuccessPolicy != nil {
		if !isIndexedJob(spec) {
			allErrs = append(allErrs, field.Invalid(p.Child("successPolicy"), *spec.SuccessPolicy, "requires indexed completion mode"))
		} else {
			allErrs = append(allErrs, validateSuccessPolicy(spec, p.Child("successPolicy"))...)
		}
	}
	if r := spec.PodReplacementPolicy; r != nil {
		switch {
		case spec.PodFailurePolicy != nil && *r != batchv1.Failed:
			allErrs = append(allErrs, field.NotSupported(p.Child("podReplacementPolicy"), *r, []batchv1.PodReplacementPolicy{batchv1.Failed}))
		case spec.PodFailurePolicy == nil && !slices.Contains(podReplacementPolicies, *r):
			allErrs = append(allErrs, field.NotSupported(p.Child("podReplacementPolicy"), *r, podReplacementPolicies))
		}
	}
	allErrs = append(allErrs, validateJobTemplate(&spec.Template, old, p.Child("template"))...)
	restart := p.Child("template", "spec", "restartPolicy")
	switch rp := spec.Template.Spec.RestartPolicy; {
	case rp == corev1.RestartPolicyAlways || rp == "":
		allErrs = append(allErrs, field.Required(restart, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)))
	case rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever:
		allErrs = append(allErrs, field.NotSupported(restart, rp, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	case spec.PodFailurePolicy != nil && rp != corev1.RestartPolicyNever:
		allErrs = append(allErrs, field.Invalid(restart, rp, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever)))
	}
	return allErrs
}

// validateJobCompletionMode: the mode is NonIndexed or Indexed; an Indexed
// Job needs completions and keeps within the limits on parallelism and
// failed indexes; the per-index backoff needs the Indexed mode.
func validateJobCompletionMode(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if m := spec.CompletionMode; m != nil && *m != batchv1.NonIndexedCompletion && *m != batchv1.IndexedCompletion {
		allErrs = append(allErrs, field.NotSupported(p.Child("completionMode"), *m, []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
	}
	if !isIndexedJob(spec) {
		if spec.CompletionMode == nil || *spec.CompletionMode == batchv1.NonIndexedCompletion {
			if spec.BackoffLimitPerIndex != nil {
				allErrs = append(allErrs, field.Invalid(p.Child("backoffLimitPerIndex"), *spec.BackoffLimitPerIndex, "requires indexed completion mode"))
			}
			if spec.MaxFailedIndexes != nil {
				allErrs = append(allErrs, field.Invalid(p.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "requires indexed completion mode"))
			}
		}
		return allErrs
	}
	if spec.Completions == nil {
		allErrs = append(allErrs, field.Required(p.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
	}
	if spec.Parallelism != nil && *spec.Parallelism > maxParallelismForIndexedJob {
		allErrs = append(allErrs, field.Invalid(p.Child("parallelism"), *spec.Parallelism,
			fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, batchv1.IndexedCompletion)))
	}
	if mfi := spec.MaxFailedIndexes; mfi != nil {
		if spec.Completions != nil && *mfi > *spec.Completions {
			allErrs = append(allErrs, field.Invalid(p.Child("maxFailedIndexes"), *mfi, "must be less than or equal to completions"))
		}
		if *mfi > maxFailedIndexesForIndexedJob {
			allErrs = append(allErrs, field.Invalid(p.Child("maxFailedIndexes"), *mfi, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
		}
	}
	if spec.Completions != nil && *spec.Completions > completionsSoftLimit && spec.BackoffLimitPerIndex != nil {
		high := fmt.Sprintf("when completions are above %d and used with backoff limit per index", completionsSoftLimit)
		if spec.MaxFailedIndexes == nil {
			allErrs = append(allErrs, field.Required(p.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
		} else if *spec.MaxFailedIndexes > maxFailedIndexesLimitForHighCompletions {
			allErrs = append(allErrs, field.Invalid(p.Child("maxFailedIndexes"), *spec.MaxFailedIndexes,
				fmt.Sprintf("must be less than or equal to %d %s", maxFailedIndexesLimitForHighCompletions, high)))
		}
		if spec.Parallelism != nil && *spec.Parallelism > parallelismLimitForHighCompletions {
			allErrs = append(allErrs, field.Invalid(p.Child("parallelism"), *spec.Parallelism,
				fmt.Sprintf("must be less than or equal to %d %s", parallelismLimitForHighCompletions, high)))
		}
	}
	return allErrs
}

func validatePodFailurePolicy(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rules := p.Child("rules")
	if len(spec.PodFailurePolicy.Rules) > maxPodFailurePolicyRules {
		allErrs = append(allErrs, field.TooMany(rules, len(spec.PodFailurePolicy.Rules), maxPodFailurePolicyRules))
	}
	containers := map[string]bool{}
	for _, c := range spec.Template.Spec.Containers {
		containers[c.Name] = true
	}
	for _, c := range spec.Template.Spec.InitContainers {
		containers[c.Name] = true
	}
	for i := range spec.PodFailurePolicy.Rules {
		allErrs = append(allErrs, validatePodFailurePolicyRule(spec, &spec.PodFailurePolicy.Rules[i], rules.Index(i), containers)...)
	}
	return allErrs
}

func validatePodFailurePolicyRule(spec *batchv1.JobSpec, rule *batchv1.PodFailurePolicyRule, p *field.Path, containers map[string]bool) field.ErrorList {
	var allErrs field.ErrorList
	action := p.Child("action")
	switch {
	case rule.Action == "":
		allErrs = append(allErrs, field.Required(action, fmt.Sprintf("valid values: %q", sortedStrings(podFailurePolicyActions))))
	case rule.Action == batchv1.PodFailurePolicyActionFailIndex:
		if spec.BackoffLimitPerIndex == nil {
			allErrs = append(allErrs, field.Invalid(action, rule.Action, "requires the backoffLimitPerIndex to be set"))
		}
	case !slices.Contains(podFailurePolicyActions, rule.Action):
		allErrs = append(allErrs, field.NotSupported(action, rule.Action, sortedStrings(podFailurePolicyActions)))
	}
	if rule.OnExitCodes != nil {
		allErrs = append(allErrs, validateOnExitCodes(rule.OnExitCodes, p.Child("onExitCodes"), containers)...)
	}
	if len(rule.OnPodConditions) > 0 {
		allErrs = append(allErrs, validateOnPodConditions(rule.OnPodConditions, p.Child("onPodConditions"))...)
	}
	switch {
	case rule.OnExitCodes != nil && len(rule.OnPodConditions) > 0:
		allErrs = append(allErrs, field.Invalid(p, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	case rule.OnExitCodes == nil && len(rule.OnPodConditions) == 0:
		allErrs = append(allErrs, field.Invalid(p, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return allErrs
}

func validateOnPodConditions(patterns []batchv1.PodFailurePolicyOnPodConditionsPattern, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(patterns) > maxPodFailurePolicyOnPodConditionsPatterns {
		allErrs = append(allErrs, field.TooMany(p, len(patterns), maxPodFailurePolicyOnPodConditionsPatterns))
	}
	for i, pattern := range patterns {
		pp := p.Index(i)
		allErrs = append(allErrs, validateQualifiedName(string(pattern.Type), pp.Child("type"))...)
		switch {
		case pattern.Status == "":
			allErrs = append(allErrs, field.Required(pp.Child("status"), fmt.Sprintf("valid values: %q", sortedStrings(podFailurePolicyConditionStatuses))))
		case !slices.Contains(podFailurePolicyConditionStatuses, pattern.Status):
			allErrs = append(allErrs, field.NotSupported(pp.Child("status"), pattern.Status, sortedStrings(podFailurePolicyConditionStatuses)))
		}
	}
	return allErrs
}

func validateOnExitCodes(req *batchv1.PodFailurePolicyOnExitCodesRequirement, p *field.Path, containers map[string]bool) field.ErrorList {
	var allErrs field.ErrorList
	op := p.Child("operator")
	switch {
	case req.Operator == "":
		allErrs = append(allErrs, field.Required(op, fmt.Sprintf("valid values: %q", sortedStrings(podFailurePolicyOnExitCodesOperators))))
	case !slices.Contains(podFailurePolicyOnExitCodesOperators, req.Operator):
		allErrs = append(allErrs, field.NotSupported(op, req.Operator, sortedStrings(podFailurePolicyOnExitCodesOperators)))
	}
	if req.ContainerName != nil && !containers[*req.ContainerName] {
		allErrs = append(allErrs, field.Invalid(p.Child("containerName"), *req.ContainerName, "must be one of the container or initContainer names in the pod template"))
	}
	values := p.Child("values")
	switch {
	case len(req.Values) == 0:
		allErrs = append(allErrs, field.Invalid(values, req.Values, "at least one value is required"))
	case len(req.Values) > maxPodFailurePolicyOnExitCodesValues:
		allErrs = append(allErrs, field.TooMany(values, len(req.Values), maxPodFailurePolicyOnExitCodesValues))
	}
	seen := map[int32]bool{}
	ordered := true
	for i, v := range req.Values {
		if req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			allErrs = append(allErrs, field.Invalid(values.Index(i), v, "must not be 0 for the In operator"))
		}
		if seen[v] {
			allErrs = append(allErrs, field.Duplicate(values.Index(i), v))
		}
		seen[v] = true
		if i > 0 && req.Values[i-1] > v {
			ordered = false
		}
	}
	if !ordered {
		allErrs = append(allErrs, field.Invalid(values, req.Values, "must be ordered"))
	}
	return allErrs
}

func validateSuccessPolicy(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rules := p.Child("rules")
	if len(spec.SuccessPolicy.Rules) == 0 {
		allErrs = append(allErrs, field.Required(rules, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(spec.SuccessPolicy.Rules) > maxSuccessPolicyRules {
		allErrs = append(allErrs, field.TooMany(rules, len(spec.SuccessPolicy.Rules), maxSuccessPolicyRules))
	}
	if spec.Completions == nil {
		return allErrs // Required above, with the Indexed mode.
	}
	completions := *spec.Completions
	for i, rule := range spec.SuccessPolicy.Rules {
		rp := rules.Index(i)
		if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
			allErrs = append(allErrs, field.Required(rp, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		var total int32
		if rule.SucceededIndexes != nil {
			si := rp.Child("succeededIndexes")
			if len(*rule.SucceededIndexes) > maxSuccessPolicySucceededIndexesLength {
				allErrs = append(allErrs, field.TooLong(si, "", maxSuccessPolicySucceededIndexesLength))
			}
			var err error
			if total, err = countIndexes(*rule.SucceededIndexes, completions); err != nil {
				allErrs = append(allErrs, field.Invalid(si, *rule.SucceededIndexes, fmt.Sprintf("error parsing succeededIndexes: %s", err)))
			}
		}
		if c := rule.SucceededCount; c != nil {
			sc := rp.Child("succeededCount")
			allErrs = append(allErrs, validateNonnegativeField(int64(*c), sc)...)
			if *c > completions {
				allErrs = append(allErrs, field.Invalid(sc, *c, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
			}
			if rule.SucceededIndexes != nil && *c > total {
				allErrs = append(allErrs, field.Invalid(sc, *c, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return allErrs
}

// countIndexes parses an index list such as "1,3-5,7" (intervals in rising
// order, every index below completions) and counts its indexes.
func countIndexes(s string, completions int32) (int32, error) {
	if s == "" {
		return 0, nil
	}
	var total int32
	last := int32(-1)
	for _, interval := range strings.Split(s, ",") {
		x, y, err := parseIndexInterval(interval, completions)
		if err != nil {
			return 0, err
		}
		if last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", last, x)
		}
		total += y - x + 1
		last = y
	}
	return total, nil
}

func parseIndexInterval(s string, completions int32) (int32, int32, error) {
	parts := strings.Split(s, "-")
	if len(parts) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	var bounds [2]int32
	for i, part := range parts {
		n, err := strconv.Atoi(part)
		if err != nil {
			return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", part)
		}
		if n >= int(completions) {
			return 0, 0, fmt.Errorf("too large index: %q", part)
		}
		bounds[i] = int32(n)
	}
	if len(parts) == 1 {
		return bounds[0], bounds[0], nil
	}
	if bounds[0] >= bounds[1] {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", bounds[0], bounds[1])
	}
	return bounds[0], bounds[1], nil
}

// validateJobTemplate validates the pod template of a Job (with old, the
// spec before an update, for the options that keep stored fields valid).
func validateJobTemplate(tmpl *corev1.PodTemplateSpec, old *batchv1.JobSpec, p *field.Path) field.ErrorList {
	opts := podValidationOptionsFor(nil, &tmpl.Spec, nil, nil)
	if old != nil {
		opts = podValidationOptionsFor(nil, &tmpl.Spec, &old.Template.Spec, &old.Template.ObjectMeta)
	}
	return validatePodTemplateSpec(tmpl, p, opts)
}

// validateJobTemplateSpec validates a CronJob's job template: a Job spec
// whose selector the Job's creation generates.
func validateJobTemplateSpec(spec, old *batchv1.JobSpec, p *field.Path) field.ErrorList {
	allErrs := validateJobSpec(spec, old, p)
	if spec.Selector != nil {
		allErrs = append(allErrs, field.Invalid(p.Child("selector"), spec.Selector, "`selector` will be auto-generated"))
	}
	if ptr.Deref(spec.ManualSelector, false) {
		allErrs = append(allErrs, field.NotSupported(p.Child("manualSelector"), spec.ManualSelector, []string{"nil", "false"}))
	}
	return allErrs
}

// ValidateJobUpdate: besides the spec's own rules, the selector, completion
// mode, podFailurePolicy, backoffLimitPerIndex, managedBy and successPolicy
// are immutable; completions too, except for an Indexed Job, whose
// completions may change together with parallelism (equal to it); the pod
// template is immutable, except that a Job suspended before it ever started
// may change its scheduling directives (node affinity, node selector,
// tolerations, scheduling gates) and the template's labels and annotations.
func ValidateJobUpdate(j, old *batchv1.Job) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta, metadataPath)
	spec := field.NewPath("spec")
	allErrs = append(allErrs, validateJobSelector(&j.Spec, spec)...)
	allErrs = append(allErrs, validateJobSpec(&j.Spec, &old.Spec, spec)...)
	allErrs = append(allErrs, validateJobCompletionsUpdate(&j.Spec, &old.Spec, spec.Child("completions"))...)
	allErrs = append(allErrs, validateImmutableField(j.Spec.Selector, old.Spec.Selector, spec.Child("selector"))...)
	allErrs = append(allErrs, validateJobTemplateUpdate(j, old, spec.Child("template"))...)
	for _, f := range []struct {
		name     string
		new, old any
	}{
		{"completionMode", j.Spec.CompletionMode, old.Spec.CompletionMode},
		{"podFailurePolicy", j.Spec.PodFailurePolicy, old.Spec.PodFailurePolicy},
		{"backoffLimitPerIndex", j.Spec.BackoffLimitPerIndex, old.Spec.BackoffLimitPerIndex},
		{"managedBy", j.Spec.ManagedBy, old.Spec.ManagedBy},
		{"successPolicy", j.Spec.SuccessPolicy, old.Spec.SuccessPolicy},
	} {
		allErrs = append(allErrs, validateImmutableField(f.new, f.old, spec.Child(f.name))...)
	}
	return allErrs
}

func validateJobCompletionsUpdate(spec, old *batchv1.JobSpec, p *field.Path) field.ErrorList {
	if !isIndexedJob(spec) {
		return validateImmutableField(spec.Completions, old.Completions, p)
	}
	// An Indexed Job's completions are Required by the spec's rules.
	if equality.Semantic.DeepEqual(spec.Completions, old.Completions) || spec.Completions == nil {
		return nil
	}
	if spec.Parallelism == nil || *spec.Completions != *spec.Parallelism {
		return field.ErrorList{field.Invalid(p, spec.Completions, fmt.Sprintf("can only be modified in tandem with %s", p.Root().Child("parallelism")))}
	}
	return nil
}

func validateJobTemplateUpdate(j, old *batchv1.Job, p *field.Path) field.ErrorList {
	tmpl, oldTmpl := &j.Spec.Template, &old.Spec.Template
	suspended := ptr.Deref(old.Spec.Suspend, false)
	if suspended && old.Status.StartTime == nil {
		// The scheduling directives may change: compare the rest only.
		o := oldTmpl.DeepCopy()
		switch {
		case tmpl.Spec.Affinity == nil && o.Spec.Affinity != nil:
			// The affinity may go if it held only node affinity.
			o.Spec.Affinity.NodeAffinity = nil
			if *o.Spec.Affinity == (corev1.Affinity{}) {
				o.Spec.Affinity = nil
			}
		case tmpl.Spec.Affinity != nil && o.Spec.Affinity == nil:
			o.Spec.Affinity = &corev1.Affinity{NodeAffinity: tmpl.Spec.Affinity.NodeAffinity}
		case tmpl.Spec.Affinity != nil && o.Spec.Affinity != nil:
			o.Spec.Affinity.NodeAffinity = tmpl.Spec.Affinity.NodeAffinity
		}
		o.Spec.NodeSelector = tmpl.Spec.NodeSelector
		o.Spec.Tolerations = tmpl.Spec.Tolerations
		o.Spec.SchedulingGates = tmpl.Spec.SchedulingGates
		o.Annotations = tmpl.Annotations
		o.Labels = tmpl.Labels
		oldTmpl = o
	}
	return validateImmutableField(*tmpl, *oldTmpl, p)
}

// sortedStrings: the values as sorted strings, as upstream's sets.List
// lists them in its messages.
func sortedStrings[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	slices.Sort(out)
	return out
}
