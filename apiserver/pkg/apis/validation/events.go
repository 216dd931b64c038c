package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/apis/convert"
)

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

// ValidateEventsV1EventUpdate validates an update of an events.k8s.io Event
// with the legacy rules every Event passes, as upstream's events strategy
// (an update need not repeat the strict create-time rules).
func ValidateEventsV1EventUpdate(e, _ *eventsv1.Event) field.ErrorList {
	return ValidateEvent(convert.EventToCore(e))
}

// ValidateEventUpdate validates an update of a core Event as a new one.
func ValidateEventUpdate(e, _ *corev1.Event) field.ErrorList { return ValidateEvent(e) }
