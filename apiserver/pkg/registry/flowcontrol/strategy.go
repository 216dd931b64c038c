// Package flowcontrol holds the strategies and defaults of the API priority
// and fairness kinds: FlowSchema and PriorityLevelConfiguration.
package flowcontrol

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validatedPriorityLevelConfiguration is the kind's validation on create and update.
var validatedPriorityLevelConfiguration = rest.Validation(validation.ValidatePriorityLevelConfiguration, validation.ValidatePriorityLevelConfigurationUpdate)

// validatedFlowSchema is the kind's validation on create and update.
var validatedFlowSchema = rest.Validation(validation.ValidateFlowSchema, validation.ValidateFlowSchemaUpdate)

// FlowSchemaStrategy is the FlowSchema's main endpoint; FlowSchemaStatusStrategy its status.
var (
	FlowSchemaStrategy       = rest.Main(rest.WithGeneration, validatedFlowSchema)
	FlowSchemaStatusStrategy = rest.Status(validatedFlowSchema)
)

// DefaultFlowSchema applies upstream's v1 defaults to a FlowSchema.
var DefaultFlowSchema = rest.Defaults(defaults.DefaultFlowSchema)

// PriorityLevelStrategy is the PriorityLevelConfiguration's main endpoint;
// PriorityLevelStatusStrategy its status.
var (
	PriorityLevelStrategy = rest.Main(rest.WithGeneration,
		validatedPriorityLevelConfiguration)
	PriorityLevelStatusStrategy = rest.Status(
		validatedPriorityLevelConfiguration)
)

// DefaultPriorityLevel applies upstream's v1 defaults to a PriorityLevelConfiguration.
var DefaultPriorityLevel = rest.Defaults(defaults.DefaultPriorityLevelConfiguration)
