package controllerutil

import (
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodDeletionCostAnnotation lets users say which pods of a ReplicaSet to
// delete first on scale-down: lower cost first.
const PodDeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// ActivePodsWithRanks sorts pods so that the ones to delete first on a
// scale-down come first, as upstream's type of the same name (with its
// LogarithmicScaleDown behaviour, on by default since v1.22):
//
//  1. unassigned before assigned;
//  2. Pending before Unknown before Running;
//  3. not ready before ready;
//  4. lower pod-deletion-cost before higher;
//  5. higher Rank (more related pods on the same node) before lower;
//  6. ready for a shorter time before longer (compared in power-of-two
//     buckets of the time since they became ready);
//  7. more container restarts before fewer;
//  8. created more recently before earlier (also in power-of-two buckets),
//     ties in a bucket broken by UID.
//
// Rank must have one entry per pod. Now is the reference time of the
// buckets; when it is zero, times are compared exactly.
type ActivePodsWithRanks struct {
	Pods []*corev1.Pod
	Rank []int
	Now  metav1.Time
}

func (s ActivePodsWithRanks) Len() int { return len(s.Pods) }

func (s ActivePodsWithRanks) Swap(i, j int) {
	s.Pods[i], s.Pods[j] = s.Pods[j], s.Pods[i]
	s.Rank[i], s.Rank[j] = s.Rank[j], s.Rank[i]
}

var podPhaseOrdinal = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

// Less reports whether pod i should be deleted before pod j.
func (s ActivePodsWithRanks) Less(i, j int) bool {
	pi, pj := s.Pods[i], s.Pods[j]
	if pi.Spec.NodeName != pj.Spec.NodeName && (pi.Spec.NodeName == "" || pj.Spec.NodeName == "") {
		return pi.Spec.NodeName == ""
	}
	if oi, oj := podPhaseOrdinal[pi.Status.Phase], podPhaseOrdinal[pj.Status.Phase]; oi != oj {
		return oi < oj
	}
	if ri, rj := IsPodReady(pi), IsPodReady(pj); ri != rj {
		return !ri
	}
	if ci, cj := deletionCost(pi), deletionCost(pj); ci != cj {
		return ci < cj
	}
	if s.Rank[i] != s.Rank[j] {
		return s.Rank[i] > s.Rank[j]
	}
	if IsPodReady(pi) && IsPodReady(pj) {
		ti, tj := podReadyTime(pi), podReadyTime(pj)
		if !ti.Equal(&tj) {
			return s.newerFirst(pi, pj, ti, tj)
		}
	}
	if res, ok := compareMaxContainerRestarts(pi, pj); ok {
		return res
	}
	if !pi.CreationTimestamp.Equal(&pj.CreationTimestamp) {
		return s.newerFirst(pi, pj, pi.CreationTimestamp, pj.CreationTimestamp)
	}
	return false
}

// newerFirst orders by ti and tj, the later (or zero) first, comparing them
// in logarithmic buckets of their age when Now is set.
func (s ActivePodsWithRanks) newerFirst(pi, pj *corev1.Pod, ti, tj metav1.Time) bool {
	if s.Now.IsZero() || ti.IsZero() || tj.IsZero() {
		return afterOrZero(ti, tj)
	}
	diff := logarithmicRankDiff(ti, tj, s.Now)
	if diff == 0 {
		return pi.UID < pj.UID
	}
	return diff < 0
}

// afterOrZero reports whether t1 is zero (and t2 not) or after t2.
func afterOrZero(t1, t2 metav1.Time) bool {
	if t1.IsZero() || t2.IsZero() {
		return t1.IsZero()
	}
	return t1.After(t2.Time)
}

// logarithmicRankDiff compares the base-2 logarithms of the ages of t1 and
// t2 at now.
func logarithmicRankDiff(t1, t2, now metav1.Time) int64 {
	d1, d2 := now.Sub(t1.Time), now.Sub(t2.Time)
	r1, r2 := int64(-1), int64(-1)
	if d1 > 0 {
		r1 = int64(math.Log2(float64(d1)))
	}
	if d2 > 0 {
		r2 = int64(math.Log2(float64(d2)))
	}
	return r1 - r2
}

// podReadyTime is when pod last became ready, or zero.
func podReadyTime(pod *corev1.Pod) metav1.Time {
	if c := GetPodReadyCondition(pod); c != nil && c.Status == corev1.ConditionTrue {
		return c.LastTransitionTime
	}
	return metav1.Time{}
}

// deletionCost reads the pod-deletion-cost annotation; a missing or invalid
// value is 0.
func deletionCost(pod *corev1.Pod) int32 {
	v, ok := pod.Annotations[PodDeletionCostAnnotation]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// maxContainerRestarts returns the highest restart count of pod's regular
// containers and of its sidecar (restartable init) containers.
func maxContainerRestarts(pod *corev1.Pod) (regular, sidecar int32) {
	for _, c := range pod.Status.ContainerStatuses {
		regular = max(regular, c.RestartCount)
	}
	sidecars := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
		}
	}
	for _, c := range pod.Status.InitContainerStatuses {
		if sidecars[c.Name] {
			sidecar = max(sidecar, c.RestartCount)
		}
	}
	return regular, sidecar
}

// compareMaxContainerRestarts reports whether pi restarted more than pj;
// ok is false when their counts are equal.
func compareMaxContainerRestarts(pi, pj *corev1.Pod) (res, ok bool) {
	ri, si := maxContainerRestarts(pi)
	rj, sj := maxContainerRestarts(pj)
	if ri != rj {
		return ri > rj, true
	}
	if si != sj {
		return si > sj, true
	}
	return false, false
}

// RanksByRelatedPodsOnSameNode ranks each pod of pods by how many active
// pods of related (its own controller's and its siblings') share its node.
func RanksByRelatedPodsOnSameNode(pods, related []*corev1.Pod) []int {
	onNode := map[string]int{}
	for _, p := range related {
		if p.Spec.NodeName != "" && IsPodActive(p) {
			onNode[p.Spec.NodeName]++
		}
	}
	ranks := make([]int, len(pods))
	for i, p := range pods {
		ranks[i] = onNode[p.Spec.NodeName]
	}
	return ranks
}
