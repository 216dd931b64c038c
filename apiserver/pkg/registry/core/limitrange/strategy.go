// Package limitrange holds the LimitRange kind's strategy and defaults.
package limitrange

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: a LimitRange has no status.
var Strategy = rest.Whole(rest.Validation(validation.ValidateLimitRange, validation.ValidateLimitRangeUpdate))

// Default applies upstream's v1 defaults to a LimitRange.
var Default = rest.Defaults(defaults.DefaultLimitRange)
