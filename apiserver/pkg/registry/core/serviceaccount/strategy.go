// Package serviceaccount holds the ServiceAccount kind's strategy and its
// token subresource (token.go). Upstream has no v1 defaults for it.
package serviceaccount

import (
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: a ServiceAccount has no status.
var Strategy = rest.Whole(rest.Validation(validation.ValidateServiceAccount, validation.ValidateServiceAccountUpdate))
