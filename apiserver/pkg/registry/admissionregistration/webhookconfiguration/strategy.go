// Package webhookconfiguration holds the strategies and defaults of the
// MutatingWebhookConfiguration and ValidatingWebhookConfiguration kinds.
package webhookconfiguration

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// MutatingStrategy is the MutatingWebhookConfiguration's: no status,
// conditional updates, a generation.
var MutatingStrategy = rest.Whole(rest.ConditionalUpdate, rest.WithGeneration,
	rest.Validation(validation.ValidateMutatingWebhookConfiguration, validation.ValidateMutatingWebhookConfigurationUpdate))

// DefaultMutating applies upstream's v1 defaults to a MutatingWebhookConfiguration.
var DefaultMutating = rest.Defaults(defaults.DefaultMutatingWebhookConfiguration)

// ValidatingStrategy is the ValidatingWebhookConfiguration's.
var ValidatingStrategy = rest.Whole(rest.ConditionalUpdate, rest.WithGeneration,
	rest.Validation(validation.ValidateValidatingWebhookConfiguration, validation.ValidateValidatingWebhookConfigurationUpdate))

// DefaultValidating applies upstream's v1 defaults to a ValidatingWebhookConfiguration.
var DefaultValidating = rest.Defaults(defaults.DefaultValidatingWebhookConfiguration)
