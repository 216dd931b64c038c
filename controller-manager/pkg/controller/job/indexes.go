package job

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// unknownIndex is the completion index of a pod without a valid one.
const unknownIndex = -1

// interval is the closed range of completion indexes [first, last].
type interval struct{ first, last int }

// intervals is a sorted list of disjoint, non-adjacent intervals: the form
// of status.completedIndexes and status.failedIndexes ("1,3-5,7").
type intervals []interval

// parseIntervals reads an indexes string, dropping indexes at or above
// completions and logging (then skipping) malformed parts.
func parseIntervals(logger klog.Logger, s string, completions int) intervals {
	if s == "" {
		return nil
	}
	var out intervals
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			logger.Info("Corrupted indexes interval, ignoring", "interval", part, "err", err)
			continue
		}
		if first >= completions {
			break
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				logger.Info("Corrupted indexes interval, ignoring", "interval", part, "err", err)
				continue
			}
			last = min(last, completions-1)
		}
		if n := len(out); n > 0 && out[n-1].last >= first-1 {
			out[n-1].last = max(out[n-1].last, last)
			continue
		}
		out = append(out, interval{first, last})
	}
	return out
}

// String renders the intervals as the API does: two adjacent indexes as
// "a,b", longer runs as "a-b".
func (iv intervals) String() string {
	var b strings.Builder
	for _, v := range iv {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(v.first))
		switch {
		case v.last == v.first+1:
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(v.last))
		case v.last > v.first:
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(v.last))
		}
	}
	return b.String()
}

// total is the number of indexes in iv.
func (iv intervals) total() int {
	n := 0
	for _, v := range iv {
		n += v.last - v.first + 1
	}
	return n
}

// has reports whether ix is in iv.
func (iv intervals) has(ix int) bool {
	i := sort.Search(len(iv), func(i int) bool { return iv[i].last >= ix })
	return i < len(iv) && iv[i].first <= ix
}

// with returns iv with the indexes ixs (in any order) added.
func (iv intervals) with(ixs ...int) intervals {
	add := make(intervals, len(ixs))
	for i, ix := range ixs {
		add[i] = interval{ix, ix}
	}
	sort.Slice(add, func(i, j int) bool { return add[i].first < add[j].first })
	return iv.merge(add)
}

// merge returns the union of iv and other.
func (iv intervals) merge(other intervals) intervals {
	all := make(intervals, 0, len(iv)+len(other))
	all = append(all, iv...)
	all = append(all, other...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].first < all[j].first })
	var out intervals
	for _, v := range all {
		if n := len(out); n > 0 && v.first <= out[n-1].last+1 {
			out[n-1].last = max(out[n-1].last, v.last)
			continue
		}
		out = append(out, v)
	}
	return out
}

// completionIndex is the index in pod's completion-index annotation, or
// unknownIndex.
func completionIndex(pod *corev1.Pod) int {
	v, ok := pod.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return unknownIndex
	}
	ix, err := strconv.Atoi(v)
	if err != nil || ix < 0 {
		return unknownIndex
	}
	return ix
}

// validIndex reports whether pod of an Indexed job has an index below
// completions.
func validIndex(pod *corev1.Pod, completions int32) bool {
	ix := completionIndex(pod)
	return ix != unknownIndex && ix < int(completions)
}

// indexesOf returns the valid completion indexes of pods.
func indexesOf(pods []*corev1.Pod) map[int]bool {
	out := make(map[int]bool, len(pods))
	for _, p := range pods {
		if ix := completionIndex(p); ix != unknownIndex {
			out[ix] = true
		}
	}
	return out
}

// succeededIndexes returns the completed indexes in the job's status and
// those plus the indexes of the succeeded pods not yet counted.
func succeededIndexes(logger klog.Logger, job *batchv1.Job, pods []*corev1.Pod) (prev, cur intervals) {
	completions := *job.Spec.Completions
	prev = parseIntervals(logger, job.Status.CompletedIndexes, int(completions))
	var add []int
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded && validIndex(p, completions) && hasTrackingFinalizer(p) {
			add = append(add, completionIndex(p))
		}
	}
	return prev, prev.with(add...)
}

