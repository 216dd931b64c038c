// Package ingress holds the Ingress and IngressClass kinds' strategies.
package ingress

import (
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy is the Ingress's main endpoint; StatusStrategy its status.
var (
	Strategy       = rest.Main(rest.WithGeneration, rest.Validation(validation.ValidateIngress, validation.ValidateIngressUpdate))
	StatusStrategy = rest.Status(rest.Validation(validation.ValidateIngress, validation.ValidateIngressUpdate))
)

// ClassStrategy is the IngressClass's: it has no status.
var ClassStrategy = rest.Whole(rest.WithGeneration, rest.Validation(validation.ValidateIngressClass, validation.ValidateIngressClassUpdate))
