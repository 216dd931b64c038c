// Package volumeattachment holds the VolumeAttachment kind's strategies.
package volumeattachment

import (
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateVolumeAttachment, validation.ValidateVolumeAttachmentUpdate)

// Strategy is the VolumeAttachment's main endpoint; StatusStrategy its
// status. Both take conditional updates only.
var (
	Strategy       = rest.Main(rest.ConditionalUpdate, validated)
	StatusStrategy = rest.Status(rest.ConditionalUpdate, validated)
)
