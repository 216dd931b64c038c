package job

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

// jobCtx is what one sync learns and decides about a job.
type jobCtx struct {
	job        *batchv1.Job
	pods       []*corev1.Pod
	activePods []*corev1.Pod
	ready      int32
	// terminating counts the pods being deleted that have not finished.
	terminating int32
	// succeeded and failed count the job's finished pods: counted in
	// status, uncounted in status and newly seen.
	succeeded, failed    int32
	uncountedSucceeded   map[types.UID]bool
	uncountedFailed      map[types.UID]bool
	expectedRmFinalizers map[types.UID]bool
	backoff              backoffRecord
	// finishedCondition, when set, is the condition the job finishes
	// with once its pods are all counted.
	finishedCondition    *batchv1.JobCondition
	prevSucceededIndexes intervals
	succeededIndexes     intervals
	// failedIndexes and delayedDeletion are only kept for jobs with
	// backoffLimitPerIndex: the failed indexes, and per index the last
	// failed pod whose finalizer stays until its replacement exists.
	failedIndexes   intervals
	delayedDeletion map[int]*corev1.Pod
}

// sync brings the Job keyed key to its desired state.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	cached, err := c.jobLister.Jobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Job has been deleted", "job", key)
		c.expectations.Delete(key)
		c.finalizerExpectations.delete(key)
		c.backoff.remove(key)
		c.statusWrites.delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	if !c.statusWrites.seen(key, cached.ResourceVersion) {
		// The Job's update event syncs it again once the cache has it.
		logger.V(4).Info("Deferring the sync: the cache has not seen the last status write", "job", key)
		return nil
	}
	if !managedByUs(cached) {
		logger.V(4).Info("Skipping a Job managed by another controller", "job", key, "managedBy", *cached.Spec.ManagedBy)
		return nil
	}
	if isJobFinished(cached) {
		c.backoff.remove(key)
		return nil
	}
	job := cached.DeepCopy()
	if msg := invalidSpec(job); msg != "" {
		// The API server's validation should have refused it; retrying
		// would not help.
		c.recorder.Event(job, corev1.EventTypeWarning, "InvalidJob", msg)
		return nil
	}
	if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode != batchv1.NonIndexedCompletion && *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		c.recorder.Event(job, corev1.EventTypeWarning, "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil || selector.Empty() {
		c.recorder.Eventf(job, corev1.EventTypeWarning, "InvalidSelector", "Cannot select the Job's pods: selector %v", job.Spec.Selector)
		return nil
	}
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	// Read the expectations before the pods, or a pod created meanwhile
	// could be missed by both.
	satisfied := c.expectations.Satisfied(key)
	// The same holds for the finalizers being removed: the event of a
	// removal deletes its expectation after the cache has the pod without
	// the finalizer. Read after the pods, an expectation could be gone
	// while the pods listed still showed the finalizer, and a pod already
	// counted (the job's status, which the cache has, includes it) would
	// be counted again: too many successes, running pods deleted, the job
	// complete too early. (Upstream v1.32 reads them after the pods.)
	expectedRmFinalizers := c.finalizerExpectations.expected(key)
	pods, err := c.podsForJob(ctx, job, selector)
	if err != nil {
		return err
	}
	jc := &jobCtx{
		job:                  job,
		pods:                 pods,
		activePods:           controllerutil.FilterActivePods(pods),
		uncountedSucceeded:   uidSet(job.Status.UncountedTerminatedPods.Succeeded),
		uncountedFailed:      uidSet(job.Status.UncountedTerminatedPods.Failed),
		expectedRmFinalizers: expectedRmFinalizers,
	}
	for _, p := range jc.activePods {
		if controllerutil.IsPodReady(p) {
			jc.ready++
		}
	}
	for _, p := range pods {
		if isPodTerminating(p) {
			jc.terminating++
		}
	}
	active := int32(len(jc.activePods))
	newSucceeded, newFailed := newFinishedPods(jc)
	jc.succeeded = job.Status.Succeeded + int32(len(newSucceeded)) + int32(len(jc.uncountedSucceeded))
	jc.failed = job.Status.Failed + int32(countedFailures(job, newFailed)) + int32(len(jc.uncountedFailed))
	if job.Status.StartTime == nil && !isSuspended(job) {
		now := metav1.NewTime(c.clock.Now())
		job.Status.StartTime = &now
	}
	jc.backoff = c.backoff.next(key, newSucceeded, newFailed)

	c.checkFinished(ctx, jc, key)

	var manageErr error
	suspendChanged := false
	if jc.finishedCondition != nil {
		// The job is done (or failed): stop what still runs.
		deletedReady, deleted, err := c.deleteActivePods(ctx, job, jc.activePods)
		if deleted != active || !satisfied {
			// Pods may remain, or exist that the cache does not show yet.
			jc.finishedCondition = nil
		}
		active -= deleted
		jc.terminating += deleted
		jc.ready -= deletedReady
		manageErr = err
	} else {
		manageCalled := false
		if satisfied && job.DeletionTimestamp == nil {
			active, manageErr = c.manageJob(ctx, key, jc)
			manageCalled = true
		}
		var complete bool
		if job.Spec.Completions == nil {
			// A work queue: done when one pod succeeded and none runs.
			complete = jc.succeeded > 0 && active == 0
		} else {
			complete = jc.succeeded >= *job.Spec.Completions && active == 0
		}
		switch {
		case complete:
			jc.finishedCondition = newCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue,
				batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods", c.clock.Now())
		case manageCalled && isSuspended(job):
			var changed bool
			job.Status.Conditions, changed = ensureCondition(job.Status.Conditions, batchv1.JobSuspended, corev1.ConditionTrue,
				"JobSuspended", "Job suspended", c.clock.Now())
			if changed {
				suspendChanged = true
				c.recorder.Event(job, corev1.EventTypeNormal, "Suspended", "Job suspended")
			}
		case manageCalled:
			var changed bool
			job.Status.Conditions, changed = ensureCondition(job.Status.Conditions, batchv1.JobSuspended, corev1.ConditionFalse,
				"JobResumed", "Job resumed", c.clock.Now())
			if changed {
				suspendChanged = true
				c.recorder.Event(job, corev1.EventTypeNormal, "Resumed", "Job resumed")
				// activeDeadlineSeconds counts the time the job is
				// continuously active: a resumed job starts again.
				now := metav1.NewTime(c.clock.Now())
				job.Status.StartTime = &now
			}
		}
	}
	needsUpdate := suspendChanged || active != job.Status.Active || !ptr.Equal(&jc.ready, job.Status.Ready) ||
		!ptr.Equal(&jc.terminating, job.Status.Terminating)
	job.Status.Active = active
	job.Status.Ready = ptr.To(jc.ready)
	job.Status.Terminating = ptr.To(jc.terminating)
	if err := c.trackStatusAndRemoveFinalizers(ctx, key, jc, needsUpdate); err != nil {
		return errors.Join(manageErr, fmt.Errorf("tracking status: %w", err))
	}
	return manageErr
}

