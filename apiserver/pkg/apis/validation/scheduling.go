package validation

import (
	"fmt"
	"strings"

	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	// HighestUserDefinablePriority is the highest value a user may give.
	HighestUserDefinablePriority = int32(1000000000)
	// SystemCriticalPriority is the base of the built-in classes.
	SystemCriticalPriority = 2 * HighestUserDefinablePriority
	// SystemPriorityClassPrefix is reserved for the built-in classes.
	SystemPriorityClassPrefix = "system-"
	// SystemClusterCritical and SystemNodeCritical are the built-in classes.
	SystemClusterCritical = SystemPriorityClassPrefix + "cluster-critical"
	SystemNodeCritical    = SystemPriorityClassPrefix + "node-critical"
)

// SystemPriorityClasses are the classes the API server creates at start-up.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		systemClass(SystemNodeCritical, SystemCriticalPriority+1000, "Used for system critical pods that must not be moved from their current node."),
		systemClass(SystemClusterCritical, SystemCriticalPriority, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
	}
}

func systemClass(name string, value int32, description string) *schedulingv1.PriorityClass {
	pc := &schedulingv1.PriorityClass{Value: value, Description: description}
	pc.Name = name
	return pc
}

// isKnownSystemPriorityClass reports whether name, value and globalDefault
// are exactly those of a built-in class.
func isKnownSystemPriorityClass(name string, value int32, globalDefault bool) error {
	for _, pc := range SystemPriorityClasses() {
		if pc.Name == name {
			if pc.Value != value {
				return fmt.Errorf("value of %v PriorityClass must be %v", pc.Name, pc.Value)
			}
			if pc.GlobalDefault != globalDefault {
				return fmt.Errorf("globalDefault of %v PriorityClass must be %v", pc.Name, pc.GlobalDefault)
			}
			return nil
		}
	}
	return fmt.Errorf("%v is not a known system priority class", name)
}

// ValidatePriorityClass validates a PriorityClass as upstream does.
func ValidatePriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	allErrs := validateObjectMeta(&pc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if err := isKnownSystemPriorityClass(pc.Name, pc.Value, pc.GlobalDefault); err != nil {
		if strings.HasPrefix(pc.Name, SystemPriorityClassPrefix) {
			allErrs = append(allErrs, field.Forbidden(metadataPath.Child("name"), "priority class names with '"+SystemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		} else if pc.Value > HighestUserDefinablePriority {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
		}
	}
	if pc.PreemptionPolicy != nil {
		allErrs = append(allErrs, validatePreemptionPolicy(pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	}
	return allErrs
}

// ValidatePriorityClassUpdate: value and preemptionPolicy are immutable.
func ValidatePriorityClassUpdate(pc, old *schedulingv1.PriorityClass) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&pc.ObjectMeta, &old.ObjectMeta, metadataPath)
	if pc.Value != old.Value {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	allErrs = append(allErrs, validateImmutableField(pc.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	return allErrs
}

// Node: RuntimeClass.

// ValidateRuntimeClass: a DNS-label handler, valid overhead and scheduling.
func ValidateRuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	allErrs := validateObjectMeta(&rc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if rc.Handler == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("handler"), ""))
	}
	for _, msg := range validation.IsDNS1123Label(rc.Handler) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("handler"), rc.Handler, msg))
	}
	if rc.Overhead != nil {
		p := field.NewPath("overhead", "podFixed")
		for k, q := range rc.Overhead.PodFixed {
			allErrs = append(allErrs, validateContainerResourceName(k, p.Key(string(k)))...)
			allErrs = append(allErrs, validateResourceQuantityValue(k, q, p.Key(string(k)))...)
		}
	}
	if s := rc.Scheduling; s != nil {
		p := field.NewPath("scheduling")
		allErrs = append(allErrs, metav1validation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
		allErrs = append(allErrs, validateTolerations(s.Tolerations, p.Child("tolerations"))...)
		seen := map[string]bool{}
		for i, t := range s.Tolerations {
			key := fmt.Sprintf("%s/%s/%s", t.Key, t.Operator, t.Effect)
			if seen[key] {
				allErrs = append(allErrs, field.Duplicate(p.Child("tolerations").Index(i), t))
			}
			seen[key] = true
		}
	}
	return allErrs
}

// ValidateRuntimeClassUpdate: the handler is immutable.
func ValidateRuntimeClassUpdate(rc, old *nodev1.RuntimeClass) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateRuntimeClass(rc)...)
	return append(allErrs, validateImmutableField(rc.Handler, old.Handler, field.NewPath("handler"))...)
}
