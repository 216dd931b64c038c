// Package job is the Job controller: it runs each Job's pods to completion,
// as upstream's pkg/controller/job does in v1.32.
//
// Walkthrough: informer events on Jobs and pods put Job keys on a
// rate-limited work queue (pod events after a one-second batch period, so a
// burst of them makes one sync). A sync reads the Job from the cache and
// its pods through the controller-UID index (adopting matching orphans),
// then:
//
//   - counts the pods that finished since the last sync. Every pod the
//     controller creates carries the batch.kubernetes.io/job-tracking
//     finalizer; a finished pod is first recorded in
//     status.uncountedTerminatedPods, then its finalizer is removed, then it
//     moves into status.succeeded or status.failed. Nothing is counted twice
//     or lost when the controller stops between two steps.
//   - decides whether the Job has failed: its pod failure policy (FailJob,
//     Ignore, Count, FailIndex on exit codes or pod conditions), its
//     backoffLimit, activeDeadlineSeconds, and for Indexed Jobs
//     backoffLimitPerIndex and maxFailedIndexes; or has succeeded: its
//     completions, or its successPolicy. The reason is first recorded in a
//     FailureTarget or SuccessCriteriaMet condition; once every pod is
//     counted and none is terminating, the Job gets Failed or Complete with
//     the same reason, and an event.
//   - otherwise creates pods up to parallelism (never more than the
//     completions left) in slow-start batches, after the back-off of recent
//     failures (10s doubled per failure since the last success, at most
//     6m), or deletes the surplus; a suspended Job loses its active pods and
//     gets the Suspended condition. Pods of an Indexed Job get their index in
//     the batch.kubernetes.io/job-completion-index annotation and label, the
//     JOB_COMPLETION_INDEX variable and the hostname <job>-<index>.
//     podReplacementPolicy Failed waits until a terminating pod has failed
//     before replacing it.
//
// Expectations keep a sync from creating or deleting twice what its cache
// does not show yet, and finalizer expectations from counting a pod twice.
// A second queue removes the finalizer of pods whose Job is gone.
package job