// checkFinished decides whether the job has failed or met its success
// criteria (jc.finishedCondition), and computes the indexes of an Indexed
// job.
func (c *Controller) checkFinished(ctx context.Context, jc *jobCtx, key string) {
	logger := klog.FromContext(ctx)
	job := jc.job
	now := c.clock.Now()
	// A job that met its success criteria in an earlier sync no longer
	// looks at failures.
	jc.finishedCondition = findCondition(job.Status.Conditions, batchv1.JobSuccessCriteriaMet)
	if jc.finishedCondition == nil {
		if target := findCondition(job.Status.Conditions, batchv1.JobFailureTarget); target != nil {
			jc.finishedCondition = newCondition(batchv1.JobFailed, corev1.ConditionTrue, target.Reason, target.Message, now)
		} else if msg := failJobMessage(job, jc.pods); msg != nil {
			jc.finishedCondition = newCondition(batchv1.JobFailureTarget, corev1.ConditionTrue, batchv1.JobReasonPodFailurePolicy, *msg, now)
		}
	}
	if jc.finishedCondition == nil {
		switch {
		case jc.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, jc.pods):
			jc.finishedCondition = newCondition(batchv1.JobFailureTarget, corev1.ConditionTrue,
				batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit", now)
		case c.pastActiveDeadline(job):
			jc.finishedCondition = newCondition(batchv1.JobFailureTarget, corev1.ConditionTrue,
				batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline", now)
		case job.Spec.ActiveDeadlineSeconds != nil && !isSuspended(job):
			left := time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second - c.clock.Since(job.Status.StartTime.Time)
			logger.V(2).Info("Job has activeDeadlineSeconds: syncing it again then", "job", key, "nextSyncIn", left)
			c.queue.AddAfter(key, left)
		}
	}
	if !isIndexed(job) {
		return
	}
	jc.prevSucceededIndexes, jc.succeededIndexes = succeededIndexes(logger, job, jc.pods)
	jc.succeeded = int32(jc.succeededIndexes.total())
	if hasBackoffLimitPerIndex(job) {
		jc.failedIndexes = failedIndexes(logger, job, jc.pods)
		if jc.finishedCondition == nil {
			failed := jc.failedIndexes.total()
			switch {
			case job.Spec.MaxFailedIndexes != nil && failed > int(*job.Spec.MaxFailedIndexes):
				jc.finishedCondition = newCondition(batchv1.JobFailureTarget, corev1.ConditionTrue, batchv1.JobReasonMaxFailedIndexesExceeded,
					"Job has exceeded the specified maximal number of failed indexes", now)
			case failed > 0 && failed+jc.succeededIndexes.total() >= int(*job.Spec.Completions):
				jc.finishedCondition = newCondition(batchv1.JobFailureTarget, corev1.ConditionTrue, batchv1.JobReasonFailedIndexes,
					"Job has failed indexes", now)
			}
		}
		jc.delayedDeletion = podsWithDelayedDeletion(logger, jc)
	}
	if jc.finishedCondition == nil {
		if msg, met := matchSuccessPolicy(logger, job.Spec.SuccessPolicy, *job.Spec.Completions, jc.succeededIndexes); met {
			jc.finishedCondition = newCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, batchv1.JobReasonSuccessPolicy, msg, now)
		}
	}
}

