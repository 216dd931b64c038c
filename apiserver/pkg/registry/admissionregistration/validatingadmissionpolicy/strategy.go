// Package validatingadmissionpolicy holds the strategies and defaults of the
// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding kinds.
package validatingadmissionpolicy

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateValidatingAdmissionPolicy, validation.ValidateValidatingAdmissionPolicyUpdate)

// Strategy is the policy's main endpoint; StatusStrategy its status. Both
// take conditional updates only.
var (
	Strategy = rest.Main(rest.ConditionalUpdate, rest.WithGeneration,
		validated)
	StatusStrategy = rest.Status(rest.ConditionalUpdate,
		validated)
)

// Default applies upstream's v1 defaults to a ValidatingAdmissionPolicy.
var Default = rest.Defaults(defaults.DefaultValidatingAdmissionPolicy)

// BindingStrategy is the ValidatingAdmissionPolicyBinding's: no status.
var BindingStrategy = rest.Whole(rest.ConditionalUpdate, rest.WithGeneration,
	rest.Validation(validation.ValidateValidatingAdmissionPolicyBinding, validation.ValidateValidatingAdmissionPolicyBindingUpdate))

// DefaultBinding applies upstream's v1 defaults to a ValidatingAdmissionPolicyBinding.
var DefaultBinding = rest.Defaults(defaults.DefaultValidatingAdmissionPolicyBinding)
