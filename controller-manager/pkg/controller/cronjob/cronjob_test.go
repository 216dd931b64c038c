package cronjob

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// topOfHour is a schedule time of "0 * * * *".
var topOfHour = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// recordingQueue keeps the delay of the last AddAfter of each key instead
// of arming a timer.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	mu    sync.Mutex
	after map[string]time.Duration
}

func (q *recordingQueue) AddAfter(key string, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.after[key] = d
}

func (q *recordingQueue) requeue(key string) (time.Duration, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	d, ok := q.after[key]
	return d, ok
}

type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	c        *Controller
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
	queue    *recordingQueue
	cjIdx    cache.Indexer
	jobIdx   cache.Indexer
}

// newFixture puts objs in the fake API and in the informers' caches.
func newFixture(t *testing.T, now time.Time, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, client: fake.NewSimpleClientset(objs...), recorder: record.NewFakeRecorder(1000),
		clock: clocktesting.NewFakeClock(now)}
	factory := informers.NewSharedInformerFactory(f.client, 0)
	cjInf, jobInf := factory.Batch().V1().CronJobs(), factory.Batch().V1().Jobs()
	c, err := NewController(f.client, cjInf, jobInf, f.recorder, nil, Options{Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	f.queue = &recordingQueue{TypedRateLimitingInterface: c.queue, after: map[string]time.Duration{}}
	c.queue = f.queue
	f.cjIdx, f.jobIdx = cjInf.Informer().GetIndexer(), jobInf.Informer().GetIndexer()
	for _, o := range objs {
		switch o := o.(type) {
		case *batchv1.CronJob:
			_ = f.cjIdx.Add(o)
		case *batchv1.Job:
			_ = f.jobIdx.Add(o)
		}
	}
	return f
}

func (f *fixture) sync(cj *batchv1.CronJob) error {
	f.client.ClearActions()
	return f.c.sync(context.Background(), cj.Namespace+"/"+cj.Name)
}

// actions returns the verb resource(/subresource) of the recorded API
// calls.
func (f *fixture) actions() []string {
	var out []string
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s)
	}
	return out
}

// events returns the "type reason" of the recorded events.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			parts := strings.SplitN(e, " ", 3)
			out = append(out, parts[0]+" "+parts[1])
		default:
			return out
		}
	}
}

func (f *fixture) created() *batchv1.Job {
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "jobs" {
			return a.(core.CreateAction).GetObject().(*batchv1.Job)
		}
	}
	return nil
}

func (f *fixture) deleted() []string {
	var out []string
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "jobs" {
			d := a.(core.DeleteActionImpl)
			if p := d.DeleteOptions.PropagationPolicy; p == nil || *p != metav1.DeletePropagationBackground {
				f.t.Errorf("delete of %s: propagation %v, want Background", d.Name, p)
			}
			out = append(out, d.Name)
		}
	}
	return out
}

func (f *fixture) writtenStatus() *batchv1.CronJobStatus {
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "update" && a.GetResource().Resource == "cronjobs" && a.GetSubresource() == "status" {
			return &a.(core.UpdateAction).GetObject().(*batchv1.CronJob).Status
		}
	}
	return nil
}

func newCronJob(schedule string, created time.Time) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "default", UID: "cj-uid", ResourceVersion: "1",
			CreationTimestamp: metav1.NewTime(created)},
		Spec: batchv1.CronJobSpec{
			Schedule:                   schedule,
			ConcurrencyPolicy:          batchv1.AllowConcurrent,
			Suspend:                    ptr.To(false),
			SuccessfulJobsHistoryLimit: ptr.To[int32](3),
			FailedJobsHistoryLimit:     ptr.To[int32](1),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "cron"}, Annotations: map[string]string{"note": "x"}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
			},
		},
	}
}

// newJob is the Job of cj for the schedule time scheduled, started then,
// finished with cond ("" for running) a minute later.
func newJob(cj *batchv1.CronJob, scheduled time.Time, cond batchv1.JobConditionType) *batchv1.Job {
	j, err := jobFromTemplate(cj, scheduled)
	if err != nil {
		panic(err)
	}
	j.UID = types.UID(j.Name + "-uid")
	j.ResourceVersion = "1"
	j.Status.StartTime = ptr.To(metav1.NewTime(scheduled))
	if cond != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue}}
		if cond == batchv1.JobComplete {
			j.Status.CompletionTime = ptr.To(metav1.NewTime(scheduled.Add(time.Minute)))
		}
	}
	return j
}

