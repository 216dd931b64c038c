package cronjob

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

// sync reconciles the CronJob keyed key: history cleanup, status.active,
// the Job of a due schedule time, one status write, and a requeue for the
// next schedule time.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	cached, err := c.cronJobLister.CronJobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("CronJob not found, it may have been deleted", "cronjob", key)
		return nil
	}
	if err != nil {
		return err
	}
	// Every Job the CronJob controls, including those whose labels no
	// longer match its template.
	jobs, err := controllerutil.ByController[*batchv1.Job](c.jobIndexer, cached.UID)
	if err != nil {
		return err
	}
	// All changes go to one copy, written once.
	cj := cached.DeepCopy()
	cleaned := c.cleanupFinishedJobs(ctx, cj, jobs)
	requeueAfter, changed, syncErr := c.syncCronJob(ctx, cj, jobs)
	if syncErr != nil {
		logger.V(2).Info("Error reconciling cronjob", "cronjob", klog.KObj(cj), "err", syncErr)
	}
	if cleaned || changed {
		if _, err := c.client.BatchV1().CronJobs(cj.Namespace).UpdateStatus(ctx, cj, metav1.UpdateOptions{}); err != nil {
			return errors.Join(syncErr, fmt.Errorf("updating status of CronJob %s: %w", key, err))
		}
	}
	if requeueAfter != nil {
		logger.V(4).Info("Re-queuing cronjob", "cronjob", klog.KObj(cj), "requeueAfter", *requeueAfter)
		c.queue.AddAfter(key, *requeueAfter)
		return nil
	}
	// No requeue: suspended, being deleted, an unusable schedule (until
	// the CronJob changes), or an error to retry with back-off.
	return syncErr
}