// podsForJob returns the pods the job owns (finished ones too) after
// adopting matching orphans, which get the tracking finalizer, and
// releasing the pods that stopped matching, which lose it.
func (c *Controller) podsForJob(ctx context.Context, job *batchv1.Job, selector labels.Selector) ([]*corev1.Pod, error) {
	owned, err := controllerutil.ByController[*corev1.Pod](c.podIndexer, job.UID)
	if err != nil {
		return nil, err
	}
	orphans, err := controllerutil.Orphans[*corev1.Pod](c.podIndexer, job.Namespace)
	if err != nil {
		return nil, err
	}
	if len(orphans) == 0 {
		// The common case: nothing to adopt or release unless a pod
		// stopped matching.
		allMatch := true
		for _, p := range owned {
			if !selector.Matches(labels.Set(p.Labels)) {
				allMatch = false
				break
			}
		}
		if allMatch {
			return owned, nil
		}
	}
	canAdopt := controllerutil.RecheckDeletionTimestamp(job.UID, func(ctx context.Context) (metav1.Object, error) {
		return c.client.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
	})
	m := controllerutil.NewPodRefManager(c.client, job, controllerKind.GroupVersion().String(), controllerKind.Kind, selector, canAdopt)
	claimed, claimErr := m.Claim(ctx, append(owned, orphans...))
	ownedUIDs := make(map[types.UID]bool, len(owned))
	for _, p := range owned {
		ownedUIDs[p.UID] = true
	}
	claimedUIDs := make(map[types.UID]bool, len(claimed))
	for _, p := range claimed {
		claimedUIDs[p.UID] = true
	}
	for _, p := range owned {
		if claimErr == nil && !claimedUIDs[p.UID] && hasTrackingFinalizer(p) {
			// Released: the job no longer counts it. (After a failed
			// release the pod stays the job's and keeps its finalizer.)
			if err := c.removeFinalizer(ctx, p); ignoreNotFound(err) != nil {
				claimErr = errors.Join(claimErr, err)
			}
		}
	}
	for i, p := range claimed {
		if ownedUIDs[p.UID] || hasTrackingFinalizer(p) {
			continue
		}
		// Adopted: track it like the pods the job made.
		if _, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, addFinalizerPatch, metav1.PatchOptions{}); err != nil {
			claimErr = errors.Join(claimErr, err)
			continue
		}
		cp := p.DeepCopy()
		cp.Finalizers = append(cp.Finalizers, batchv1.JobTrackingFinalizer)
		claimed[i] = cp
	}
	return claimed, claimErr
}

// manageJob creates or deletes pods so the job runs as many as it should,
// and returns how many are active after it.
func (c *Controller) manageJob(ctx context.Context, key string, jc *jobCtx) (int32, error) {
	logger := klog.FromContext(ctx)
	job := jc.job
	active := int32(len(jc.activePods))
	if isSuspended(job) {
		logger.V(4).Info("Deleting all active pods in suspended job", "job", klog.KObj(job), "active", active)
		victims := activePodsForRemoval(job, jc.activePods, int(active))
		readyDeleted, deleted, err := c.deleteJobPods(ctx, job, key, victims)
		jc.terminating += deleted
		jc.ready -= readyDeleted
		return active - deleted, err
	}
	var wantActive int32
	parallelism := *job.Spec.Parallelism
	if job.Spec.Completions == nil {
		// Without completions: parallelism pods until one succeeds, then
		// leave what runs alone.
		wantActive = parallelism
		if jc.succeeded > 0 {
			wantActive = active
		}
	} else {
		wantActive = max(0, min(*job.Spec.Completions-jc.succeeded, parallelism))
	}
	victims := activePodsForRemoval(job, jc.activePods, int(max(0, active-wantActive)))
	if hasBackoffLimitPerIndex(job) && jc.failedIndexes != nil {
		// Pods still running an index that failed are not wanted either.
		have := map[types.UID]bool{}
		for _, p := range victims {
			have[p.UID] = true
		}
		for _, p := range jc.activePods {
			if !have[p.UID] && jc.failedIndexes.has(completionIndex(p)) {
				victims = append(victims, p)
			}
		}
	}
	if len(victims) > MaxPodCreateDeletePerSync {
		victims = victims[:MaxPodCreateDeletePerSync]
	}
	if len(victims) > 0 {
		logger.V(4).Info("Too many pods running for job", "job", klog.KObj(job), "deleting", len(victims), "target", wantActive)
		readyDeleted, deleted, err := c.deleteJobPods(ctx, job, key, victims)
		jc.terminating += deleted
		jc.ready -= readyDeleted
		// Deletions and creations never happen in the same sync.
		return active - deleted, err
	}
	var terminating int32
	if onlyReplaceFailedPods(job) {
		// A terminating pod still counts until it has failed.
		terminating = jc.terminating
	}
	diff := wantActive - terminating - active
	if diff <= 0 {
		return active, nil
	}
	if !hasBackoffLimitPerIndex(job) {
		if left := jc.backoff.remainingTime(c.clock); left > 0 {
			logger.V(4).Info("Pod failures: waiting before creating pods", "job", klog.KObj(job), "backoff", left)
			c.queue.AddAfter(key, left)
			return active, nil
		}
	}
	diff = min(diff, MaxPodCreateDeletePerSync)
	var indexes []int
	if isIndexed(job) {
		indexes = firstPendingIndexes(jc, int(diff), int(*job.Spec.Completions))
		if hasBackoffLimitPerIndex(job) {
			var left time.Duration
			if indexes, left = c.indexesToCreateNow(logger, indexes, jc.delayedDeletion); left > 0 {
				c.queue.AddAfter(key, left)
				return active, nil
			}
		}
		diff = int32(len(indexes))
	}
	if diff == 0 {
		return active, nil
	}
	logger.V(4).Info("Too few pods running", "job", klog.KObj(job), "need", wantActive, "creating", diff)
	created, err := c.createPods(ctx, key, jc, int(diff), indexes)
	return active + int32(created), err
}

