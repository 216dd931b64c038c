// Package networkpolicy holds the NetworkPolicy kind's strategy and defaults.
package networkpolicy

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: a NetworkPolicy has no status.
var Strategy = rest.Whole(rest.WithGeneration, rest.Validation(validation.ValidateNetworkPolicy, validation.ValidateNetworkPolicyUpdate))

// Default applies upstream's v1 defaults to a NetworkPolicy.
var Default = rest.Defaults(defaults.DefaultNetworkPolicy)
