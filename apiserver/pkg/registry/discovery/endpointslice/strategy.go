// Package endpointslice holds the EndpointSlice kind's strategy and defaults.
package endpointslice

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: an EndpointSlice has no status; a change of its labels bumps
// its generation too, as upstream's.
var Strategy = rest.Whole(rest.WithLabelsInGeneration, rest.Validation(validation.ValidateEndpointSlice, validation.ValidateEndpointSliceUpdate))

// Default applies upstream's v1 defaults to an EndpointSlice.
var Default = rest.Defaults(defaults.DefaultEndpointSlice)