// active lists jobs in cj's status.active.
func active(cj *batchv1.CronJob, jobs ...*batchv1.Job) *batchv1.CronJob {
	for _, j := range jobs {
		cj.Status.Active = append(cj.Status.Active, jobRef(j))
	}
	return cj
}

func with(cj *batchv1.CronJob, mod func(*batchv1.CronJob)) *batchv1.CronJob {
	mod(cj)
	return cj
}

func lastScheduled(t time.Time) func(*batchv1.CronJob) {
	return func(cj *batchv1.CronJob) { cj.Status.LastScheduleTime = ptr.To(metav1.NewTime(t)) }
}

// noRequeue is wantRequeue for syncs that do not requeue.
const noRequeue = time.Duration(-1)

func TestSyncCronJob(t *testing.T) {
	hourly := func() *batchv1.CronJob { return newCronJob("0 * * * *", topOfHour.Add(-30*time.Minute)) }
	prev := hourly()
	prevJob := newJob(prev, topOfHour.Add(-time.Hour), "")
	tokyo := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC) // 09:00 in Asia/Tokyo

	tests := []struct {
		name string
		cj   *batchv1.CronJob
		jobs []*batchv1.Job
		now  time.Time
		// wantJob is the scheduled time of the Job created (zero: none).
		wantJob     time.Time
		wantDeleted []string
		wantEvents  []string
		// wantActive is the names in the status written (nil: no write).
		wantActive  []string
		wantRequeue time.Duration
		wantErr     bool
	}{
		{
			name: "not due yet", cj: hourly(), now: topOfHour.Add(-time.Second),
			wantRequeue: time.Second + nextScheduleDelta,
		},
		{
			name: "due: creates the job", cj: hourly(), now: topOfHour.Add(5 * time.Second),
			wantJob: topOfHour, wantEvents: []string{"Normal SuccessfulCreate"},
			wantActive: []string{jobName(prev, topOfHour)}, wantRequeue: time.Hour - 5*time.Second + nextScheduleDelta,
		},
		{
			name: "macro @hourly", cj: newCronJob("@hourly", topOfHour.Add(-30*time.Minute)), now: topOfHour.Add(time.Second),
			wantJob: topOfHour, wantEvents: []string{"Normal SuccessfulCreate"},
			wantActive: []string{jobName(prev, topOfHour)}, wantRequeue: time.Hour - time.Second + nextScheduleDelta,
		},
		{
			name: "already scheduled this time", cj: with(hourly(), lastScheduled(topOfHour)), now: topOfHour.Add(time.Minute),
			wantRequeue: time.Hour - time.Minute + nextScheduleDelta,
		},
		{
			name: "time zone: 09:00 in Tokyo is midnight UTC",
			cj:   with(newCronJob("0 9 * * *", tokyo.Add(-time.Hour)), func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Asia/Tokyo") }),
			now:  tokyo.Add(30 * time.Second), wantJob: tokyo, wantEvents: []string{"Normal SuccessfulCreate"},
			wantActive: []string{jobName(prev, tokyo)}, wantRequeue: 24*time.Hour - 30*time.Second + nextScheduleDelta,
		},
		{
			name: "time zone unset: 09:00 is UTC", cj: newCronJob("0 9 * * *", tokyo.Add(-time.Hour)),
			now: tokyo.Add(30 * time.Second), wantRequeue: 9*time.Hour - 30*time.Second + nextScheduleDelta,
		},
		{
			name: "unknown time zone", now: topOfHour.Add(time.Second),
			cj:         with(hourly(), func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Mars/Olympus") }),
			wantEvents: []string{"Warning UnknownTimeZone"}, wantRequeue: noRequeue,
		},
		{
			name: "allow: a second job beside the active one", cj: active(with(hourly(), lastScheduled(topOfHour.Add(-time.Hour))), prevJob),
			jobs: []*batchv1.Job{prevJob}, now: topOfHour.Add(time.Second),
			wantJob: topOfHour, wantEvents: []string{"Normal SuccessfulCreate"},
			wantActive: []string{prevJob.Name, jobName(prev, topOfHour)}, wantRequeue: time.Hour - time.Second + nextScheduleDelta,
		},
		{
			name: "forbid: the active job defers the run",
			cj: active(with(hourly(), func(cj *batchv1.CronJob) {
				cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
				lastScheduled(topOfHour.Add(-time.Hour))(cj)
			}), prevJob),
			jobs: []*batchv1.Job{prevJob}, now: topOfHour.Add(time.Second),
			wantEvents: []string{"Normal JobAlreadyActive"}, wantRequeue: time.Hour - time.Second + nextScheduleDelta,
		},
		{
			name: "forbid: runs once the previous job finished",
			cj: active(with(hourly(), func(cj *batchv1.CronJob) {
				cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
				lastScheduled(topOfHour.Add(-time.Hour))(cj)
			}), prevJob),
			jobs: []*batchv1.Job{newJob(prev, topOfHour.Add(-time.Hour), batchv1.JobComplete)}, now: topOfHour.Add(time.Second),
			wantJob: topOfHour, wantEvents: []string{"Normal SawCompletedJob", "Normal SuccessfulCreate"},
			wantActive: []string{jobName(prev, topOfHour)}, wantRequeue: time.Hour - time.Second + nextScheduleDelta,
		},
		{
			name: "replace: the active job is deleted first",
			cj: active(with(hourly(), func(cj *batchv1.CronJob) {
				cj.Spec.ConcurrencyPolicy = batchv1.ReplaceConcurrent
				lastScheduled(topOfHour.Add(-time.Hour))(cj)
			}), prevJob),
			jobs: []*batchv1.Job{prevJob}, now: topOfHour.Add(time.Second),
			wantJob: topOfHour, wantDeleted: []string{prevJob.Name},
			wantEvents: []string{"Normal SuccessfulDelete", "Normal SuccessfulCreate"},
			wantActive: []string{jobName(prev, topOfHour)}, wantRequeue: time.Hour - time.Second + nextScheduleDelta,
		},
		{
			name: "replace: nothing active, nothing deleted",
			cj: with(hourly(), func(cj *batchv1.CronJob) {
				cj.Spec.ConcurrencyPolicy = batchv1.ReplaceConcurrent
			}),
			now: topOfHour.Add(time.Second), wantJob: topOfHour, wantEvents: []string{"Normal SuccessfulCreate"},
			wantActive: []string{jobName(prev, topOfHour)}, wantRequeue: time.Hour - time.Second + nextScheduleDelta,
		},
		{
			name: "within startingDeadlineSeconds",
			cj: with(hourly(), func(cj *batchv1.CronJob) {
				cj.Spec.StartingDeadlineSeconds = ptr.To[int64](60)
			}),
			now: topOfHour.Add(59 * time.Second), wantJob: topOfHour, wantEvents: []string{"Normal SuccessfulCreate"},
			wantActive: []string{jobName(prev, topOfHour)}, wantRequeue: time.Hour - 59*time.Second + nextScheduleDelta,
		},
		{
			name: "past startingDeadlineSeconds: the time is skipped",
			cj: with(hourly(), func(cj *batchv1.CronJob) {
				cj.Spec.StartingDeadlineSeconds = ptr.To[int64](60)
			}),
			now: topOfHour.Add(61 * time.Second), wantRequeue: time.Hour - 61*time.Second + nextScheduleDelta,
		},
		{
			name: "missed runs: only the most recent starts",
			cj:   with(hourly(), lastScheduled(topOfHour.Add(-4*time.Hour))), now: topOfHour.Add(10 * time.Minute),
			wantJob: topOfHour, wantEvents: []string{"Normal SuccessfulCreate"},
			wantActive: []string{jobName(prev, topOfHour)}, wantRequeue: 50*time.Minute + nextScheduleDelta,
		},
		{
			name: "more than 100 missed runs warn",
			cj:   newCronJob("0 * * * *", topOfHour.Add(-200*time.Hour-time.Minute)), now: topOfHour.Add(time.Minute),
			wantJob: topOfHour, wantEvents: []string{"Warning TooManyMissedTimes", "Normal SuccessfulCreate"},
			wantActive: []string{jobName(prev, topOfHour)}, wantRequeue: 59*time.Minute + nextScheduleDelta,
		},
		{
			name: "100 missed runs do not warn",
			cj:   newCronJob("0 * * * *", topOfHour.Add(-99*time.Hour-time.Minute)), now: topOfHour.Add(time.Minute),
			wantJob: topOfHour, wantEvents: []string{"Normal SuccessfulCreate"},
			wantActive: []string{jobName(prev, topOfHour)}, wantRequeue: 59*time.Minute + nextScheduleDelta,
		},
		{
			name: "more than 100 missed runs past the deadline: nothing to warn about",
			cj: with(newCronJob("0 * * * *", topOfHour.Add(-200*time.Hour-time.Minute)), func(cj *batchv1.CronJob) {
				cj.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
			}),
			now: topOfHour.Add(time.Minute), wantRequeue: 59*time.Minute + nextScheduleDelta,
		},
		{
			name: "suspended", cj: with(hourly(), func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }),
			now: topOfHour.Add(time.Second), wantRequeue: noRequeue,
		},
		{
			name: "suspended still records a finished job",
			cj: active(with(hourly(), func(cj *batchv1.CronJob) {
				cj.Spec.Suspend = ptr.To(true)
				lastScheduled(topOfHour.Add(-time.Hour))(cj)
			}), prevJob),
			jobs: []*batchv1.Job{newJob(prev, topOfHour.Add(-time.Hour), batchv1.JobFailed)}, now: topOfHour.Add(time.Second),
			wantEvents: []string{"Normal SawCompletedJob"}, wantActive: []string{}, wantRequeue: noRequeue,
		},
		{
			name: "being deleted", cj: with(hourly(), func(cj *batchv1.CronJob) { cj.DeletionTimestamp = ptr.To(metav1.NewTime(topOfHour)) }),
			now: topOfHour.Add(time.Second), wantRequeue: noRequeue,
		},
		{
			name: "unparseable schedule", cj: newCronJob("61 * * * *", topOfHour.Add(-time.Hour)), now: topOfHour,
			wantEvents: []string{"Warning UnparseableSchedule"}, wantRequeue: noRequeue,
		},
		{
			name: "a day no month has", cj: newCronJob("59 23 31 2 *", topOfHour.Add(-time.Hour)), now: topOfHour,
			wantEvents: []string{"Warning InvalidSchedule"}, wantRequeue: noRequeue,
		},
		{
			name: "TZ in a schedule stored before validation refused it",
			cj:   newCronJob("TZ=Asia/Tokyo 0 9 * * *", tokyo.Add(-time.Hour)), now: tokyo.Add(time.Second),
			wantJob: tokyo, wantEvents: []string{"Warning UnsupportedSchedule", "Normal SuccessfulCreate"},
			wantActive: []string{jobName(prev, tokyo)}, wantRequeue: 24*time.Hour - time.Second + nextScheduleDelta,
		},
		{
			name: "completed active job: lastSuccessfulTime",
			cj:   active(with(hourly(), lastScheduled(topOfHour.Add(-time.Hour))), prevJob),
			jobs: []*batchv1.Job{newJob(prev, topOfHour.Add(-time.Hour), batchv1.JobComplete)}, now: topOfHour.Add(-time.Minute),
			wantEvents: []string{"Normal SawCompletedJob"}, wantActive: []string{}, wantRequeue: time.Minute + nextScheduleDelta,
		},
		{
			name: "unexpected job", cj: with(hourly(), lastScheduled(topOfHour.Add(-time.Hour))),
			jobs: []*batchv1.Job{prevJob}, now: topOfHour.Add(-time.Minute),
			wantEvents: []string{"Warning UnexpectedJob"}, wantRequeue: time.Minute + nextScheduleDelta,
		},
		{
			name: "active job gone", cj: active(with(hourly(), lastScheduled(topOfHour.Add(-time.Hour))), prevJob),
			now: topOfHour.Add(-time.Minute), wantEvents: []string{"Normal MissingJob"}, wantActive: []string{},
			wantRequeue: time.Minute + nextScheduleDelta,
		},
		{
			name: "job of this time exists but the status write was lost", cj: hourly(),
			jobs: []*batchv1.Job{newJob(prev, topOfHour, "")}, now: topOfHour.Add(time.Second),
			// The job is seen before the create: UnexpectedJob, then the
			// create finds it and lists it.
			wantEvents: []string{"Warning UnexpectedJob"},
			wantActive: []string{jobName(prev, topOfHour)}, wantRequeue: time.Hour - time.Second + nextScheduleDelta,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := []runtime.Object{tc.cj}
			for _, j := range tc.jobs {
				objs = append(objs, j)
			}
			f := newFixture(t, tc.now, objs...)
			err := f.sync(tc.cj)
			if (err != nil) != tc.wantErr {
				t.Fatalf("sync error = %v, want error %v", err, tc.wantErr)
			}
			job := f.created()
			switch {
			case tc.wantJob.IsZero() && job != nil && !slices.Contains(tc.wantActive, job.Name):
				t.Errorf("created job %s, want none (actions %v)", job.Name, f.actions())
			case !tc.wantJob.IsZero() && job == nil:
				t.Errorf("no job created, want one for %v (actions %v)", tc.wantJob, f.actions())
			case !tc.wantJob.IsZero():
				checkJob(t, tc.cj, job, tc.wantJob)
			}
			if got := f.deleted(); !slices.Equal(got, tc.wantDeleted) {
				t.Errorf("deleted %v, want %v", got, tc.wantDeleted)
			}
			if got := f.events(); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events %v, want %v", got, tc.wantEvents)
			}
			st := f.writtenStatus()
			switch {
			case tc.wantActive == nil && st != nil:
				t.Errorf("status written %+v, want none", st)
			case tc.wantActive != nil && st == nil:
				t.Errorf("no status written, want active %v (actions %v)", tc.wantActive, f.actions())
			case st != nil:
				var names []string
				for _, r := range st.Active {
					names = append(names, r.Name)
				}
				if !slices.Equal(names, tc.wantActive) && (len(names) != 0 || len(tc.wantActive) != 0) {
					t.Errorf("status.active %v, want %v", names, tc.wantActive)
				}
				if !tc.wantJob.IsZero() && (st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(tc.wantJob)) {
					t.Errorf("lastScheduleTime %v, want %v", st.LastScheduleTime, tc.wantJob)
				}
			}
			d, ok := f.queue.requeue("default/cj")
			switch {
			case tc.wantRequeue == noRequeue && ok:
				t.Errorf("requeued after %v, want no requeue", d)
			case tc.wantRequeue != noRequeue && !ok:
				t.Errorf("not requeued, want after %v", tc.wantRequeue)
			case ok && d != tc.wantRequeue:
				t.Errorf("requeued after %v, want %v", d, tc.wantRequeue)
			}
		})
	}
}

