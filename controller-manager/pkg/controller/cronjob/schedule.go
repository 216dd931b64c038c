package cronjob

import (
	"errors"
	"fmt"
	"strings"
	"time"
	// Time zones are looked up in the built-in database, whatever the host
	// has installed, as the API server validates them.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// nextScheduleDelta pads each requeue so the sync lands after the schedule
// time despite small clock differences, as upstream.
const nextScheduleDelta = 100 * time.Millisecond

// tooManyMissed is the count of missed schedule times above which the
// controller warns (upstream's arbitrary "more than 80, less than lots").
const tooManyMissed = 100

// formatSchedule is the schedule given to the cron parser: with
// spec.timeZone as a TZ= prefix when it is a known zone. A schedule that
// carries TZ= or CRON_TZ= itself (stored before validation refused them)
// is used as is, with an UnsupportedSchedule warning when recorder is set.
func formatSchedule(cj *batchv1.CronJob, recorder record.EventRecorder) string {
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		if recorder != nil {
			recorder.Eventf(cj, corev1.EventTypeWarning, "UnsupportedSchedule",
				"CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
				cj.Spec.Schedule)
		}
		return cj.Spec.Schedule
	}
	if cj.Spec.TimeZone != nil {
		if _, err := time.LoadLocation(*cj.Spec.TimeZone); err != nil {
			return cj.Spec.Schedule
		}
		return fmt.Sprintf("TZ=%s %s", *cj.Spec.TimeZone, cj.Spec.Schedule)
	}
	return cj.Spec.Schedule
}

// missed says how many schedule times passed without a Job.
type missed int

const (
	noneMissed missed = iota
	fewMissed
	manyMissed
)

// errScheduleTooDense is a schedule that parses but whose consecutive
// times coincide (a day that no month has, such as February 31st).
var errScheduleTooDense = errors.New("time difference between two schedules is less than 1 second")

// mostRecentScheduleTime returns the time from which schedule times count
// (lastScheduleTime, else the creation time, moved up to now minus
// startingDeadlineSeconds when withDeadline), the most recent schedule
// time at or before now after it (nil if none), and how many were missed.
func mostRecentScheduleTime(cj *batchv1.CronJob, now time.Time, schedule cron.Schedule, withDeadline bool) (time.Time, *time.Time, missed, error) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if withDeadline && cj.Spec.StartingDeadlineSeconds != nil {
		// Nothing older than the deadline will be started.
		deadline := now.Add(-time.Duration(*cj.Spec.StartingDeadlineSeconds) * time.Second)
		if deadline.After(earliest) {
			earliest = deadline
		}
	}
	t1 := schedule.Next(earliest)
	t2 := schedule.Next(t1)
	if now.Before(t1) {
		return earliest, nil, noneMissed, nil
	}
	if now.Before(t2) {
		return earliest, &t1, noneMissed, nil
	}
	// Count the missed times by the interval between the first two rather
	// than walking them all: after an outage of years that walk would be
	// long. The walk below starts one interval before the estimate, which
	// also finds the right time for irregular schedules (30 6-16/4 * * 1-5).
	interval := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if interval < 1 {
		return earliest, nil, noneMissed, errScheduleTooDense
	}
	elapsed := int64(now.Sub(t1).Seconds())
	count := elapsed/interval + 1
	var mostRecent time.Time
	start := t1.Add(time.Duration((count-2)*interval) * time.Second)
	for t := schedule.Next(start); !t.After(now); t = schedule.Next(t) {
		mostRecent = t
	}
	m := fewMissed
	if count > tooManyMissed {
		m = manyMissed
	}
	if mostRecent.IsZero() {
		return earliest, nil, m, nil
	}
	return earliest, &mostRecent, m, nil
}

