package cronjobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/pkg/controller/cronjob"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

const (
	timeout = 60 * time.Second
	ns      = "cron"
)

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	clock  *clocktesting.FakeClock
}

// start runs an API server and the CronJob controller on a fake clock set
// to the real time (CronJobs get their creationTimestamp from the API
// server's clock).
func start(t *testing.T) *env {
	t.Helper()
	ts := testserver.Start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{t: t, ctx: ctx, client: ts.Client, clock: clocktesting.NewFakeClock(time.Now())}
	if _, err := e.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(ts.Client, 0)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: ts.Client.CoreV1().Events("")})
	c, err := cronjob.NewController(ts.Client, factory.Batch().V1().CronJobs(), factory.Batch().V1().Jobs(),
		broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: cronjob.ControllerName}), nil, cronjob.Options{Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = c.Run(ctx, 5) }()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
		broadcaster.Shutdown()
	})
	return e
}

// poll waits until cond holds, failing with the last state it reported.
func (e *env) poll(what string, cond func() (bool, string)) {
	e.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v; last state: %s", what, err, last)
	}
}

func newCronJob(name, schedule string, mod func(*batchv1.CronJob)) *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{
			Schedule: schedule,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cronjob": name}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"true"}}},
				}}},
			},
		},
	}
	if mod != nil {
		mod(cj)
	}
	return cj
}

