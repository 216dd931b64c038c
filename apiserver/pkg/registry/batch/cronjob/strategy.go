// Package cronjob holds the CronJob kind's strategies and defaults.
package cronjob

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy is the CronJob's main endpoint; StatusStrategy its status.
var (
	Strategy       = rest.Main(rest.WithGeneration, rest.Validation(validation.ValidateCronJob, validation.ValidateCronJobUpdate))
	StatusStrategy = rest.Status(rest.Validation(validation.ValidateCronJob, validation.ValidateCronJobUpdate))
)

// Default applies upstream's v1 defaults to a CronJob.
var Default = rest.Defaults(defaults.DefaultCronJob)