// checkJob checks a created Job's name, namespace, annotation, owner,
// labels and spec.
func checkJob(t *testing.T, cj *batchv1.CronJob, job *batchv1.Job, scheduled time.Time) {
	t.Helper()
	if want := fmt.Sprintf("cj-%d", scheduled.Unix()/60); job.Name != want {
		t.Errorf("job name %s, want %s", job.Name, want)
	}
	loc := time.UTC
	if cj.Spec.TimeZone != nil {
		loc, _ = time.LoadLocation(*cj.Spec.TimeZone)
	}
	if got, want := job.Annotations[batchv1.CronJobScheduledTimestampAnnotation], scheduled.In(loc).Format(time.RFC3339); got != want {
		t.Errorf("scheduled-timestamp annotation %q, want %q", got, want)
	}
	if job.Annotations["note"] != "x" || job.Labels["app"] != "cron" || job.Namespace != "default" {
		t.Errorf("job metadata %+v", job.ObjectMeta)
	}
	ref := metav1.GetControllerOf(job)
	if ref == nil || ref.Kind != "CronJob" || ref.APIVersion != "batch/v1" || ref.Name != cj.Name || ref.UID != cj.UID ||
		ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("job controller ref %+v", ref)
	}
	if job.Spec.Template.Spec.Containers[0].Image != "busybox" {
		t.Errorf("job spec %+v", job.Spec)
	}
}