// createPods creates n pods (of indexes, when the job is Indexed) in
// slow-start batches and returns how many were created.
func (c *Controller) createPods(ctx context.Context, key string, jc *jobCtx, n int, indexes []int) (int, error) {
	logger := klog.FromContext(ctx)
	job := jc.job
	template := job.Spec.Template.DeepCopy()
	if isIndexed(job) {
		addCompletionIndexEnvVariables(template)
	}
	if !slices.Contains(template.Finalizers, batchv1.JobTrackingFinalizer) {
		template.Finalizers = append(template.Finalizers, batchv1.JobTrackingFinalizer)
	}
	ref := controllerutil.NewControllerRef(job, controllerKind.GroupVersion().String(), controllerKind.Kind)
	// Expect them all before the first create: a pod's add event may come
	// back before the create call returns.
	c.expectations.ExpectCreations(key, n)
	var next atomic.Int64
	created, err := controllerutil.SlowStartBatch(n, controllerutil.SlowStartInitialBatchSize, func() error {
		tmpl, generateName := template, ""
		if indexes != nil {
			ix := indexes[next.Add(1)-1]
			tmpl = template.DeepCopy()
			if tmpl.Annotations == nil {
				tmpl.Annotations = map[string]string{}
			}
			if tmpl.Labels == nil {
				tmpl.Labels = map[string]string{}
			}
			tmpl.Annotations[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(ix)
			tmpl.Labels[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(ix)
			tmpl.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, ix)
			generateName = podGenerateNameWithIndex(job.Name, ix)
			if hasBackoffLimitPerIndex(job) {
				addIndexFailureCountAnnotation(logger, tmpl, job, jc.delayedDeletion[ix])
			}
		}
		err := c.podControl.CreatePodWithGenerateName(ctx, job.Namespace, tmpl, job, ref, generateName)
		if err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			// Every create fails while the namespace goes away.
			return nil
		}
		return err
	})
	if skipped := n - created; skipped > 0 {
		logger.V(2).Info("Slow-start failure: skipping pod creations", "job", klog.KObj(job), "skipped", skipped)
		c.expectations.CreationsSkipped(key, skipped)
	}
	return created, err
}

// completionIndexEnvName is the variable through which a pod of an Indexed
// job reads its index.
const completionIndexEnvName = "JOB_COMPLETION_INDEX"

// addCompletionIndexEnvVariables gives every container JOB_COMPLETION_INDEX
// from the pod's completion-index annotation, unless it sets it itself.
func addCompletionIndexEnvVariables(template *corev1.PodTemplateSpec) {
	for _, list := range [][]corev1.Container{template.Spec.InitContainers, template.Spec.Containers} {
		for i := range list {
			addCompletionIndexEnvVariable(&list[i])
		}
	}
}

func addCompletionIndexEnvVariable(container *corev1.Container) {
	for _, v := range container.Env {
		if v.Name == completionIndexEnvName {
			return
		}
	}
	container.Env = append(container.Env, corev1.EnvVar{
		Name: completionIndexEnvName,
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			FieldPath: fmt.Sprintf("metadata.annotations['%s']", batchv1.JobCompletionIndexAnnotation),
		}},
	})
}

// addIndexFailureCountAnnotation records, on the pod replacing
// podBeingReplaced, how often its index failed (and how often a failure was
// ignored by the pod failure policy).
func addIndexFailureCountAnnotation(logger klog.Logger, template *corev1.PodTemplateSpec, job *batchv1.Job, replaced *corev1.Pod) {
	var failures, ignored int32
	if replaced != nil {
		failures, ignored = indexFailureCount(logger, replaced), indexIgnoredFailureCount(logger, replaced)
		if _, count, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, replaced); count {
			failures++
		} else {
			ignored++
		}
	}
	template.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(failures))
	if ignored > 0 {
		template.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(ignored))
	}
}

// indexesToCreateNow keeps the indexes whose per-index back-off has passed;
// when none has, it returns the shortest time left.
func (c *Controller) indexesToCreateNow(logger klog.Logger, indexes []int, delayed map[int]*corev1.Pod) ([]int, time.Duration) {
	var now []int
	var minLeft time.Duration
	for _, ix := range indexes {
		left := time.Duration(0)
		if last := delayed[ix]; last != nil {
			t := finishedTime(last)
			left = remainingTimeForFailures(c.clock, indexFailureCount(logger, last)+indexIgnoredFailureCount(logger, last)+1, &t)
		}
		if left == 0 {
			now = append(now, ix)
		} else if minLeft == 0 || left < minLeft {
			minLeft = left
		}
	}
	if len(now) > 0 {
		return now, 0
	}
	return nil, minLeft
}

// podsWithDelayedDeletion returns, per index that is neither done, failed
// nor running, its last failed pod: its finalizer stays until a
// replacement carrying its failure count exists.
func podsWithDelayedDeletion(logger klog.Logger, jc *jobCtx) map[int]*corev1.Pod {
	active := indexesOf(jc.activePods)
	out := map[int]*corev1.Pod{}
	for _, p := range jc.pods {
		if !hasTrackingFinalizer(p) || jc.expectedRmFinalizers[p.UID] || !isPodFailed(p, jc.job) || !validIndex(p, *jc.job.Spec.Completions) {
			continue
		}
		ix := completionIndex(p)
		if jc.succeededIndexes.has(ix) || jc.failedIndexes.has(ix) || active[ix] {
			continue
		}
		if last, ok := out[ix]; ok {
			lastCount := indexFailureCount(logger, last) + indexIgnoredFailureCount(logger, last)
			count := indexFailureCount(logger, p) + indexIgnoredFailureCount(logger, p)
			if lastCount > count || finishedTime(p).Before(finishedTime(last)) {
				continue
			}
		}
		out[ix] = p
	}
	return out
}

