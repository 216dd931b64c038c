package cronjob

import (
	"errors"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestMostRecentScheduleTime(t *testing.T) {
	thu := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC) // a Thursday
	tests := []struct {
		name       string
		schedule   string
		created    time.Time
		last       *time.Time
		deadline   *int64
		now        time.Time
		want       *time.Time
		wantMissed missed
		wantErr    error
	}{
		{name: "nothing due", schedule: "0 * * * *", created: topOfHour.Add(-30 * time.Minute), now: topOfHour.Add(-time.Minute)},
		{name: "exactly due", schedule: "0 * * * *", created: topOfHour.Add(-30 * time.Minute), now: topOfHour,
			want: &topOfHour},
		{name: "last schedule time counts, not creation", schedule: "0 * * * *", created: topOfHour.Add(-10 * time.Hour),
			last: ptr.To(topOfHour), now: topOfHour.Add(59 * time.Minute)},
		{name: "three missed", schedule: "0 * * * *", created: topOfHour.Add(-3*time.Hour - time.Minute), now: topOfHour.Add(time.Minute),
			want: &topOfHour, wantMissed: fewMissed},
		{name: "101 missed", schedule: "0 * * * *", created: topOfHour.Add(-101*time.Hour - time.Minute), now: topOfHour.Add(time.Minute),
			want: &topOfHour, wantMissed: manyMissed},
		{name: "deadline cuts the missed ones", schedule: "0 * * * *", created: topOfHour.Add(-101*time.Hour - time.Minute),
			deadline: ptr.To[int64](3600), now: topOfHour.Add(time.Minute), want: &topOfHour},
		{name: "@every counts from the last time", schedule: "@every 1h", created: topOfHour.Add(-150 * time.Minute),
			now: topOfHour.Add(15 * time.Minute), want: ptr.To(topOfHour.Add(-30 * time.Minute)), wantMissed: fewMissed},
		{name: "irregular schedule over a weekend", schedule: "30 6-16/4 * * 1-5", created: thu,
			now: time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC), want: ptr.To(time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)), wantMissed: fewMissed},
		{name: "a day no month has", schedule: "59 23 31 2 *", created: topOfHour, now: topOfHour.Add(time.Hour), wantErr: errScheduleTooDense},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sched, err := cron.ParseStandard(tc.schedule)
			if err != nil {
				t.Fatal(err)
			}
			cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(tc.created)},
				Spec: batchv1.CronJobSpec{StartingDeadlineSeconds: tc.deadline}}
			if tc.last != nil {
				cj.Status.LastScheduleTime = ptr.To(metav1.NewTime(*tc.last))
			}
			_, got, m, err := mostRecentScheduleTime(cj, tc.now, sched, true)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && !got.Equal(*tc.want)) {
				t.Errorf("most recent %v, want %v", got, tc.want)
			}
			if m != tc.wantMissed {
				t.Errorf("missed %v, want %v", m, tc.wantMissed)
			}
		})
	}
}

func TestJobNameIsMinutesSinceEpoch(t *testing.T) {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "backup"}}
	if got := jobName(cj, time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)); got != "backup-29928120" {
		t.Errorf("jobName = %s", got)
	}
}