func TestSyncTimeZoneAnnotation(t *testing.T) {
	// Midnight UTC is 09:00 in Tokyo: the annotation carries the zone.
	tokyo := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	cj := newCronJob("0 9 * * *", tokyo.Add(-time.Hour))
	cj.Spec.TimeZone = ptr.To("Asia/Tokyo")
	f := newFixture(t, tokyo.Add(time.Second), cj)
	if err := f.sync(cj); err != nil {
		t.Fatal(err)
	}
	job := f.created()
	if job == nil {
		t.Fatalf("no job; actions %v", f.actions())
	}
	if got := job.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != "2026-11-26T09:00:00+09:00" {
		t.Errorf("annotation %q", got)
	}
}

func TestHistoryLimits(t *testing.T) {
	cj := newCronJob("0 * * * *", topOfHour.Add(-24*time.Hour))
	cj.Status.LastScheduleTime = ptr.To(metav1.NewTime(topOfHour))
	var objs []runtime.Object
	var succeeded, failed []string
	// Succeeded at hours -1..-6 (newest first), failed at -7..-9, one
	// running at -10.
	for h := 1; h <= 10; h++ {
		cond := batchv1.JobComplete
		switch {
		case h == 10:
			cond = ""
		case h > 6:
			cond = batchv1.JobFailed
		}
		j := newJob(cj, topOfHour.Add(-time.Duration(h)*time.Hour), cond)
		objs = append(objs, j)
		switch cond {
		case batchv1.JobComplete:
			succeeded = append(succeeded, j.Name)
		case batchv1.JobFailed:
			failed = append(failed, j.Name)
		}
	}
	running := objs[9].(*batchv1.Job)
	active(cj, running)
	tests := []struct {
		name                    string
		successLimit, failLimit *int32
		wantDeleted             []string
	}{
		{name: "defaults 3 and 1", successLimit: ptr.To[int32](3), failLimit: ptr.To[int32](1),
			// Oldest first.
			wantDeleted: []string{succeeded[5], succeeded[4], succeeded[3], failed[2], failed[1]}},
		{name: "zero keeps none", successLimit: ptr.To[int32](0), failLimit: ptr.To[int32](0),
			wantDeleted: []string{succeeded[5], succeeded[4], succeeded[3], succeeded[2], succeeded[1], succeeded[0], failed[2], failed[1], failed[0]}},
		{name: "only a failed limit", failLimit: ptr.To[int32](2), wantDeleted: []string{failed[2]}},
		{name: "no limits", wantDeleted: nil},
		{name: "limits above the counts", successLimit: ptr.To[int32](10), failLimit: ptr.To[int32](10), wantDeleted: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cj.DeepCopy()
			c.Spec.SuccessfulJobsHistoryLimit, c.Spec.FailedJobsHistoryLimit = tc.successLimit, tc.failLimit
			f := newFixture(t, topOfHour.Add(time.Minute), append([]runtime.Object{c}, objs...)...)
			if err := f.sync(c); err != nil {
				t.Fatal(err)
			}
			if got := f.deleted(); !slices.Equal(got, tc.wantDeleted) {
				t.Errorf("deleted %v, want %v", got, tc.wantDeleted)
			}
			var deletes int
			for _, e := range f.events() {
				if e == "Normal SuccessfulDelete" {
					deletes++
				}
			}
			if deletes != len(tc.wantDeleted) {
				t.Errorf("%d SuccessfulDelete events, want %d", deletes, len(tc.wantDeleted))
			}
			if f.created() != nil {
				t.Errorf("created a job: %v", f.actions())
			}
			// The running job is never a candidate and stays active.
			if st := f.writtenStatus(); st != nil && (len(st.Active) != 1 || st.Active[0].Name != running.Name) {
				t.Errorf("status.active %v", st.Active)
			}
		})
	}
}

