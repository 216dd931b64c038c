// Package podtemplate holds the PodTemplate kind's strategy and defaults.
package podtemplate

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: a PodTemplate has no status.
var Strategy = rest.Whole(rest.Validation(validation.ValidatePodTemplate, validation.ValidatePodTemplateUpdate))

// Default applies upstream's v1 defaults to a PodTemplate.
var Default = rest.Defaults(defaults.DefaultPodTemplate)
