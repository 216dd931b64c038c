package validation

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/apis/defaults"
)

func cronJobFor(schedule string, timeZone *string) *batchv1.CronJob {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "default"}, Spec: batchv1.CronJobSpec{
		Schedule: schedule, TimeZone: timeZone,
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}},
	}}
	defaults.DefaultCronJob(cj)
	return cj
}

func TestValidateCronJobScheduleAndTimeZone(t *testing.T) {
	tests := []struct {
		name     string
		schedule string
		timeZone *string
		want     []want
		msg      string
	}{
		{name: "five fields", schedule: "*/5 0-23 1,15 jan-dec mon-fri"},
		{name: "hourly macro", schedule: "@hourly"},
		{name: "every", schedule: "@every 90s"},
		{name: "question mark", schedule: "0 0 ? * *"},
		{name: "time zone", schedule: "0 9 * * *", timeZone: ptr.To("Europe/Berlin")},
		{name: "legacy zone name", schedule: "0 9 * * *", timeZone: ptr.To("Etc/GMT+5")},
		{name: "UTC", schedule: "0 9 * * *", timeZone: ptr.To("UTC")},
		{name: "empty", schedule: "", want: []want{{field.ErrorTypeRequired, "spec.schedule"}}},
		{name: "minute out of range", schedule: "61 * * * *", want: []want{{field.ErrorTypeInvalid, "spec.schedule"}},
			msg: "end of range (61) above maximum (59)"},
		{name: "four fields", schedule: "* * * *", want: []want{{field.ErrorTypeInvalid, "spec.schedule"}},
			msg: "expected exactly 5 fields, found 4"},
		{name: "six fields", schedule: "0 * * * * *", want: []want{{field.ErrorTypeInvalid, "spec.schedule"}}},
		{name: "unknown macro", schedule: "@sometimes", want: []want{{field.ErrorTypeInvalid, "spec.schedule"}},
			msg: "unrecognized descriptor: @sometimes"},
		{name: "not a number", schedule: "a * * * *", want: []want{{field.ErrorTypeInvalid, "spec.schedule"}}},
		{name: "backwards range", schedule: "5-1 * * * *", want: []want{{field.ErrorTypeInvalid, "spec.schedule"}}},
		{name: "CRON_TZ in schedule", schedule: "CRON_TZ=UTC 0 * * * *", want: []want{{field.ErrorTypeInvalid, "spec.schedule"}},
			msg: "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"},
		{name: "TZ in schedule", schedule: "TZ=Europe/Berlin 0 * * * *", want: []want{{field.ErrorTypeInvalid, "spec.schedule"}},
			msg: "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"},
		{name: "unknown time zone", schedule: "0 * * * *", timeZone: ptr.To("Mars/Olympus_Mons"), want: []want{{field.ErrorTypeInvalid, "spec.timeZone"}},
			msg: "unknown time zone Mars/Olympus_Mons"},
		{name: "empty time zone", schedule: "0 * * * *", timeZone: ptr.To(""), want: []want{{field.ErrorTypeInvalid, "spec.timeZone"}},
			msg: "timeZone must be nil or non-empty string"},
		{name: "Local", schedule: "0 * * * *", timeZone: ptr.To("Local"), want: []want{{field.ErrorTypeInvalid, "spec.timeZone"}},
			msg: "timeZone must be an explicit time zone"},
		{name: "path in time zone", schedule: "0 * * * *", timeZone: ptr.To("../etc/passwd"), want: []want{{field.ErrorTypeInvalid, "spec.timeZone"}},
			msg: "unknown time zone ../etc/passwd"},
		{name: "both wrong", schedule: "0 0 32 * *", timeZone: ptr.To("Nowhere/Town"),
			want: []want{{field.ErrorTypeInvalid, "spec.schedule"}, {field.ErrorTypeInvalid, "spec.timeZone"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateCronJob(cronJobFor(tc.schedule, tc.timeZone))
			checkErrs(t, errs, tc.want)
			if tc.msg != "" && !strings.Contains(errs.ToAggregate().Error(), tc.msg) {
				t.Errorf("message %q not in %v", tc.msg, errs)
			}
		})
	}
}

// A CronJob stored with a TZ= schedule (before validation refused it) may
// be updated keeping it, but not add spec.timeZone beside it; one without
// may not gain it.
func TestValidateCronJobUpdateTZ(t *testing.T) {
	tests := []struct {
		name     string
		old, cur *batchv1.CronJob
		want     []want
		msg      string
	}{
		{name: "keeps TZ schedule", old: cronJobFor("TZ=UTC 0 * * * *", nil), cur: cronJobFor("TZ=UTC 5 * * * *", nil)},
		{name: "TZ schedule and timeZone", old: cronJobFor("TZ=UTC 0 * * * *", nil), cur: cronJobFor("TZ=UTC 0 * * * *", ptr.To("UTC")),
			want: []want{{field.ErrorTypeInvalid, "spec.schedule"}}, msg: "cannot use both timeZone field and TZ or CRON_TZ in schedule"},
		{name: "adds TZ schedule", old: cronJobFor("0 * * * *", nil), cur: cronJobFor("CRON_TZ=UTC 0 * * * *", nil),
			want: []want{{field.ErrorTypeInvalid, "spec.schedule"}}, msg: "use timeZone field instead"},
		{name: "bad time zone on update", old: cronJobFor("0 * * * *", nil), cur: cronJobFor("0 * * * *", ptr.To("Not/AZone")),
			want: []want{{field.ErrorTypeInvalid, "spec.timeZone"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.old.ResourceVersion, tc.cur.ResourceVersion = "1", "1"
			errs := ValidateCronJobUpdate(tc.cur, tc.old)
			checkErrs(t, errs, tc.want)
			if tc.msg != "" && !strings.Contains(errs.ToAggregate().Error(), tc.msg) {
				t.Errorf("message %q not in %v", tc.msg, errs)
			}
		})
	}
}

func TestCronSchedules(t *testing.T) {
	for s, ok := range map[string]bool{"*/5 * * * *": true, "0 0 1 jan mon": true, "@hourly": true, "@every 5m": true,
		"* * * *": false, "0 25 * * *": false, "@sometimes": false, "5-1 * * * *": false, "a * * * *": false} {
		if err := checkCronSchedule(s); (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", s, err, ok)
		}
	}
}
