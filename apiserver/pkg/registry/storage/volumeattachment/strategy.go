// Package volumeattachment holds the VolumeAttachment kind's strategies.
package volumeattachment

import (
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy is the VolumeAttachment's main endpoint; StatusStrategy its
// status. Both take conditional updates only.
var (
	Strategy       = rest.Main(rest.ConditionalUpdate, rest.Validation(validation.ValidateVolumeAttachment, validation.ValidateVolumeAttachmentUpdate))
	StatusStrategy = rest.Status(rest.ConditionalUpdate, rest.Validation(validation.ValidateVolumeAttachment, validation.ValidateVolumeAttachmentUpdate))
)