// nextScheduleTime returns the most recent schedule time not yet run and
// within the starting deadline, or nil. More than 100 missed times record
// TooManyMissedTimes.
func nextScheduleTime(logger klog.Logger, cj *batchv1.CronJob, now time.Time, schedule cron.Schedule, recorder record.EventRecorder) (*time.Time, error) {
	_, mostRecent, m, err := mostRecentScheduleTime(cj, now, schedule, true)
	if mostRecent == nil || mostRecent.After(now) {
		return nil, err
	}
	if m == manyMissed {
		recorder.Eventf(cj, corev1.EventTypeWarning, "TooManyMissedTimes",
			"too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
		logger.Info("Too many missed times", "cronjob", klog.KObj(cj))
	}
	return mostRecent, err
}

// nextScheduleTimeDuration is how long from now until just after the next
// schedule time: after the last time run, or after now when times were
// missed or the schedule cannot be walked.
func nextScheduleTimeDuration(cj *batchv1.CronJob, now time.Time, schedule cron.Schedule) time.Duration {
	earliest, mostRecent, m, err := mostRecentScheduleTime(cj, now, schedule, false)
	switch {
	case err != nil:
		mostRecent = &now
	case mostRecent == nil && m == noneMissed:
		mostRecent = &earliest
	case mostRecent == nil:
		mostRecent = &now
	}
	return schedule.Next(*mostRecent).Add(nextScheduleDelta).Sub(now)
}

// jobName is "<cronjob>-<scheduled time in minutes since the epoch>": one
// name per schedule time, the controller's guard against creating a Job
// twice.
func jobName(cj *batchv1.CronJob, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
}

// jobFromTemplate makes the Job of cj for the schedule time scheduled.
func jobFromTemplate(cj *batchv1.CronJob, scheduled time.Time) (*batchv1.Job, error) {
	loc, err := time.LoadLocation(ptr.Deref(cj.Spec.TimeZone, ""))
	if err != nil {
		return nil, err
	}
	labels := make(map[string]string, len(cj.Spec.JobTemplate.Labels))
	for k, v := range cj.Spec.JobTemplate.Labels {
		labels[k] = v
	}
	annotations := make(map[string]string, len(cj.Spec.JobTemplate.Annotations)+1)
	for k, v := range cj.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:              jobName(cj, scheduled),
			Namespace:         cj.Namespace,
			Labels:            labels,
			Annotations:       annotations,
			CreationTimestamp: metav1.NewTime(scheduled),
			OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(cj, controllerKind)},
		},
	}
	cj.Spec.JobTemplate.Spec.DeepCopyInto(&job.Spec)
	return job, nil
}

// finishedCondition returns Complete or Failed when job has that condition
// true, else "".
func finishedCondition(job *batchv1.Job) batchv1.JobConditionType {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

func isJobFinished(job *batchv1.Job) bool { return finishedCondition(job) != "" }

func isJobSucceeded(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// byJobStartTime orders Jobs by status.startTime, those without one last,
// names breaking ties.
type byJobStartTime []*batchv1.Job

func (o byJobStartTime) Len() int      { return len(o) }
func (o byJobStartTime) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o byJobStartTime) Less(i, j int) bool {
	a, b := o[i].Status.StartTime, o[j].Status.StartTime
	switch {
	case a == nil && b != nil:
		return false
	case a != nil && b == nil:
		return true
	case a.Equal(b):
		return o[i].Name < o[j].Name
	}
	return a.Before(b)
}

func inActiveList(cj *batchv1.CronJob, job *batchv1.Job) bool {
	for _, ref := range cj.Status.Active {
		if ref.UID == job.UID {
			return true
		}
	}
	return false
}

func inActiveListByName(cj *batchv1.CronJob, name string) bool {
	for _, ref := range cj.Status.Active {
		if ref.Name == name && ref.Namespace == cj.Namespace {
			return true
		}
	}
	return false
}

func deleteFromActiveList(cj *batchv1.CronJob, uid types.UID) {
	var kept []corev1.ObjectReference
	for _, ref := range cj.Status.Active {
		if ref.UID != uid {
			kept = append(kept, ref)
		}
	}
	cj.Status.Active = kept
}

// jobRef is the reference status.active holds for job.
func jobRef(job *batchv1.Job) corev1.ObjectReference {
	return corev1.ObjectReference{
		Kind:            "Job",
		APIVersion:      batchv1.SchemeGroupVersion.String(),
		Namespace:       job.Namespace,
		Name:            job.Name,
		UID:             job.UID,
		ResourceVersion: job.ResourceVersion,
	}
}
