// Package ingress holds the Ingress and IngressClass kinds' strategies.
package ingress

import (
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateIngress, validation.ValidateIngressUpdate)

// Strategy is the Ingress's main endpoint; StatusStrategy its status.
var (
	Strategy       = rest.Main(rest.WithGeneration, validated)
	StatusStrategy = rest.Status(validated)
)

// ClassStrategy is the IngressClass's: it has no status.
var ClassStrategy = rest.Whole(rest.WithGeneration, rest.Validation(validation.ValidateIngressClass, validation.ValidateIngressClassUpdate))
