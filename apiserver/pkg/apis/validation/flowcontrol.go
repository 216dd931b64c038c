package validation

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateFlowSchema checks the reference and the precedence range.
func ValidateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	allErrs := validateObjectMeta(&fs.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	if fs.Spec.PriorityLevelConfiguration.Name == "" {
		allErrs = append(allErrs, field.Required(spec.Child("priorityLevelConfiguration", "name"), "must reference a priority level"))
	}
	if fs.Spec.MatchingPrecedence <= 0 || fs.Spec.MatchingPrecedence > 10000 {
		allErrs = append(allErrs, field.Invalid(spec.Child("matchingPrecedence"), fs.Spec.MatchingPrecedence, "must be between 1 and 10000"))
	}
	if d := fs.Spec.DistinguisherMethod; d != nil && d.Type != flowcontrolv1.FlowDistinguisherMethodByUserType && d.Type != flowcontrolv1.FlowDistinguisherMethodByNamespaceType {
		allErrs = append(allErrs, field.NotSupported(spec.Child("distinguisherMethod", "type"), d.Type,
			[]string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}))
	}
	return allErrs
}

// ValidatePriorityLevelConfiguration checks that the type matches the
// configuration given.
func ValidatePriorityLevelConfiguration(p *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	allErrs := validateObjectMeta(&p.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	switch p.Spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if p.Spec.Limited != nil {
			allErrs = append(allErrs, field.Forbidden(spec.Child("limited"), "must be nil if the type is not Limited"))
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if p.Spec.Limited == nil {
			allErrs = append(allErrs, field.Required(spec.Child("limited"), "must not be empty when type is Limited"))
		} else {
			l := p.Spec.Limited
			if l.NominalConcurrencyShares != nil && *l.NominalConcurrencyShares < 0 {
				allErrs = append(allErrs, field.Invalid(spec.Child("limited", "nominalConcurrencyShares"), *l.NominalConcurrencyShares, "must be a non-negative integer"))
			}
			rp := spec.Child("limited", "limitResponse")
			switch l.LimitResponse.Type {
			case flowcontrolv1.LimitResponseTypeQueue:
				if l.LimitResponse.Queuing == nil {
					allErrs = append(allErrs, field.Required(rp.Child("queuing"), "must not be empty if limited.limitResponse.type is Queue"))
				}
			case flowcontrolv1.LimitResponseTypeReject:
				if l.LimitResponse.Queuing != nil {
					allErrs = append(allErrs, field.Forbidden(rp.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited"))
				}
			default:
				allErrs = append(allErrs, field.NotSupported(rp.Child("type"), l.LimitResponse.Type,
					[]string{string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject)}))
			}
		}
		if p.Spec.Exempt != nil {
			allErrs = append(allErrs, field.Forbidden(spec.Child("exempt"), "must be nil if the type is Limited"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(spec.Child("type"), p.Spec.Type,
			[]string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}))
	}
	return allErrs
}

// ValidateFlowSchemaUpdate validates an update of a FlowSchema: the
// metadata rules and the FlowSchema as on create.
func ValidateFlowSchemaUpdate(o, p *flowcontrolv1.FlowSchema) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateFlowSchema(o)...)
}

// ValidatePriorityLevelConfigurationUpdate validates an update of a
// PriorityLevelConfiguration: the metadata rules and the object as on create.
func ValidatePriorityLevelConfigurationUpdate(o, p *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidatePriorityLevelConfiguration(o)...)
}
