// Package runtimeclass holds the RuntimeClass kind's strategy.
package runtimeclass

import (
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: a RuntimeClass has no status; updates are conditional.
var Strategy = rest.Whole(rest.ConditionalUpdate, rest.Validation(validation.ValidateRuntimeClass, validation.ValidateRuntimeClassUpdate))
