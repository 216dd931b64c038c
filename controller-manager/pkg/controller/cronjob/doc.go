// Package cronjob is the CronJob controller: it creates a Job from each
// CronJob's jobTemplate at the times its schedule names, as upstream's
// pkg/controller/cronjob (the "v2" controller) does.
//
// Walkthrough: informer events on CronJobs and Jobs put CronJob keys on a
// rate-limited work queue. A sync reads the CronJob from the cache and the
// Jobs it controls through the controller-UID index, then:
//
//   - deletes the oldest finished Jobs beyond successfulJobsHistoryLimit and
//     failedJobsHistoryLimit (SuccessfulDelete);
//   - reconciles status.active with the Jobs: a finished Job leaves it
//     (SawCompletedJob), an unfinished Job it does not list is reported
//     (UnexpectedJob), a listed Job that no longer exists leaves it
//     (MissingJob); the latest completion becomes lastSuccessfulTime;
//   - unless the CronJob is being deleted, suspended, or has a time zone,
//     schedule or calendar that cannot be used (UnknownTimeZone,
//     UnparseableSchedule, InvalidSchedule), takes the most recent
//     schedule time not yet run (the schedule is read in spec.timeZone,
//     UTC when unset); more than 100 missed times give TooManyMissedTimes;
//     a time older than startingDeadlineSeconds is skipped (MissSchedule);
//     with concurrencyPolicy Forbid an active Job defers it
//     (JobAlreadyActive), with Replace the active Jobs are deleted first;
//   - creates the Job "<cronjob>-<scheduled time in minutes since the
//     epoch>", with the annotation batch.kubernetes.io/cronjob-scheduled-timestamp
//     and a controller ownerReference (SuccessfulCreate), adds it to
//     status.active and sets lastScheduleTime. The name is deterministic so
//     a Job is never created twice for one time;
//   - writes status once if anything changed and requeues the CronJob for
//     100ms after its next schedule time.
//
// Time is read from an injectable clock so tests can move it.
package cronjob