func TestLastSuccessfulTimeIsTheLatest(t *testing.T) {
	cj := newCronJob("0 * * * *", topOfHour.Add(-24*time.Hour))
	cj.Status.LastScheduleTime = ptr.To(metav1.NewTime(topOfHour))
	older := newJob(cj, topOfHour.Add(-2*time.Hour), batchv1.JobComplete)
	newer := newJob(cj, topOfHour.Add(-time.Hour), batchv1.JobComplete)
	f := newFixture(t, topOfHour.Add(time.Minute), cj, newer, older)
	if err := f.sync(cj); err != nil {
		t.Fatal(err)
	}
	st := f.writtenStatus()
	if st == nil || st.LastSuccessfulTime == nil || !st.LastSuccessfulTime.Equal(newer.Status.CompletionTime) {
		t.Fatalf("status %+v, want lastSuccessfulTime %v", st, newer.Status.CompletionTime)
	}
	// Known already: no write.
	cj.Status.LastSuccessfulTime = newer.Status.CompletionTime.DeepCopy()
	f = newFixture(t, topOfHour.Add(time.Minute), cj, newer, older)
	if err := f.sync(cj); err != nil {
		t.Fatal(err)
	}
	if st := f.writtenStatus(); st != nil {
		t.Errorf("status written again: %+v", st)
	}
}

