// Package lease holds the Lease kind's strategy.
package lease

import (
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: a Lease has no status; PUT may create it, and updates are
// conditional.
var Strategy = rest.Whole(rest.ConditionalUpdate, rest.WithCreateOnUpdate, rest.Validation(validation.ValidateLease, validation.ValidateLeaseUpdate))
