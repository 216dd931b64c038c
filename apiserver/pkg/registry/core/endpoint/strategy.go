// Package endpoint holds the Endpoints kind's strategy and defaults.
package endpoint

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: Endpoints have no status; PUT may create them.
var Strategy = rest.Whole(rest.WithCreateOnUpdate, rest.Validation(validation.ValidateEndpoints, validation.ValidateEndpointsUpdate))

// Default applies upstream's v1 defaults to Endpoints.
var Default = rest.Defaults(defaults.DefaultEndpoints)