// activePodsForRemoval picks at least n of pods to delete: for an Indexed
// job first the pods without a valid index and the duplicates of an index,
// then in the order a ReplicaSet scales down.
func activePodsForRemoval(job *batchv1.Job, pods []*corev1.Pod, n int) []*corev1.Pod {
	var rm, keep []*corev1.Pod
	if isIndexed(job) {
		byIndex := map[int][]*corev1.Pod{}
		for _, p := range pods {
			if !validIndex(p, *job.Spec.Completions) {
				rm = append(rm, p)
				continue
			}
			ix := completionIndex(p)
			byIndex[ix] = append(byIndex[ix], p)
		}
		ixs := make([]int, 0, len(byIndex))
		for ix := range byIndex {
			ixs = append(ixs, ix)
		}
		sort.Ints(ixs)
		for _, ix := range ixs {
			same := byIndex[ix]
			sortForDeletion(same)
			// Keep the one to delete last.
			rm = append(rm, same[:len(same)-1]...)
			keep = append(keep, same[len(same)-1])
		}
	} else {
		keep = append(keep, pods...)
	}
	if len(rm) < n {
		sortForDeletion(keep)
		rm = append(rm, keep[:min(len(keep), n-len(rm))]...)
	}
	return rm
}

func sortForDeletion(pods []*corev1.Pod) {
	sort.Sort(controllerutil.ActivePodsWithRanks{Pods: pods, Rank: make([]int, len(pods))})
}

// deleteJobPods deletes pods the job no longer wants (suspended, too many)
// after removing their finalizer: they are not counted as failures.
func (c *Controller) deleteJobPods(ctx context.Context, job *batchv1.Job, key string, pods []*corev1.Pod) (readyDeleted, deleted int32, err error) {
	if len(pods) == 0 {
		return 0, 0, nil
	}
	podKeys := make([]string, len(pods))
	for i, p := range pods {
		podKeys[i] = controllerutil.PodKey(p)
	}
	c.expectations.ExpectDeletions(key, podKeys)
	return c.deletePods(ctx, job, pods, func(ctx context.Context, p *corev1.Pod) error {
		if hasTrackingFinalizer(p) {
			if err := c.removeFinalizer(ctx, p); err != nil {
				c.expectations.DeletionObserved(key, controllerutil.PodKey(p))
				return fmt.Errorf("removing the tracking finalizer: %w", err)
			}
		}
		err := c.podControl.DeletePod(ctx, job.Namespace, p.Name, job)
		if err != nil {
			// This deletion will never be observed.
			c.expectations.DeletionObserved(key, controllerutil.PodKey(p))
		}
		return err
	})
}

// deleteActivePods deletes the pods of a finishing job; their finalizers
// are removed when they are counted.
func (c *Controller) deleteActivePods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) (readyDeleted, deleted int32, err error) {
	return c.deletePods(ctx, job, pods, func(ctx context.Context, p *corev1.Pod) error {
		return c.podControl.DeletePod(ctx, job.Namespace, p.Name, job)
	})
}

// deletePods runs del on every pod in parallel; a pod already gone counts
// as deleted.
func (c *Controller) deletePods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod, del func(context.Context, *corev1.Pod) error) (int32, int32, error) {
	var readyDeleted, deleted atomic.Int32
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := del(ctx, p); err != nil && !apierrors.IsNotFound(err) {
				errs[i] = err
				return
			}
			deleted.Add(1)
			if controllerutil.IsPodReady(p) {
				readyDeleted.Add(1)
			}
		}()
	}
	wg.Wait()
	return readyDeleted.Load(), deleted.Load(), errors.Join(errs...)
}

