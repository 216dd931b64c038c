// Package csi holds the strategies of the CSI kinds: CSIDriver, CSINode and
// CSIStorageCapacity. Their updates are conditional, as upstream's.
package csi

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// DriverStrategy is the CSIDriver's.
var DriverStrategy = rest.Whole(rest.ConditionalUpdate, rest.Validation(validation.ValidateCSIDriver, validation.ValidateCSIDriverUpdate))

// DefaultDriver applies upstream's v1 defaults to a CSIDriver.
var DefaultDriver = rest.Defaults(defaults.DefaultCSIDriver)

// NodeStrategy is the CSINode's.
var NodeStrategy = rest.Whole(rest.ConditionalUpdate, rest.Validation(validation.ValidateCSINode, validation.ValidateCSINodeUpdate))

// StorageCapacityStrategy is the CSIStorageCapacity's.
var StorageCapacityStrategy = rest.Whole(rest.ConditionalUpdate, rest.Validation(validation.ValidateCSIStorageCapacity, validation.ValidateCSIStorageCapacityUpdate))