// An unfinished Job missing from the cached status.active but listed by
// the API server's copy is not unexpected: the cache is behind.
func TestStaleCacheIsNotUnexpected(t *testing.T) {
	cached := newCronJob("0 * * * *", topOfHour.Add(-2*time.Hour))
	cached.Status.LastScheduleTime = ptr.To(metav1.NewTime(topOfHour.Add(-time.Hour)))
	job := newJob(cached, topOfHour.Add(-time.Hour), "")
	stored := active(cached.DeepCopy(), job)
	stored.ResourceVersion = "2"
	f := newFixture(t, topOfHour.Add(-time.Minute), stored, job)
	_ = f.cjIdx.Update(cached)
	if err := f.sync(cached); err != nil {
		t.Fatal(err)
	}
	if evs := f.events(); len(evs) != 0 {
		t.Errorf("events %v, want none", evs)
	}
	if st := f.writtenStatus(); st != nil {
		t.Errorf("status written %+v", st)
	}
}

func TestCreateFailure(t *testing.T) {
	cj := newCronJob("0 * * * *", topOfHour.Add(-time.Hour))
	f := newFixture(t, topOfHour.Add(time.Second), cj)
	f.client.PrependReactor("create", "jobs", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, fmt.Errorf("quota exceeded")
	})
	if err := f.sync(cj); err == nil {
		t.Fatal("sync succeeded, want the create error for a retry")
	}
	if evs := f.events(); !slices.Equal(evs, []string{"Warning FailedCreate"}) {
		t.Errorf("events %v", evs)
	}
	if st := f.writtenStatus(); st != nil {
		t.Errorf("status written %+v", st)
	}
	if _, ok := f.queue.requeue("default/cj"); ok {
		t.Error("requeued for the next time instead of retried with back-off")
	}
}