func (e *env) create(cj *batchv1.CronJob) *batchv1.CronJob {
	e.t.Helper()
	out, err := e.client.BatchV1().CronJobs(ns).Create(e.ctx, cj, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// at moves the controller's clock to t and makes it look at the CronJobs
// now (a change of an annotation queues a CronJob at once) rather than
// when the real clock reaches the requeue time.
func (e *env) at(t time.Time, cronJobs ...string) {
	e.t.Helper()
	e.clock.SetTime(t)
	for _, name := range cronJobs {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"test/now":%q}}}`, t.Format(time.RFC3339Nano))
		if _, err := e.client.BatchV1().CronJobs(ns).Patch(e.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
}

// nextTick is the first multiple of every after t.
func nextTick(t time.Time, every time.Duration) time.Time {
	return t.Truncate(every).Add(every)
}

func jobNameAt(cj string, t time.Time) string { return fmt.Sprintf("%s-%d", cj, t.Unix()/60) }

func (e *env) jobsOf(cj string) []batchv1.Job {
	e.t.Helper()
	list, err := e.client.BatchV1().Jobs(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "cronjob=" + cj})
	if err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

func jobNames(jobs []batchv1.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	slices.Sort(out)
	return out
}

func activeNames(cj *batchv1.CronJob) []string {
	var out []string
	for _, r := range cj.Status.Active {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

// waitJobs waits until the Jobs of cj are exactly want (sorted).
func (e *env) waitJobs(cj string, want ...string) {
	e.t.Helper()
	slices.Sort(want)
	e.poll(fmt.Sprintf("the jobs of %s to be %v", cj, want), func() (bool, string) {
		got := jobNames(e.jobsOf(cj))
		return slices.Equal(got, want), fmt.Sprint(got)
	})
}

// waitStatus waits until cj's status.active is exactly active and check
// holds.
func (e *env) waitStatus(name string, active []string, check func(*batchv1.CronJob) bool) *batchv1.CronJob {
	e.t.Helper()
	slices.Sort(active)
	var cj *batchv1.CronJob
	e.poll(fmt.Sprintf("the status of %s: active %v", name, active), func() (bool, string) {
		var err error
		if cj, err = e.client.BatchV1().CronJobs(ns).Get(e.ctx, name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		ok := slices.Equal(activeNames(cj), active) && (check == nil || check(cj))
		return ok, fmt.Sprintf("%+v", cj.Status)
	})
	return cj
}

// waitEvent waits for an event of reason on the CronJob name.
func (e *env) waitEvent(name, reason string) corev1.Event {
	e.t.Helper()
	var found corev1.Event
	e.poll(fmt.Sprintf("a %s event on %s", reason, name), func() (bool, string) {
		list, err := e.client.CoreV1().Events(ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.InvolvedObject.Kind == "CronJob" && ev.InvolvedObject.Name == name {
				seen = append(seen, ev.Reason)
				if ev.Reason == reason {
					found = ev
					return true, ""
				}
			}
		}
		return false, fmt.Sprint(seen)
	})
	return found
}

// finish reports the Job as the Job controller would: Complete (or Failed)
// at completed.
func (e *env) finish(name string, cond batchv1.JobConditionType, started, completed time.Time) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		j, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		j.Status.StartTime = ptr.To(metav1.NewTime(started))
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: cond, Status: corev1.ConditionTrue,
			LastProbeTime: metav1.NewTime(completed), LastTransitionTime: metav1.NewTime(completed)})
		if cond == batchv1.JobComplete {
			j.Status.CompletionTime = ptr.To(metav1.NewTime(completed))
			j.Status.Succeeded = 1
		} else {
			j.Status.Failed = 1
		}
		_, err = e.client.BatchV1().Jobs(ns).UpdateStatus(e.ctx, j, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("job %s status: %v", name, err)
	}
}

// The API server refuses schedules and time zones the controller could not
// use, naming the field.
func TestCronJobValidation(t *testing.T) {
	e := start(t)
	tests := []struct {
		name  string
		cj    *batchv1.CronJob
		field string
		msg   string
	}{
		{name: "minute out of range", cj: newCronJob("bad", "61 * * * *", nil), field: "spec.schedule", msg: "above maximum"},
		{name: "four fields", cj: newCronJob("bad", "* * * *", nil), field: "spec.schedule", msg: "expected exactly 5 fields"},
		{name: "unknown macro", cj: newCronJob("bad", "@fortnightly", nil), field: "spec.schedule", msg: "unrecognized descriptor"},
		{name: "TZ in schedule", cj: newCronJob("bad", "CRON_TZ=UTC * * * * *", nil), field: "spec.schedule", msg: "use timeZone field instead"},
		{name: "unknown time zone", cj: newCronJob("bad", "* * * * *", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Mars/Olympus_Mons") }),
			field: "spec.timeZone", msg: "unknown time zone"},
		{name: "Local", cj: newCronJob("bad", "* * * * *", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Local") }),
			field: "spec.timeZone", msg: "explicit time zone"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.client.BatchV1().CronJobs(ns).Create(e.ctx, tc.cj, metav1.CreateOptions{})
			checkInvalid(t, err, tc.field, tc.msg)
		})
	}
	t.Run("update", func(t *testing.T) {
		cj := e.create(newCronJob("good", "@hourly", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Europe/Paris") }))
		cj.Spec.Schedule = "0 0 30 feb-mar-apr *"
		_, err := e.client.BatchV1().CronJobs(ns).Update(e.ctx, cj, metav1.UpdateOptions{})
		checkInvalid(t, err, "spec.schedule", "")
	})
}

func checkInvalid(t *testing.T, err error, field, msg string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error %v, want Invalid", err)
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		t.Fatalf("error %v has no details", err)
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == field && strings.Contains(c.Message, msg) {
			return
		}
	}
	t.Errorf("causes %+v lack field %s with %q", status.Status().Details.Causes, field, msg)
}

// Allow: a Job per schedule time, named for it, owned by the CronJob;
// finished Jobs leave status.active, the latest success is recorded and
// only successfulJobsHistoryLimit/failedJobsHistoryLimit finished Jobs
// stay.
func TestCronJobAllowAndHistory(t *testing.T) {
	e := start(t)
	cj := e.create(newCronJob("every10", "*/10 * * * *", func(cj *batchv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
		cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
		cj.Spec.JobTemplate.Annotations = map[string]string{"from": "template"}
	}))
	t1 := nextTick(cj.CreationTimestamp.Time, 10*time.Minute)
	t2, t3, t4 := t1.Add(10*time.Minute), t1.Add(20*time.Minute), t1.Add(30*time.Minute)

	e.at(t1.Add(2*time.Second), cj.Name)
	e.waitJobs(cj.Name, jobNameAt(cj.Name, t1))
	job, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, jobNameAt(cj.Name, t1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := metav1.GetControllerOf(job)
	if ref == nil || ref.Kind != "CronJob" || ref.UID != cj.UID {
		t.Errorf("job controller %+v, want the CronJob %s", ref, cj.UID)
	}
	if got, want := job.Annotations[batchv1.CronJobScheduledTimestampAnnotation], t1.UTC().Format(time.RFC3339); got != want {
		t.Errorf("scheduled-timestamp annotation %q, want %q", got, want)
	}
	if job.Annotations["from"] != "template" || job.Spec.Template.Spec.Containers[0].Image != "busybox" {
		t.Errorf("job not made from the template: %+v", job)
	}
	e.waitStatus(cj.Name, []string{job.Name}, func(c *batchv1.CronJob) bool {
		return c.Status.LastScheduleTime != nil && c.Status.LastScheduleTime.Time.Equal(t1)
	})
	e.waitEvent(cj.Name, "SuccessfulCreate")

	// Allow: the next time starts a second Job beside the active one.
	e.at(t2.Add(time.Second), cj.Name)
	e.waitJobs(cj.Name, jobNameAt(cj.Name, t1), jobNameAt(cj.Name, t2))
	e.waitStatus(cj.Name, []string{jobNameAt(cj.Name, t1), jobNameAt(cj.Name, t2)}, nil)

	// Both succeed: none active, lastSuccessfulTime the later completion,
	// only the newer one kept.
	e.finish(jobNameAt(cj.Name, t1), batchv1.JobComplete, t1, t1.Add(time.Minute))
	e.finish(jobNameAt(cj.Name, t2), batchv1.JobComplete, t2, t2.Add(time.Minute))
	e.waitStatus(cj.Name, nil, func(c *batchv1.CronJob) bool {
		return c.Status.LastSuccessfulTime != nil && c.Status.LastSuccessfulTime.Time.Equal(t2.Add(time.Minute))
	})
	e.waitJobs(cj.Name, jobNameAt(cj.Name, t2))
	e.waitEvent(cj.Name, "SawCompletedJob")
	e.waitEvent(cj.Name, "SuccessfulDelete")

	// Two failures: one failed Job kept beside the successful one.
	e.at(t3.Add(time.Second), cj.Name)
	e.waitJobs(cj.Name, jobNameAt(cj.Name, t2), jobNameAt(cj.Name, t3))
	e.finish(jobNameAt(cj.Name, t3), batchv1.JobFailed, t3, t3.Add(time.Minute))
	e.at(t4.Add(time.Second), cj.Name)
	e.waitJobs(cj.Name, jobNameAt(cj.Name, t2), jobNameAt(cj.Name, t3), jobNameAt(cj.Name, t4))
	e.finish(jobNameAt(cj.Name, t4), batchv1.JobFailed, t4, t4.Add(time.Minute))
	e.waitJobs(cj.Name, jobNameAt(cj.Name, t2), jobNameAt(cj.Name, t4))
	e.waitStatus(cj.Name, nil, nil)
}

// Forbid skips a time while a Job runs; Replace deletes the running Job
// and starts the new one.
func TestCronJobConcurrencyPolicies(t *testing.T) {
	e := start(t)
	forbid := e.create(newCronJob("forbid", "*/5 * * * *", func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent }))
	replace := e.create(newCronJob("replace", "*/5 * * * *", func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.ReplaceConcurrent }))
	// After both creations: only the most recent missed time runs.
	created := forbid.CreationTimestamp.Time
	if replace.CreationTimestamp.After(created) {
		created = replace.CreationTimestamp.Time
	}
	t1 := nextTick(created, 5*time.Minute)
	t2 := t1.Add(5 * time.Minute)

	e.at(t1.Add(time.Second), forbid.Name, replace.Name)
	e.waitJobs(forbid.Name, jobNameAt(forbid.Name, t1))
	e.waitJobs(replace.Name, jobNameAt(replace.Name, t1))
	e.waitStatus(forbid.Name, []string{jobNameAt(forbid.Name, t1)}, nil)
	e.waitStatus(replace.Name, []string{jobNameAt(replace.Name, t1)}, nil)

	e.at(t2.Add(time.Second), forbid.Name, replace.Name)
	e.waitEvent(forbid.Name, "JobAlreadyActive")
	e.waitJobs(replace.Name, jobNameAt(replace.Name, t2))
	e.waitStatus(replace.Name, []string{jobNameAt(replace.Name, t2)}, func(c *batchv1.CronJob) bool {
		return c.Status.LastScheduleTime != nil && c.Status.LastScheduleTime.Time.Equal(t2)
	})
	e.waitEvent(replace.Name, "SuccessfulDelete")
	if got := jobNames(e.jobsOf(forbid.Name)); !slices.Equal(got, []string{jobNameAt(forbid.Name, t1)}) {
		t.Errorf("forbid's jobs %v, want only the first", got)
	}

	// Once the running Job finishes, Forbid starts the time it deferred
	// (no starting deadline).
	e.finish(jobNameAt(forbid.Name, t1), batchv1.JobComplete, t1, t2.Add(2*time.Second))
	e.at(t2.Add(3*time.Second), forbid.Name)
	e.waitJobs(forbid.Name, jobNameAt(forbid.Name, t1), jobNameAt(forbid.Name, t2))
	e.waitStatus(forbid.Name, []string{jobNameAt(forbid.Name, t2)}, nil)
}

// A CronJob down for more than 100 schedule times starts only the most
// recent one and warns; with a time zone, the annotation carries it.
func TestCronJobMissedRunsAndTimeZone(t *testing.T) {
	e := start(t)
	hourly := e.create(newCronJob("hourly", "0 * * * *", nil))
	kolkata := e.create(newCronJob("kolkata", "*/30 * * * *", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Asia/Kolkata") }))
	later := nextTick(hourly.CreationTimestamp.Time, time.Hour).Add(150 * time.Hour)

	e.at(later.Add(time.Minute), hourly.Name, kolkata.Name)
	e.waitEvent(hourly.Name, "TooManyMissedTimes")
	e.waitJobs(hourly.Name, jobNameAt(hourly.Name, later))
	e.waitJobs(kolkata.Name, jobNameAt(kolkata.Name, later))
	job, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, jobNameAt(kolkata.Name, later), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := time.LoadLocation("Asia/Kolkata")
	want := later.In(loc).Format(time.RFC3339)
	if got := job.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != want || !strings.HasSuffix(got, "+05:30") {
		t.Errorf("scheduled-timestamp annotation %q, want %q", got, want)
	}
}

// The controller manager runs the cronjob controller: a "* * * * *"
// CronJob gets a Job within a minute on the real clock.
func TestCronJobControllerInTheApp(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, nil)
	cmtest.Start(t, ts, func(o *cmapp.Options) { o.Controllers = []string{"cronjob"} })
	ctx := context.Background()
	if _, err := ts.Client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cj, err := ts.Client.BatchV1().CronJobs("default").Create(ctx, newCronJob("minutely", "* * * * *", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []batchv1.Job
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := ts.Client.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		jobs = list.Items
		return len(jobs) > 0, nil
	})
	if err != nil {
		t.Fatalf("no job within 90s: %v", err)
	}
	j := jobs[0]
	scheduled, err := time.Parse(time.RFC3339, j.Annotations[batchv1.CronJobScheduledTimestampAnnotation])
	if err != nil {
		t.Fatalf("annotation of %s: %v", j.Name, err)
	}
	if scheduled.Second() != 0 || scheduled.Before(cj.CreationTimestamp.Time) || j.Name != jobNameAt(cj.Name, scheduled) {
		t.Errorf("job %s scheduled %v for a CronJob created %v", j.Name, scheduled, cj.CreationTimestamp)
	}
	if ref := metav1.GetControllerOf(&j); ref == nil || ref.UID != cj.UID {
		t.Errorf("job controller %+v", ref)
	}
}
