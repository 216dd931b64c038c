// Package poddisruptionbudget holds the PodDisruptionBudget kind's strategies.
package poddisruptionbudget

import (
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidatePodDisruptionBudget, validation.ValidatePodDisruptionBudgetUpdate)

// Strategy is the PodDisruptionBudget's main endpoint; StatusStrategy its
// status. Both take conditional updates only, as upstream's.
var (
	Strategy       = rest.Main(rest.ConditionalUpdate, rest.WithGeneration, validated)
	StatusStrategy = rest.Status(rest.ConditionalUpdate, validated)
)