// syncCronJob reconciles cj's status with its jobs and creates the Job of
// a due schedule time. It changes cj in place and says whether its status
// changed and when to look at it again (nil: only on a change or error).
func (c *Controller) syncCronJob(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (*time.Duration, bool, error) {
	logger := klog.FromContext(ctx)
	now := c.clock.Now()
	changed := false

	children := make(map[types.UID]bool, len(jobs))
	refetched := false
	for i := 0; i < len(jobs); i++ {
		j := jobs[i]
		children[j.UID] = true
		found := inActiveList(cj, j)
		switch {
		case !found && !isJobFinished(j):
			if !refetched {
				// The cache may not show the status write that listed
				// this Job yet: ask the API server before complaining.
				fresh, err := c.client.BatchV1().CronJobs(cj.Namespace).Get(ctx, cj.Name, metav1.GetOptions{})
				if err != nil {
					return nil, changed, err
				}
				refetched = true
				if inActiveList(fresh, j) {
					// Start again from the fresh object.
					*cj = *fresh
					changed = false
					i = -1
					clear(children)
					continue
				}
			}
			// Created by us before a crash that lost the status write, or
			// by someone who wants it adopted.
			c.recorder.Eventf(cj, corev1.EventTypeWarning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: %s", j.Name)
		case found && isJobFinished(j):
			deleteFromActiveList(cj, j.UID)
			c.recorder.Eventf(cj, corev1.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, finishedCondition(j))
			changed = true
		case isJobSucceeded(j):
			// Whether listed or not, a success counts for
			// lastSuccessfulTime.
			if t := j.Status.CompletionTime; t != nil &&
				(cj.Status.LastSuccessfulTime == nil || t.After(cj.Status.LastSuccessfulTime.Time)) {
				cj.Status.LastSuccessfulTime = t.DeepCopy()
				changed = true
			}
		}
	}

	// A listed Job that is gone would keep the CronJob active for ever.
	for _, ref := range append([]corev1.ObjectReference(nil), cj.Status.Active...) {
		if children[ref.UID] {
			continue
		}
		// The cache may be behind: only the API server can say it is gone.
		_, err := c.client.BatchV1().Jobs(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			c.recorder.Eventf(cj, corev1.EventTypeNormal, "MissingJob", "Active job went missing: %v", ref.Name)
			deleteFromActiveList(cj, ref.UID)
			changed = true
		case err != nil:
			return nil, changed, err
		}
	}

	if cj.DeletionTimestamp != nil {
		// Being deleted: only the status is kept up to date.
		return nil, changed, nil
	}
	if tz := cj.Spec.TimeZone; tz != nil {
		if _, err := time.LoadLocation(*tz); err != nil {
			logger.V(4).Info("Not starting job because timeZone is invalid", "cronjob", klog.KObj(cj), "timeZone", *tz, "err", err)
			c.recorder.Eventf(cj, corev1.EventTypeWarning, "UnknownTimeZone", "invalid timeZone: %q: %s", *tz, err)
			return nil, changed, nil
		}
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		logger.V(4).Info("Not starting job because the cron is suspended", "cronjob", klog.KObj(cj))
		return nil, changed, nil
	}
	sched, err := cron.ParseStandard(formatSchedule(cj, c.recorder))
	if err != nil {
		// A user error: nothing to do until the spec changes.
		logger.V(2).Info("Unparseable schedule", "cronjob", klog.KObj(cj), "schedule", cj.Spec.Schedule, "err", err)
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "UnparseableSchedule", "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	scheduled, err := nextScheduleTime(logger, cj, now, sched, c.recorder)
	if err != nil {
		logger.V(2).Info("Invalid schedule", "cronjob", klog.KObj(cj), "schedule", cj.Spec.Schedule, "err", err)
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "InvalidSchedule", "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	if scheduled == nil {
		// Nothing due (after a restart, or a requeue that came early).
		logger.V(4).Info("No unmet start times", "cronjob", klog.KObj(cj))
		return ptr.To(nextScheduleTimeDuration(cj, now, sched)), changed, nil
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && scheduled.Add(time.Duration(*d)*time.Second).Before(now) {
		logger.V(4).Info("Missed starting window", "cronjob", klog.KObj(cj))
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return ptr.To(nextScheduleTimeDuration(cj, now, sched)), changed, nil
	}
	if inActiveListByName(cj, jobName(cj, *scheduled)) || cj.Status.LastScheduleTime.Equal(&metav1.Time{Time: *scheduled}) {
		logger.V(4).Info("Not starting job because the scheduled time is already processed", "cronjob", klog.KObj(cj), "schedule", scheduled)
		return ptr.To(nextScheduleTimeDuration(cj, now, sched)), changed, nil
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0 {
		// The time stays unmet: it runs when the active Job finishes, if
		// still within the starting deadline.
		logger.V(4).Info("Not starting job because prior execution is still running and concurrency policy is Forbid", "cronjob", klog.KObj(cj))
		c.recorder.Eventf(cj, corev1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
		return ptr.To(nextScheduleTimeDuration(cj, now, sched)), changed, nil
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent {
		for _, ref := range append([]corev1.ObjectReference(nil), cj.Status.Active...) {
			logger.V(4).Info("Deleting job that was still running at next scheduled start time", "job", klog.KRef(ref.Namespace, ref.Name))
			job, err := c.client.BatchV1().Jobs(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				c.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedGet", "Get job: %v", err)
				return nil, changed, err
			}
			if !c.reapJob(ctx, cj, job) {
				return nil, changed, fmt.Errorf("could not replace job %s/%s", job.Namespace, job.Name)
			}
			changed = true
		}
	}

	req, err := jobFromTemplate(cj, *scheduled)
	if err != nil {
		logger.Error(err, "Unable to make Job from template", "cronjob", klog.KObj(cj))
		return nil, changed, err
	}
	job, err := c.client.BatchV1().Jobs(cj.Namespace).Create(ctx, req, metav1.CreateOptions{})
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// Every create fails while the namespace goes away.
		return nil, changed, err
	case apierrors.IsAlreadyExists(err):
		// Created before, by us (and the status write was lost) or by
		// someone else (who then keeps the status).
		existing, err := c.client.BatchV1().Jobs(req.Namespace).Get(ctx, req.Name, metav1.GetOptions{})
		if err != nil {
			return nil, changed, err
		}
		if !metav1.IsControlledBy(existing, cj) || inActiveList(cj, existing) {
			return nil, changed, nil
		}
		logger.Info("Job already exists", "cronjob", klog.KObj(cj), "job", klog.KObj(existing))
		job = existing
	case err != nil:
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		return nil, changed, err
	default:
		c.metrics.ObserveCronJobCreationSkew(job.CreationTimestamp.Sub(*scheduled))
		logger.V(4).Info("Created Job", "job", klog.KObj(job), "cronjob", klog.KObj(cj))
		c.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulCreate", "Created job %v", job.Name)
	}
	// Had the controller stopped between the create and this status
	// write, the Job's name, one per schedule time, keeps it from being
	// made twice.
	cj.Status.Active = append(cj.Status.Active, jobRef(job))
	cj.Status.LastScheduleTime = &metav1.Time{Time: *scheduled}
	return ptr.To(nextScheduleTimeDuration(cj, now, sched)), true, nil
}

// cleanupFinishedJobs deletes the oldest finished Jobs beyond the history
// limits and says whether cj's status changed.
func (c *Controller) cleanupFinishedJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) bool {
	if cj.Spec.SuccessfulJobsHistoryLimit == nil && cj.Spec.FailedJobsHistoryLimit == nil {
		return false
	}
	var succeeded, failed []*batchv1.Job
	for _, j := range jobs {
		switch finishedCondition(j) {
		case batchv1.JobComplete:
			succeeded = append(succeeded, j)
		case batchv1.JobFailed:
			failed = append(failed, j)
		}
	}
	changed := false
	if l := cj.Spec.SuccessfulJobsHistoryLimit; l != nil && c.removeOldestJobs(ctx, cj, succeeded, *l) {
		changed = true
	}
	if l := cj.Spec.FailedJobsHistoryLimit; l != nil && c.removeOldestJobs(ctx, cj, failed, *l) {
		changed = true
	}
	return changed
}

// removeOldestJobs deletes the jobs that started first beyond limit.
func (c *Controller) removeOldestJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job, limit int32) bool {
	n := len(jobs) - int(limit)
	if n <= 0 {
		return false
	}
	klog.FromContext(ctx).V(4).Info("Cleaning up jobs from CronJob list", "deletejobnum", n, "jobnum", len(jobs), "cronjob", klog.KObj(cj))
	sorted := append([]*batchv1.Job(nil), jobs...)
	sort.Sort(byJobStartTime(sorted))
	changed := false
	for _, j := range sorted[:n] {
		if c.reapJob(ctx, cj, j) {
			changed = true
		}
	}
	return changed
}

// reapJob deletes job (its pods follow through the garbage collector)
// and drops it from cj's active list.
func (c *Controller) reapJob(ctx context.Context, cj *batchv1.CronJob, job *batchv1.Job) bool {
	err := c.client.BatchV1().Jobs(job.Namespace).Delete(ctx, job.Name,
		metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if err != nil {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
		klog.FromContext(ctx).Error(err, "Error deleting job from cronjob", "job", klog.KObj(job), "cronjob", klog.KObj(cj))
		return false
	}
	deleteFromActiveList(cj, job.UID)
	c.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", job.Name)
	return true
}
