package deployment

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/davecgh/go-spew/spew"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	intstrutil "k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
)

// Annotations and labels the controller maintains, as upstream names them.
const (
	// RevisionAnnotation is the revision of a Deployment and of each of
	// its ReplicaSets.
	RevisionAnnotation = "deployment.kubernetes.io/revision"
	// RevisionHistoryAnnotation lists the earlier revisions a ReplicaSet
	// had before a rollback made it new again.
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	// DesiredReplicasAnnotation is the Deployment's replicas when the
	// ReplicaSet was last scaled.
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	// MaxReplicasAnnotation is the Deployment's replicas plus maxSurge
	// when the ReplicaSet was last scaled.
	MaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas"
	// RollbackToAnnotation asks for a rollback to a revision (0: the
	// previous one); it is what extensions/v1beta1's rollback subresource
	// set.
	RollbackToAnnotation = "deprecated.deployment.rollback.to"
	// lastAppliedConfigAnnotation is kubectl apply's annotation, never
	// copied to ReplicaSets.
	lastAppliedConfigAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
	// DefaultDeploymentUniqueLabelKey labels the ReplicaSet, its selector
	// and its pods with the hash of the pod template.
	DefaultDeploymentUniqueLabelKey = appsv1.DefaultDeploymentUniqueLabelKey
	// maxRevHistoryLengthInChars bounds RevisionHistoryAnnotation
	// (upstream's default).
	maxRevHistoryLengthInChars = 2000
)

// Condition reasons, as upstream names them.
const (
	NewReplicaSetReason        = "NewReplicaSetCreated"
	FoundNewRSReason           = "FoundNewReplicaSet"
	ReplicaSetUpdatedReason    = "ReplicaSetUpdated"
	NewRSAvailableReason       = "NewReplicaSetAvailable"
	TimedOutReason             = "ProgressDeadlineExceeded"
	PausedDeployReason         = "DeploymentPaused"
	ResumedDeployReason        = "DeploymentResumed"
	FailedRSCreateReason       = "ReplicaSetCreateError"
	MinimumReplicasAvailable   = "MinimumReplicasAvailable"
	MinimumReplicasUnavailable = "MinimumReplicasUnavailable"
	RollbackRevisionNotFound   = "DeploymentRollbackRevisionNotFound"
	RollbackTemplateUnchanged  = "DeploymentRollbackTemplateUnchanged"
	RollbackDone               = "DeploymentRollback"
	ScalingReplicaSetReason    = "ScalingReplicaSet"
	SelectingAllReason         = "SelectingAll"
)

// ComputeHash is upstream's hash of a pod template: FNV-32a of the template
// printed by go-spew (the deep-hash printer), followed by collisionCount
// when set, rendered with rand.SafeEncodeString. Equal inputs give the
// hash upstream gives, so ReplicaSet names match upstream's.
func ComputeHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	hasher := fnv.New32a()
	deepHashObject(hasher, *template)
	if collisionCount != nil {
		buf := make([]byte, 8)
		binary.LittleEndian.PutUint32(buf, uint32(*collisionCount))
		hasher.Write(buf)
	}
	return rand.SafeEncodeString(fmt.Sprint(hasher.Sum32()))
}

// deepHashObject writes obj to hasher the way upstream's hashutil does:
// following pointers, so only the values matter.
func deepHashObject(hasher hash.Hash, obj any) {
	hasher.Reset()
	printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
	printer.Fprintf(hasher, "%#v", obj)
}

// EqualIgnoreHash reports whether two templates are equal except for the
// pod-template-hash label.
func EqualIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a1, b1 := a.DeepCopy(), b.DeepCopy()
	delete(a1.Labels, DefaultDeploymentUniqueLabelKey)
	delete(b1.Labels, DefaultDeploymentUniqueLabelKey)
	if len(a1.Labels) == 0 {
		a1.Labels = nil
	}
	if len(b1.Labels) == 0 {
		b1.Labels = nil
	}
	return apiequality.Semantic.DeepEqual(a1, b1)
}

