package validation

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	// The zone database is built in, so a zone is valid or not whatever the
	// host has installed, as in upstream's binaries.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CronJob schedules and time zones, checked as upstream's
// pkg/apis/batch/validation does: with robfig/cron's standard parser (the
// one the CronJob controller schedules with) and the Go time zone database.

// validateCronSchedule checks a CronJob's schedule: five fields or a macro
// (@hourly, @every 5m, ...), and no TZ= or CRON_TZ= prefix unless the
// object already had one (allowTZ, on update), and never together with
// spec.timeZone.
func validateCronSchedule(schedule string, allowTZ bool, timeZone *string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if err := checkCronSchedule(schedule); err != nil {
		allErrs = append(allErrs, field.Invalid(p, schedule, err.Error()))
	}
	switch {
	case allowTZ && strings.Contains(schedule, "TZ") && timeZone != nil:
		allErrs = append(allErrs, field.Invalid(p, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && strings.Contains(schedule, "TZ"):
		allErrs = append(allErrs, field.Invalid(p, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return allErrs
}

// checkCronSchedule parses s as the CronJob controller does.
func checkCronSchedule(s string) error {
	_, err := cron.ParseStandard(s)
	return err
}

// validTimeZoneCharacters is one component of an IANA zone name; digits
// and '+' are tolerated for the legacy names (Etc/GMT+5), as upstream.
var validTimeZoneCharacters = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// validateTimeZone checks spec.timeZone: unset, or an explicit IANA zone
// name (not "Local") that the time zone database knows.
func validateTimeZone(timeZone *string, p *field.Path) field.ErrorList {
	if timeZone == nil {
		return nil
	}
	if *timeZone == "" {
		return field.ErrorList{field.Invalid(p, timeZone, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*timeZone, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZoneCharacters.MatchString(part) {
			return field.ErrorList{field.Invalid(p, timeZone, fmt.Sprintf("unknown time zone %s", *timeZone))}
		}
	}
	var allErrs field.ErrorList
	if strings.EqualFold(*timeZone, "Local") {
		allErrs = append(allErrs, field.Invalid(p, timeZone, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*timeZone); err != nil {
		allErrs = append(allErrs, field.Invalid(p, timeZone, err.Error()))
	}
	return allErrs
}
