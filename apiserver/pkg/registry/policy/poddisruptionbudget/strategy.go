// Package poddisruptionbudget holds the PodDisruptionBudget kind's strategies.
package poddisruptionbudget

import (
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy is the PodDisruptionBudget's main endpoint; StatusStrategy its
// status. Both take conditional updates only, as upstream's.
var (
	Strategy       = rest.Main(rest.ConditionalUpdate, rest.WithGeneration, rest.Validation(validation.ValidatePodDisruptionBudget, validation.ValidatePodDisruptionBudgetUpdate))
	StatusStrategy = rest.Status(rest.ConditionalUpdate, rest.Validation(validation.ValidatePodDisruptionBudget, validation.ValidatePodDisruptionBudgetUpdate))
)
