// Package storageclass holds the StorageClass kind's strategy and defaults.
package storageclass

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: a StorageClass has no status.
var Strategy = rest.Whole(rest.Validation(validation.ValidateStorageClass, validation.ValidateStorageClassUpdate))

// Default applies upstream's v1 defaults to a StorageClass.
var Default = rest.Defaults(defaults.DefaultStorageClass)
