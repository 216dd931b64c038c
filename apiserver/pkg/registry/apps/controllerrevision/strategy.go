// Package controllerrevision holds the ControllerRevision kind's strategy.
package controllerrevision

import (
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: a ControllerRevision has no status.
var Strategy = rest.Whole(rest.Validation(validation.ValidateControllerRevision, validation.ValidateControllerRevisionUpdate))