// trackStatusAndRemoveFinalizers counts the finished pods that still hold
// the tracking finalizer: first into status.uncountedTerminatedPods (written
// before any finalizer goes, so no pod is lost if the controller stops),
// then, once their finalizers are removed, into succeeded and failed. It
// finishes the job when nothing is left to count.
func (c *Controller) trackStatusAndRemoveFinalizers(ctx context.Context, key string, jc *jobCtx, needsFlush bool) error {
	logger := klog.FromContext(ctx)
	job := jc.job
	indexed := isIndexed(job)
	if indexed {
		// Completed indexes are added in order.
		sort.SliceStable(jc.pods, func(i, j int) bool { return completionIndex(jc.pods[i]) < completionIndex(jc.pods[j]) })
	}
	withFinalizer := map[types.UID]bool{}
	for _, p := range jc.pods {
		if hasTrackingFinalizer(p) && !jc.expectedRmFinalizers[p.UID] {
			withFinalizer[p.UID] = true
		}
	}
	if cleanUncounted(&job.Status, withFinalizer) {
		needsFlush = true
	}
	uncounted := job.Status.UncountedTerminatedPods
	var toRemove []*corev1.Pod
	var newSucceededIndexes []int
	reachedMax := false
	finishing := jc.finishedCondition != nil && jc.finishedCondition.Type != batchv1.JobSuccessCriteriaMet
	for _, p := range jc.pods {
		if !hasTrackingFinalizer(p) || jc.expectedRmFinalizers[p.UID] {
			// Counted in an earlier sync.
			continue
		}
		failed := isPodFailed(p, job)
		if !c.canRemoveFinalizer(logger, jc, p, failed) {
			continue
		}
		toRemove = append(toRemove, p)
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !jc.uncountedFailed[p.UID]:
			if indexed {
				// The index is enough to not count a pod twice.
				if ix := completionIndex(p); validIndex(p, *job.Spec.Completions) && !jc.prevSucceededIndexes.has(ix) {
					newSucceededIndexes = append(newSucceededIndexes, ix)
				}
			} else if !jc.uncountedSucceeded[p.UID] {
				needsFlush = true
				uncounted.Succeeded = append(uncounted.Succeeded, p.UID)
			}
		case failed || finishing:
			// Once the job has failed, every pod that did not succeed
			// counts as failed.
			if jc.uncountedFailed[p.UID] || (indexed && !validIndex(p, *job.Spec.Completions)) {
				break
			}
			if _, count, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); count {
				needsFlush = true
				uncounted.Failed = append(uncounted.Failed, p.UID)
			}
		}
		if len(newSucceededIndexes)+len(uncounted.Succeeded)+len(uncounted.Failed) >= MaxUncountedPods {
			// Keep the status small and give other jobs their turn: the
			// status update brings this job back.
			reachedMax = true
			break
		}
	}
	if indexed {
		jc.succeededIndexes = jc.succeededIndexes.with(newSucceededIndexes...)
		if s := jc.succeededIndexes.String(); s != job.Status.CompletedIndexes {
			job.Status.CompletedIndexes = s
			needsFlush = true
		}
		job.Status.Succeeded = int32(jc.succeededIndexes.total())
		var failedStr *string
		if hasBackoffLimitPerIndex(job) {
			failedStr = ptr.To(jc.failedIndexes.String())
		}
		if !ptr.Equal(job.Status.FailedIndexes, failedStr) {
			job.Status.FailedIndexes = failedStr
			needsFlush = true
		}
	}
	if fc := jc.finishedCondition; fc != nil {
		switch fc.Type {
		case batchv1.JobFailureTarget:
			// Record why the job fails before its pods are released; it
			// becomes Failed once they are counted.
			job.Status.Conditions = append(job.Status.Conditions, *fc)
			needsFlush = true
			jc.finishedCondition = newCondition(batchv1.JobFailed, corev1.ConditionTrue, fc.Reason, fc.Message, c.clock.Now())
		case batchv1.JobSuccessCriteriaMet:
			if findCondition(job.Status.Conditions, batchv1.JobSuccessCriteriaMet) == nil {
				job.Status.Conditions = append(job.Status.Conditions, *fc)
				needsFlush = true
			}
			jc.finishedCondition = newCondition(batchv1.JobComplete, corev1.ConditionTrue, fc.Reason, fc.Message, c.clock.Now())
		}
	}
	var err error
	if needsFlush, err = c.flushUncountedAndRemoveFinalizers(ctx, key, jc, toRemove, withFinalizer, needsFlush); err != nil {
		return err
	}
	finished := !reachedMax && c.enactJobFinished(logger, jc)
	if finished {
		needsFlush = true
	}
	if !needsFlush {
		return nil
	}
	updated, err := c.updateStatus(ctx, jc.job)
	if err != nil {
		return fmt.Errorf("removing uncounted pods from status: %w", err)
	}
	jc.job = updated
	if finished {
		c.recordFinished(jc.job, jc.finishedCondition)
	}
	return nil
}

// flushUncountedAndRemoveFinalizers writes the status when needed, then
// removes the finalizers of toRemove and moves the pods whose finalizer is
// gone from the uncounted lists to the counters. It reports whether the
// status needs another write.
func (c *Controller) flushUncountedAndRemoveFinalizers(ctx context.Context, key string, jc *jobCtx, toRemove []*corev1.Pod,
	withFinalizer map[types.UID]bool, needsFlush bool) (bool, error) {
	if needsFlush {
		updated, err := c.updateStatus(ctx, jc.job)
		if err != nil {
			return needsFlush, fmt.Errorf("adding uncounted pods to status: %w", err)
		}
		jc.job = updated
		c.backoff.set(key, jc.backoff)
		needsFlush = false
	}
	removed, rmErr := c.removeTrackingFinalizers(ctx, key, toRemove)
	for i, p := range toRemove {
		if removed[i] {
			delete(withFinalizer, p.UID)
		}
	}
	if cleanUncounted(&jc.job.Status, withFinalizer) {
		needsFlush = true
	}
	if rmErr != nil && needsFlush {
		updated, err := c.updateStatus(ctx, jc.job)
		if err != nil {
			return needsFlush, fmt.Errorf("removing uncounted pods from status: %w", err)
		}
		jc.job = updated
	}
	return needsFlush, rmErr
}