// replicas returns *p, or 0 for nil.
func replicas(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// FindNewReplicaSet returns the oldest ReplicaSet whose template equals
// d's, or nil.
func FindNewReplicaSet(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	sorted := append([]*appsv1.ReplicaSet(nil), rsList...)
	sort.Sort(byCreationTimestamp(sorted))
	for _, rs := range sorted {
		if EqualIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// FindOldReplicaSets returns the old ReplicaSets that still have replicas
// and all old ReplicaSets.
func FindOldReplicaSets(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) (withReplicas, all []*appsv1.ReplicaSet) {
	newRS := FindNewReplicaSet(d, rsList)
	for _, rs := range rsList {
		if newRS != nil && rs.UID == newRS.UID {
			continue
		}
		all = append(all, rs)
		if replicas(rs.Spec.Replicas) != 0 {
			withReplicas = append(withReplicas, rs)
		}
	}
	return withReplicas, all
}

// Revision parses obj's revision annotation (0 when missing).
func Revision(obj metav1.Object) (int64, error) {
	v, ok := obj.GetAnnotations()[RevisionAnnotation]
	if !ok {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}

// MaxRevision is the highest revision of rsList.
func MaxRevision(rsList []*appsv1.ReplicaSet) int64 {
	var maxRev int64
	for _, rs := range rsList {
		if rs == nil {
			continue
		}
		if v, err := Revision(rs); err == nil && v > maxRev {
			maxRev = v
		}
	}
	return maxRev
}

// LastRevision is the second highest revision of rsList.
func LastRevision(rsList []*appsv1.ReplicaSet) int64 {
	var maxRev, secMax int64
	for _, rs := range rsList {
		if rs == nil {
			continue
		}
		v, err := Revision(rs)
		if err != nil {
			continue
		}
		if v >= maxRev {
			secMax, maxRev = maxRev, v
		} else if v > secMax {
			secMax = v
		}
	}
	return secMax
}

func skipCopyAnnotation(k string) bool {
	switch k {
	case lastAppliedConfigAnnotation, RevisionAnnotation, RevisionHistoryAnnotation,
		DesiredReplicasAnnotation, MaxReplicasAnnotation, RollbackToAnnotation:
		return true
	}
	return false
}

// copyDeploymentAnnotationsToReplicaSet copies d's own annotations to rs.
func copyDeploymentAnnotationsToReplicaSet(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	for k, v := range d.Annotations {
		if cur, ok := rs.Annotations[k]; skipCopyAnnotation(k) || (ok && cur == v) {
			continue
		}
		rs.Annotations[k] = v
		changed = true
	}
	return changed
}

// SetNewReplicaSetAnnotations gives newRS d's annotations and newRevision
// when that is higher than its own; when it had a revision already (a
// rollback), the old one is appended to its revision history. A ReplicaSet
// about to be created (!exists) also gets the replicas annotations.
func SetNewReplicaSetAnnotations(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, newRevision string, exists bool) bool {
	changed := copyDeploymentAnnotationsToReplicaSet(d, newRS)
	oldRevision, had := newRS.Annotations[RevisionAnnotation]
	oldRev, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil {
		if oldRevision != "" {
			return false
		}
		oldRev = 0
	}
	newRev, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		return false
	}
	if oldRev < newRev {
		newRS.Annotations[RevisionAnnotation] = newRevision
		changed = true
		if had {
			appendRevisionHistory(newRS, oldRevision)
		}
	}
	if !exists && SetReplicasAnnotations(newRS, replicas(d.Spec.Replicas), replicas(d.Spec.Replicas)+MaxSurge(d)) {
		changed = true
	}
	return changed
}

// appendRevisionHistory adds oldRevision to rs's revision history, dropping
// the oldest entries beyond maxRevHistoryLengthInChars.
func appendRevisionHistory(rs *appsv1.ReplicaSet, oldRevision string) {
	history := rs.Annotations[RevisionHistoryAnnotation]
	if history == "" {
		rs.Annotations[RevisionHistoryAnnotation] = oldRevision
		return
	}
	old := strings.Split(history, ",")
	total := len(history) + len(oldRevision) + 1
	start := 0
	for total > maxRevHistoryLengthInChars && start < len(old) {
		total -= len(old[start]) + 1
		start++
	}
	if total <= maxRevHistoryLengthInChars {
		rs.Annotations[RevisionHistoryAnnotation] = strings.Join(append(old[start:], oldRevision), ",")
	}
}

// setDeploymentAnnotationsTo replaces d's own annotations by rs's, for a
// rollback to rs.
func setDeploymentAnnotationsTo(d *appsv1.Deployment, rs *appsv1.ReplicaSet) {
	kept := map[string]string{}
	for k, v := range d.Annotations {
		if skipCopyAnnotation(k) {
			kept[k] = v
		}
	}
	for k, v := range rs.Annotations {
		if !skipCopyAnnotation(k) {
			kept[k] = v
		}
	}
	d.Annotations = kept
}

// SetDeploymentRevision sets d's revision annotation; it reports a change.
func SetDeploymentRevision(d *appsv1.Deployment, revision string) bool {
	if d.Annotations[RevisionAnnotation] == revision {
		return false
	}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[RevisionAnnotation] = revision
	return true
}

// SetReplicasAnnotations records desired and max on rs; it reports a
// change.
func SetReplicasAnnotations(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	if d := strconv.Itoa(int(desired)); rs.Annotations[DesiredReplicasAnnotation] != d {
		rs.Annotations[DesiredReplicasAnnotation] = d
		changed = true
	}
	if m := strconv.Itoa(int(maxReplicas)); rs.Annotations[MaxReplicasAnnotation] != m {
		rs.Annotations[MaxReplicasAnnotation] = m
		changed = true
	}
	return changed
}

// ReplicasAnnotationsNeedUpdate reports whether rs's replicas annotations
// differ from desired and max.
func ReplicasAnnotationsNeedUpdate(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	return rs.Annotations[DesiredReplicasAnnotation] != strconv.Itoa(int(desired)) ||
		rs.Annotations[MaxReplicasAnnotation] != strconv.Itoa(int(maxReplicas))
}

func intAnnotation(rs *appsv1.ReplicaSet, key string) (int32, bool) {
	v, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

func isRollingUpdate(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType && d.Spec.Strategy.RollingUpdate != nil
}

// ResolveFenceposts turns maxSurge and maxUnavailable (ints or percents of
// desired) into numbers: surge rounds up, unavailable rounds down, and
// when both come to zero unavailable becomes 1.
func ResolveFenceposts(maxSurge, maxUnavailable *intstrutil.IntOrString, desired int32) (int32, int32, error) {
	surge, err := intstrutil.GetScaledValueFromIntOrPercent(intstrutil.ValueOrDefault(maxSurge, intstrutil.FromInt32(0)), int(desired), true)
	if err != nil {
		return 0, 0, err
	}
	unavailable, err := intstrutil.GetScaledValueFromIntOrPercent(intstrutil.ValueOrDefault(maxUnavailable, intstrutil.FromInt32(0)), int(desired), false)
	if err != nil {
		return 0, 0, err
	}
	if surge == 0 && unavailable == 0 {
		// Rounding down may leave no room at all; allow one unavailable
		// pod, since surging may be impossible (quota).
		unavailable = 1
	}
	return int32(surge), int32(unavailable), nil
}

// MaxSurge is d's maxSurge as a number (0 unless RollingUpdate).
func MaxSurge(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) {
		return 0
	}
	surge, _, _ := ResolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, replicas(d.Spec.Replicas))
	return surge
}

// MaxUnavailable is d's maxUnavailable as a number, at most its replicas
// (0 unless RollingUpdate).
func MaxUnavailable(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || replicas(d.Spec.Replicas) == 0 {
		return 0
	}
	_, unavailable, _ := ResolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, replicas(d.Spec.Replicas))
	return min(unavailable, replicas(d.Spec.Replicas))
}

// NewRSNewReplicas is how many replicas the new ReplicaSet may have now.
func NewRSNewReplicas(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (int32, error) {
	switch d.Spec.Strategy.Type {
	case appsv1.RollingUpdateDeploymentStrategyType:
		var surgeValue *intstrutil.IntOrString
		if d.Spec.Strategy.RollingUpdate != nil {
			surgeValue = d.Spec.Strategy.RollingUpdate.MaxSurge
		}
		surge, err := intstrutil.GetScaledValueFromIntOrPercent(intstrutil.ValueOrDefault(surgeValue, intstrutil.FromInt32(0)), int(replicas(d.Spec.Replicas)), true)
		if err != nil {
			return 0, err
		}
		current := replicaCount(allRSs)
		maxTotal := replicas(d.Spec.Replicas) + int32(surge)
		if current >= maxTotal {
			return replicas(newRS.Spec.Replicas), nil
		}
		up := min(maxTotal-current, replicas(d.Spec.Replicas)-replicas(newRS.Spec.Replicas))
		return replicas(newRS.Spec.Replicas) + up, nil
	case appsv1.RecreateDeploymentStrategyType:
		return replicas(d.Spec.Replicas), nil
	default:
		return 0, fmt.Errorf("deployment type %v isn't supported", d.Spec.Strategy.Type)
	}
}

// IsSaturated reports whether rs has all of d's replicas, available.
func IsSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, ok := intAnnotation(rs, DesiredReplicasAnnotation)
	return ok && desired == replicas(d.Spec.Replicas) &&
		replicas(rs.Spec.Replicas) == replicas(d.Spec.Replicas) &&
		rs.Status.AvailableReplicas == replicas(d.Spec.Replicas)
}

// replicaCount sums spec.replicas.
func replicaCount(rsList []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rsList {
		if rs != nil {
			n += replicas(rs.Spec.Replicas)
		}
	}
	return n
}

// actualReplicaCount sums status.replicas.
func actualReplicaCount(rsList []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rsList {
		if rs != nil {
			n += rs.Status.Replicas
		}
	}
	return n
}

func readyReplicaCount(rsList []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rsList {
		if rs != nil {
			n += rs.Status.ReadyReplicas
		}
	}
	return n
}

func availableReplicaCount(rsList []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rsList {
		if rs != nil {
			n += rs.Status.AvailableReplicas
		}
	}
	return n
}

// filterActive returns the ReplicaSets with replicas.
func filterActive(rsList []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rsList {
		if rs != nil && replicas(rs.Spec.Replicas) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// findActiveOrLatest returns the one ReplicaSet with replicas, or the
// newest when none has any, or nil when several do.
func findActiveOrLatest(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	sorted := append([]*appsv1.ReplicaSet(nil), oldRSs...)
	sort.Sort(sort.Reverse(byCreationTimestamp(sorted)))
	active := filterActive(append(sorted, newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return sorted[0]
	case 1:
		return active[0]
	}
	return nil
}

// getProportion is how many replicas rs gets of the
// deploymentReplicasToAdd still to spread.
func getProportion(rs *appsv1.ReplicaSet, d *appsv1.Deployment, toAdd, added int32) int32 {
	if rs == nil || replicas(rs.Spec.Replicas) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	fraction := replicaSetFraction(rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

// replicaSetFraction is rs's share of d's new size, from the max-replicas
// annotation d had when rs was last scaled.
func replicaSetFraction(rs *appsv1.ReplicaSet, d *appsv1.Deployment) int32 {
	if replicas(d.Spec.Replicas) == 0 {
		return -replicas(rs.Spec.Replicas)
	}
	maxNow := replicas(d.Spec.Replicas) + MaxSurge(d)
	maxBefore, ok := intAnnotation(rs, MaxReplicasAnnotation)
	if !ok || maxBefore == 0 {
		maxBefore = d.Status.Replicas
		if maxBefore == 0 {
			return 0
		}
	}
	size := float64(replicas(rs.Spec.Replicas)*maxNow) / float64(maxBefore)
	return int32(math.Round(size)) - replicas(rs.Spec.Replicas)
}

// byCreationTimestamp sorts older first, then by name.
type byCreationTimestamp []*appsv1.ReplicaSet

func (o byCreationTimestamp) Len() int      { return len(o) }
func (o byCreationTimestamp) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o byCreationTimestamp) Less(i, j int) bool {
	if o[i].CreationTimestamp.Equal(&o[j].CreationTimestamp) {
		return o[i].Name < o[j].Name
	}
	return o[i].CreationTimestamp.Before(&o[j].CreationTimestamp)
}

// bySizeOlder sorts larger first, then older first.
type bySizeOlder []*appsv1.ReplicaSet

func (o bySizeOlder) Len() int      { return len(o) }
func (o bySizeOlder) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o bySizeOlder) Less(i, j int) bool {
	if replicas(o[i].Spec.Replicas) == replicas(o[j].Spec.Replicas) {
		return byCreationTimestamp(o).Less(i, j)
	}
	return replicas(o[i].Spec.Replicas) > replicas(o[j].Spec.Replicas)
}

// bySizeNewer sorts larger first, then newer first.
type bySizeNewer []*appsv1.ReplicaSet

func (o bySizeNewer) Len() int      { return len(o) }
func (o bySizeNewer) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o bySizeNewer) Less(i, j int) bool {
	if replicas(o[i].Spec.Replicas) == replicas(o[j].Spec.Replicas) {
		return byCreationTimestamp(o).Less(j, i)
	}
	return replicas(o[i].Spec.Replicas) > replicas(o[j].Spec.Replicas)
}

// byRevision sorts lower revision first, then older first.
type byRevision []*appsv1.ReplicaSet

func (o byRevision) Len() int      { return len(o) }
func (o byRevision) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o byRevision) Less(i, j int) bool {
	ri, erri := Revision(o[i])
	rj, errj := Revision(o[j])
	if erri != nil || errj != nil || ri == rj {
		return byCreationTimestamp(o).Less(i, j)
	}
	return ri < rj
}

// Conditions.

// NewDeploymentCondition is a condition stamped with now.
func NewDeploymentCondition(t appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) *appsv1.DeploymentCondition {
	ts := metav1.NewTime(now)
	return &appsv1.DeploymentCondition{Type: t, Status: status, LastUpdateTime: ts, LastTransitionTime: ts, Reason: reason, Message: message}
}

// GetDeploymentCondition returns status's condition of type t, or nil.
func GetDeploymentCondition(status appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

// SetDeploymentCondition puts c in status: a condition of the same type,
// status and reason is left as it is; the same status keeps its transition
// time.
func SetDeploymentCondition(status *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := GetDeploymentCondition(*status, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	RemoveDeploymentCondition(status, c.Type)
	status.Conditions = append(status.Conditions, c)
}

// RemoveDeploymentCondition drops status's condition of type t.
func RemoveDeploymentCondition(status *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	var out []appsv1.DeploymentCondition
	for _, c := range status.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	status.Conditions = out
}

func replicaSetToDeploymentCondition(c appsv1.ReplicaSetCondition) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{
		Type: appsv1.DeploymentConditionType(c.Type), Status: c.Status,
		LastTransitionTime: c.LastTransitionTime, LastUpdateTime: c.LastTransitionTime,
		Reason: c.Reason, Message: c.Message,
	}
}

// HasProgressDeadline reports whether d has a progress deadline.
func HasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

func hasRevisionHistoryLimit(d *appsv1.Deployment) bool {
	return d.Spec.RevisionHistoryLimit != nil && *d.Spec.RevisionHistoryLimit != math.MaxInt32
}

// DeploymentComplete reports whether newStatus shows every replica of d
// updated and available.
func DeploymentComplete(d *appsv1.Deployment, newStatus *appsv1.DeploymentStatus) bool {
	r := replicas(d.Spec.Replicas)
	return newStatus.UpdatedReplicas == r && newStatus.Replicas == r &&
		newStatus.AvailableReplicas == r && newStatus.ObservedGeneration >= d.Generation
}

// DeploymentProgressing reports whether newStatus shows progress over d's
// current status.
func DeploymentProgressing(d *appsv1.Deployment, newStatus *appsv1.DeploymentStatus) bool {
	old := d.Status
	oldOld := old.Replicas - old.UpdatedReplicas
	newOld := newStatus.Replicas - newStatus.UpdatedReplicas
	return newStatus.UpdatedReplicas > old.UpdatedReplicas || newOld < oldOld ||
		newStatus.ReadyReplicas > old.ReadyReplicas || newStatus.AvailableReplicas > old.AvailableReplicas
}

// DeploymentTimedOut reports whether d's progress deadline passed at now
// without progress.
func DeploymentTimedOut(d *appsv1.Deployment, newStatus *appsv1.DeploymentStatus, now time.Time) bool {
	if !HasProgressDeadline(d) {
		return false
	}
	c := GetDeploymentCondition(*newStatus, appsv1.DeploymentProgressing)
	if c == nil || c.Reason == NewRSAvailableReason {
		return false
	}
	if c.Reason == TimedOutReason {
		return true
	}
	return c.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Before(now)
}

func cloneAndAddLabel(in map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	out[key] = value
	return out
}

func cloneSelectorAndAddLabel(sel *metav1.LabelSelector, key, value string) *metav1.LabelSelector {
	out := &metav1.LabelSelector{}
	if sel != nil {
		out = sel.DeepCopy()
	}
	out.MatchLabels = cloneAndAddLabel(out.MatchLabels, key, value)
	return out
}