// A bad CronJob gets its event and the others keep being served.
func TestBadCronJobDoesNotStopOthers(t *testing.T) {
	bad := newCronJob("not a schedule", topOfHour.Add(-time.Hour))
	bad.Name, bad.UID = "bad", "bad-uid"
	good := newCronJob("0 * * * *", topOfHour.Add(-time.Hour))
	f := newFixture(t, topOfHour.Add(time.Second), bad, good)
	if err := f.sync(bad); err != nil {
		t.Fatalf("sync of the bad CronJob: %v (want an event, not a retry)", err)
	}
	if evs := f.events(); !slices.Equal(evs, []string{"Warning UnparseableSchedule"}) {
		t.Errorf("events %v", evs)
	}
	if err := f.sync(good); err != nil {
		t.Fatal(err)
	}
	if f.created() == nil {
		t.Errorf("good CronJob got no job: %v", f.actions())
	}
}

func TestUpdateCronJobRequeue(t *testing.T) {
	old := newCronJob("0 * * * *", topOfHour.Add(-time.Hour))
	tests := []struct {
		name       string
		mod        func(*batchv1.CronJob)
		wantAfter  time.Duration
		wantNow    bool
		wantEvents []string
	}{
		{name: "schedule changed", mod: func(cj *batchv1.CronJob) { cj.Spec.Schedule = "*/15 * * * *" },
			wantAfter: 5*time.Minute + nextScheduleDelta},
		{name: "time zone changed", mod: func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Asia/Kolkata") },
			// 10:10 UTC is 15:40 in Kolkata: the next full hour there is 20 minutes away.
			wantAfter: 20*time.Minute + nextScheduleDelta},
		{name: "bad schedule", mod: func(cj *batchv1.CronJob) { cj.Spec.Schedule = "* *" },
			wantEvents: []string{"Warning UnParseableCronJobSchedule"}},
		{name: "other change", mod: func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }, wantNow: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cur := old.DeepCopy()
			cur.Status.LastScheduleTime = ptr.To(metav1.NewTime(topOfHour))
			o := cur.DeepCopy()
			tc.mod(cur)
			f := newFixture(t, topOfHour.Add(10*time.Minute))
			f.c.updateCronJob(o, cur)
			d, ok := f.queue.requeue("default/cj")
			switch {
			case tc.wantAfter != 0 && (!ok || d != tc.wantAfter):
				t.Errorf("requeue after %v (%v), want %v", d, ok, tc.wantAfter)
			case tc.wantAfter == 0 && ok:
				t.Errorf("requeued after %v", d)
			}
			if got := f.queue.Len() == 1; got != tc.wantNow {
				t.Errorf("queued now = %v, want %v", got, tc.wantNow)
			}
			if evs := f.events(); !slices.Equal(evs, tc.wantEvents) {
				t.Errorf("events %v, want %v", evs, tc.wantEvents)
			}
		})
	}
}