// removeTrackingFinalizers patches the finalizer off pods in parallel and
// reports which succeeded (a pod already gone counts).
func (c *Controller) removeTrackingFinalizers(ctx context.Context, key string, pods []*corev1.Pod) ([]bool, error) {
	removed := make([]bool, len(pods))
	if len(pods) == 0 {
		return removed, nil
	}
	uids := make([]types.UID, len(pods))
	for i, p := range pods {
		uids[i] = p.UID
	}
	c.finalizerExpectations.expect(key, uids)
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.removeFinalizer(ctx, p); err != nil {
				if !apierrors.IsNotFound(err) {
					// No update will come for this pod.
					c.finalizerExpectations.observed(key, p.UID)
					errs[i] = fmt.Errorf("removing tracking finalizer of pod %s: %w", p.Name, err)
					return
				}
				// The pod is gone, but the cache may still show it
				// with the finalizer until its deletion event, which
				// clears the expectation: counted now, it must not be
				// counted again meanwhile.
			}
			removed[i] = true
		}()
	}
	wg.Wait()
	return removed, errors.Join(errs...)
}

// cleanUncounted moves the uncounted pods whose finalizer is gone into the
// counters; it reports whether status changed.
func cleanUncounted(status *batchv1.JobStatus, withFinalizer map[types.UID]bool) bool {
	u := status.UncountedTerminatedPods
	keep := func(uids []types.UID) []types.UID {
		var out []types.UID
		for _, uid := range uids {
			if withFinalizer[uid] {
				out = append(out, uid)
			}
		}
		return out
	}
	changed := false
	if s := keep(u.Succeeded); len(s) != len(u.Succeeded) {
		status.Succeeded += int32(len(u.Succeeded) - len(s))
		u.Succeeded, changed = s, true
	}
	if f := keep(u.Failed); len(f) != len(u.Failed) {
		status.Failed += int32(len(u.Failed) - len(f))
		u.Failed, changed = f, true
	}
	return changed
}

// canRemoveFinalizer reports whether the pod can be counted now.
func (c *Controller) canRemoveFinalizer(logger klog.Logger, jc *jobCtx, p *corev1.Pod, failed bool) bool {
	if jc.job.DeletionTimestamp != nil || jc.finishedCondition != nil || p.Status.Phase == corev1.PodSucceeded {
		return true
	}
	if !failed {
		return false
	}
	if hasBackoffLimitPerIndex(jc.job) {
		if ix := completionIndex(p); ix != unknownIndex {
			if d, ok := jc.delayedDeletion[ix]; ok && d.UID == p.UID {
				logger.V(3).Info("Keeping the finalizer of a failed pod until its index is replaced", "pod", klog.KObj(p), "index", ix)
				return false
			}
		}
	}
	return true
}

// enactJobFinished sets the job's final condition once every pod is
// counted and none is still terminating.
func (c *Controller) enactJobFinished(logger klog.Logger, jc *jobCtx) bool {
	fc := jc.finishedCondition
	if fc == nil {
		return false
	}
	job := jc.job
	if u := job.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		logger.V(4).Info("Delaying marking the Job as finished: pods are still uncounted", "job", klog.KObj(job))
		return false
	}
	if jc.terminating > 0 {
		logger.V(4).Info("Delaying marking the Job as finished: pods are still terminating", "job", klog.KObj(job), "terminating", jc.terminating)
		return false
	}
	job.Status.Conditions, _ = ensureCondition(job.Status.Conditions, fc.Type, fc.Status, fc.Reason, fc.Message, c.clock.Now())
	if fc.Type == batchv1.JobComplete {
		t := metav1.NewTime(c.clock.Now())
		job.Status.CompletionTime = &t
	}
	return true
}

// recordFinished records the event of the job's end.
func (c *Controller) recordFinished(job *batchv1.Job, fc *batchv1.JobCondition) {
	if fc.Type == batchv1.JobComplete {
		if job.Spec.Completions != nil && job.Status.Succeeded > *job.Spec.Completions {
			c.recorder.Event(job, corev1.EventTypeWarning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
		}
		c.recorder.Event(job, corev1.EventTypeNormal, "Completed", "Job completed")
		return
	}
	c.recorder.Event(job, corev1.EventTypeWarning, fc.Reason, fc.Message)
}

// updateStatus writes job's status and returns the stored job.
func (c *Controller) updateStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	klog.FromContext(ctx).V(4).Info("Updating job status", "job", klog.KObj(job), "active", job.Status.Active,
		"succeeded", job.Status.Succeeded, "failed", job.Status.Failed)
	updated, err := c.client.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, job, metav1.UpdateOptions{})
	if err != nil {
		return job, err
	}
	c.statusWrites.wrote(job.Namespace+"/"+job.Name, updated.ResourceVersion)
	return updated, nil
}

// newFinishedPods returns the job's finished pods not counted yet (holding
// the finalizer, not in the uncounted lists, of a valid index).
func newFinishedPods(jc *jobCtx) (succeeded, failed []*corev1.Pod) {
	for _, p := range jc.pods {
		if !hasTrackingFinalizer(p) || jc.expectedRmFinalizers[p.UID] {
			continue
		}
		if isIndexed(jc.job) && !validIndex(p, *jc.job.Spec.Completions) {
			continue
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !jc.uncountedSucceeded[p.UID]:
			succeeded = append(succeeded, p)
		case isPodFailed(p, jc.job) && !jc.uncountedFailed[p.UID]:
			failed = append(failed, p)
		}
	}
	return succeeded, failed
}

// countedFailures is how many of failed count towards the back-off limit.
func countedFailures(job *batchv1.Job, failed []*corev1.Pod) int {
	n := 0
	for _, p := range failed {
		if _, count, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); count {
			n++
		}
	}
	return n
}

