// Package priorityclass holds the PriorityClass kind's strategy and defaults.
package priorityclass

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: a PriorityClass has no status.
var Strategy = rest.Whole(rest.Validation(validation.ValidatePriorityClass, validation.ValidatePriorityClassUpdate))

// Default applies upstream's v1 defaults to a PriorityClass.
var Default = rest.Defaults(defaults.DefaultPriorityClass)