func TestJobEventsEnqueueTheirCronJob(t *testing.T) {
	cj := newCronJob("0 * * * *", topOfHour.Add(-time.Hour))
	job := newJob(cj, topOfHour, "")
	stranger := job.DeepCopy()
	stranger.OwnerReferences[0].UID = "someone-else"
	f := newFixture(t, topOfHour, cj)
	f.c.addJob(stranger)
	if n := f.queue.Len(); n != 0 {
		t.Fatalf("a job of another UID queued %d keys", n)
	}
	f.c.addJob(job)
	if n := f.queue.Len(); n != 1 {
		t.Fatalf("queue length %d after the job's add, want 1", n)
	}
	key, _ := f.queue.Get()
	f.queue.Done(key)
	if key != "default/cj" {
		t.Errorf("queued %q", key)
	}
	done := job.DeepCopy()
	done.ResourceVersion = "2"
	f.c.updateJob(job, done)
	f.c.deleteJob(cache.DeletedFinalStateUnknown{Key: "default/" + job.Name, Obj: done})
	if n := f.queue.Len(); n != 1 {
		t.Errorf("queue length %d after update and delete, want 1 (one key)", n)
	}
}

// The API server stamps the Job's creation: the delay after its schedule
// time goes to cronjob_controller_job_creation_skew_duration_seconds.
func TestCreationSkewMetric(t *testing.T) {
	cj := newCronJob("0 * * * *", topOfHour.Add(-time.Hour))
	client := fake.NewSimpleClientset(cj)
	client.PrependReactor("create", "jobs", func(action core.Action) (bool, runtime.Object, error) {
		action.(core.CreateAction).GetObject().(*batchv1.Job).CreationTimestamp = metav1.NewTime(topOfHour.Add(5 * time.Second))
		return false, nil, nil
	})
	reg := prometheus.NewRegistry()
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := NewController(client, factory.Batch().V1().CronJobs(), factory.Batch().V1().Jobs(), record.NewFakeRecorder(10),
		metrics.New(reg), Options{Clock: clocktesting.NewFakeClock(topOfHour.Add(5 * time.Second))})
	if err != nil {
		t.Fatal(err)
	}
	_ = factory.Batch().V1().CronJobs().Informer().GetIndexer().Add(cj)
	if err := c.sync(context.Background(), "default/cj"); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "cronjob_controller_job_creation_skew_duration_seconds" {
			h := f.GetMetric()[0].GetHistogram()
			if h.GetSampleCount() != 1 || h.GetSampleSum() != 5 {
				t.Errorf("skew histogram: %d samples, sum %v; want 1, 5", h.GetSampleCount(), h.GetSampleSum())
			}
			return
		}
	}
	t.Error("no cronjob_controller_job_creation_skew_duration_seconds")
}