// failJobMessage is the message of the first FailJob rule a failed pod
// matches, or nil.
func failJobMessage(job *batchv1.Job, pods []*corev1.Pod) *string {
	if job.Spec.PodFailurePolicy == nil {
		return nil
	}
	for _, p := range pods {
		if isPodFailed(p, job) {
			if msg, _, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); msg != nil {
				return msg
			}
		}
	}
	return nil
}

// pastBackoffLimitOnFailure: with restartPolicy OnFailure the kubelet
// restarts containers instead of failing pods, and their restarts count.
func pastBackoffLimitOnFailure(job *batchv1.Job, pods []*corev1.Pod) bool {
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending {
			continue
		}
		for _, cs := range p.Status.InitContainerStatuses {
			restarts += cs.RestartCount
		}
		for _, cs := range p.Status.ContainerStatuses {
			restarts += cs.RestartCount
		}
	}
	if *job.Spec.BackoffLimit == 0 {
		return restarts > 0
	}
	return restarts >= *job.Spec.BackoffLimit
}

func (c *Controller) pastActiveDeadline(job *batchv1.Job) bool {
	if job.Spec.ActiveDeadlineSeconds == nil || job.Status.StartTime == nil || isSuspended(job) {
		return false
	}
	return c.clock.Since(job.Status.StartTime.Time) >= time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second
}

// matchSuccessPolicy reports whether the succeeded indexes meet a rule of
// the job's success policy.
func matchSuccessPolicy(logger klog.Logger, policy *batchv1.SuccessPolicy, completions int32, succeeded intervals) (string, bool) {
	if policy == nil || len(succeeded) == 0 {
		return "", false
	}
	for i, rule := range policy.Rules {
		matched := false
		if rule.SucceededIndexes != nil {
			required := parseIntervals(logger, *rule.SucceededIndexes, int(completions))
			if len(required) == 0 {
				continue
			}
			contains := 0
			for _, r := range required {
				for _, s := range succeeded {
					if overlap := min(r.last, s.last) - max(r.first, s.first) + 1; overlap > 0 {
						contains += overlap
					}
				}
			}
			matched = contains == required.total() || (rule.SucceededCount != nil && contains >= int(*rule.SucceededCount))
		} else if rule.SucceededCount != nil {
			matched = succeeded.total() >= int(*rule.SucceededCount)
		}
		if matched {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

// invalidSpec returns why the job cannot be synced, or "".
func invalidSpec(job *batchv1.Job) string {
	switch {
	case job.Spec.Parallelism == nil || *job.Spec.Parallelism < 0:
		return "spec.parallelism must be set and not negative"
	case job.Spec.BackoffLimit == nil:
		return "spec.backoffLimit must be set"
	case isIndexed(job) && job.Spec.Completions == nil:
		return "spec.completions must be set for an Indexed job"
	case job.Spec.BackoffLimitPerIndex != nil && !isIndexed(job):
		return "spec.backoffLimitPerIndex needs completionMode Indexed"
	}
	return ""
}

func isIndexed(job *batchv1.Job) bool {
	return job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion
}

func hasBackoffLimitPerIndex(job *batchv1.Job) bool {
	return job.Spec.BackoffLimitPerIndex != nil && isIndexed(job)
}

func isSuspended(job *batchv1.Job) bool { return job.Spec.Suspend != nil && *job.Spec.Suspend }

func managedByUs(job *batchv1.Job) bool {
	return job.Spec.ManagedBy == nil || *job.Spec.ManagedBy == jobControllerName
}

// onlyReplaceFailedPods: a terminating pod is replaced only once it has
// failed (podReplacementPolicy Failed, implied by a pod failure policy).
func onlyReplaceFailedPods(job *batchv1.Job) bool {
	if job.Spec.PodReplacementPolicy != nil && *job.Spec.PodReplacementPolicy == batchv1.Failed {
		return true
	}
	return job.Spec.PodFailurePolicy != nil
}

// isPodFailed: a Failed pod, or (unless only failed pods are replaced) one
// being deleted before it succeeded.
func isPodFailed(p *corev1.Pod, job *batchv1.Job) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if onlyReplaceFailedPods(job) {
		return false
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded
}

func isPodTerminating(p *corev1.Pod) bool {
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

func isJobFinished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// findCondition returns a copy of the job's condition of type t when it is
// True, or nil.
func findCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType) *batchv1.JobCondition {
	for _, c := range conds {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return &c
		}
	}
	return nil
}

func newCondition(t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) *batchv1.JobCondition {
	return &batchv1.JobCondition{Type: t, Status: status, Reason: reason, Message: message,
		LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
}

// ensureCondition sets the condition of type t; a False condition is not
// added when absent. It reports whether conds changed.
func ensureCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) ([]batchv1.JobCondition, bool) {
	for i := range conds {
		if conds[i].Type != t {
			continue
		}
		if conds[i].Status == status && conds[i].Reason == reason && conds[i].Message == message {
			return conds, false
		}
		conds[i] = *newCondition(t, status, reason, message, now)
		return conds, true
	}
	if status == corev1.ConditionFalse {
		return conds, false
	}
	return append(conds, *newCondition(t, status, reason, message, now)), true
}

func uidSet(uids []types.UID) map[types.UID]bool {
	out := make(map[types.UID]bool, len(uids))
	for _, u := range uids {
		out[u] = true
	}
	return out
}
