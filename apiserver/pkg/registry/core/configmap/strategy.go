// Package configmap holds the ConfigMap kind's strategy and defaults.
package configmap

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: a ConfigMap has no status.
var Strategy = rest.Whole(rest.Validation(validation.ValidateConfigMap, validation.ValidateConfigMapUpdate))

// Default applies upstream's v1 defaults to a ConfigMap.
var Default = rest.Defaults(defaults.DefaultConfigMap)