// failedIndexes returns the failed indexes in the job's status plus those
// of failed pods not yet counted that used up their index's back-off limit
// (or matched a FailIndex rule).
func failedIndexes(logger klog.Logger, job *batchv1.Job, pods []*corev1.Pod) intervals {
	completions := *job.Spec.Completions
	var prev intervals
	if job.Status.FailedIndexes != nil {
		prev = parseIntervals(logger, *job.Status.FailedIndexes, int(completions))
	}
	var add []int
	for _, p := range pods {
		if validIndex(p, completions) && hasTrackingFinalizer(p) && isIndexFailed(logger, job, p) {
			add = append(add, completionIndex(p))
		}
	}
	return prev.with(add...)
}

// isIndexFailed reports whether failed pod p fails its index.
func isIndexFailed(logger klog.Logger, job *batchv1.Job, p *corev1.Pod) bool {
	if !isPodFailed(p, job) {
		return false
	}
	counted := true
	if job.Spec.PodFailurePolicy != nil {
		_, count, action := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p)
		if action != nil && *action == batchv1.PodFailurePolicyActionFailIndex {
			return true
		}
		counted = count
	}
	return counted && indexFailureCount(logger, p) >= *job.Spec.BackoffLimitPerIndex
}

// indexFailureCount and indexIgnoredFailureCount read the annotations the
// controller puts on the pods of a job with backoffLimitPerIndex.
func indexFailureCount(logger klog.Logger, p *corev1.Pod) int32 {
	return annotationCount(logger, p, batchv1.JobIndexFailureCountAnnotation)
}

func indexIgnoredFailureCount(logger klog.Logger, p *corev1.Pod) int32 {
	return annotationCount(logger, p, batchv1.JobIndexIgnoredFailureCountAnnotation)
}

func annotationCount(logger klog.Logger, p *corev1.Pod, key string) int32 {
	v, ok := p.Annotations[key]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		logger.Info("Invalid annotation, taking 0", "pod", klog.KObj(p), "annotation", key, "value", v)
		return 0
	}
	return int32(n)
}

// firstPendingIndexes returns up to count indexes below completions that
// have no active pod, did not succeed or fail, and (when only failed pods
// are replaced) have no terminating pod.
func firstPendingIndexes(jc *jobCtx, count, completions int) []int {
	if count == 0 {
		return nil
	}
	busy := jc.succeededIndexes.merge(jc.failedIndexes)
	var add []int
	for ix := range indexesOf(jc.activePods) {
		add = append(add, ix)
	}
	if onlyReplaceFailedPods(jc.job) {
		for _, p := range jc.pods {
			if isPodTerminating(p) {
				if ix := completionIndex(p); ix != unknownIndex {
					add = append(add, ix)
				}
			}
		}
	}
	busy = busy.with(add...)
	out := make([]int, 0, count)
	candidate := 0
	for _, v := range busy {
		for ; candidate < completions && len(out) < count && candidate < v.first; candidate++ {
			out = append(out, candidate)
		}
		candidate = max(candidate, v.last+1)
	}
	for ; candidate < completions && len(out) < count; candidate++ {
		out = append(out, candidate)
	}
	return out
}

// podGenerateNameWithIndex is "<job>-<index>-", the job's name cut so the
// generated name fits in 63 characters.
func podGenerateNameWithIndex(jobName string, index int) string {
	const maxGeneratedNameLength = 63 - 5
	suffix := fmt.Sprintf("-%d-", index)
	if len(jobName)+len(suffix) > maxGeneratedNameLength {
		jobName = jobName[:maxGeneratedNameLength-len(suffix)]
	}
	return jobName + suffix
}
