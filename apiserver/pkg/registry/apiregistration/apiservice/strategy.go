// Package apiservice holds the APIService kind's strategies and defaults.
package apiservice

import (
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateAPIService, validation.ValidateAPIServiceUpdate)

// Strategy is the APIService's main endpoint; StatusStrategy its status.
// Both take conditional updates only.
var (
	Strategy       = rest.Main(rest.ConditionalUpdate, validated)
	StatusStrategy = rest.Status(rest.ConditionalUpdate, validated)
)

// Default applies the kube-aggregator's v1 defaults to an APIService.
var Default = rest.Defaults(apiregistrationv1.SetObjectDefaults_APIService)
