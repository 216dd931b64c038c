// Package cronjob holds the CronJob kind's strategies and defaults.
package cronjob

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateCronJob, validation.ValidateCronJobUpdate)

// Strategy is the CronJob's main endpoint; StatusStrategy its status.
var (
	Strategy       = rest.Main(rest.WithGeneration, validated)
	StatusStrategy = rest.Status(validated)
)

// Default applies upstream's v1 defaults to a CronJob.
var Default = rest.Defaults(defaults.DefaultCronJob)
