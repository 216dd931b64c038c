package statefulset

import (
	"fmt"
	"regexp"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	intstrutil "k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

var podKind = corev1.SchemeGroupVersion.WithKind("Pod")

// statefulPodRegex extracts the parent StatefulSet and ordinal from a pod
// name.
var statefulPodRegex = regexp.MustCompile("(.*)-([0-9]+)$")

// getParentNameAndOrdinal returns the StatefulSet name and ordinal of pod,
// or "" and -1 when its name is not "<set>-<ordinal>".
func getParentNameAndOrdinal(pod *corev1.Pod) (string, int) {
	return parentAndOrdinal(pod.Name)
}

func parentAndOrdinal(name string) (string, int) {
	sub := statefulPodRegex.FindStringSubmatch(name)
	if len(sub) < 3 {
		return "", -1
	}
	i, err := strconv.ParseInt(sub[2], 10, 32)
	if err != nil {
		return "", -1
	}
	return sub[1], int(i)
}

func getParentName(pod *corev1.Pod) string {
	parent, _ := getParentNameAndOrdinal(pod)
	return parent
}

func getOrdinal(pod *corev1.Pod) int {
	_, ordinal := getParentNameAndOrdinal(pod)
	return ordinal
}

// getStartOrdinal is spec.ordinals.start, or 0.
func getStartOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

// getEndOrdinal is the highest ordinal the set should have.
func getEndOrdinal(set *appsv1.StatefulSet) int {
	return getStartOrdinal(set) + int(replicasOf(set)) - 1
}

// podInOrdinalRange reports whether pod's ordinal lies in
// [start, start+replicas).
func podInOrdinalRange(pod *corev1.Pod, set *appsv1.StatefulSet) bool {
	ordinal := getOrdinal(pod)
	return ordinal >= getStartOrdinal(set) && ordinal <= getEndOrdinal(set)
}

func getPodName(set *appsv1.StatefulSet, ordinal int) string {
	return fmt.Sprintf("%s-%d", set.Name, ordinal)
}

// getPersistentVolumeClaimName is "<claim>-<set>-<ordinal>".
func getPersistentVolumeClaimName(set *appsv1.StatefulSet, claim *corev1.PersistentVolumeClaim, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", claim.Name, set.Name, ordinal)
}

func isMemberOf(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	return getParentName(pod) == set.Name
}

// identityMatches reports whether pod has the name, namespace and
// pod-name label of its ordinal in set (upstream does not check the
// pod-index label here either).
func identityMatches(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	parent, ordinal := getParentNameAndOrdinal(pod)
	return ordinal >= 0 &&
		set.Name == parent &&
		pod.Name == getPodName(set, ordinal) &&
		pod.Namespace == set.Namespace &&
		pod.Labels != nil &&
		pod.Labels[appsv1.StatefulSetPodNameLabel] == pod.Name
}

// storageMatches reports whether every volume claim template of set is a
// volume of pod bound to the pod's claim.
func storageMatches(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	ordinal := getOrdinal(pod)
	if ordinal < 0 {
		return false
	}
	volumes := make(map[string]corev1.Volume, len(pod.Spec.Volumes))
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	for i := range set.Spec.VolumeClaimTemplates {
		claim := &set.Spec.VolumeClaimTemplates[i]
		v, ok := volumes[claim.Name]
		if !ok || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != getPersistentVolumeClaimName(set, claim, ordinal) {
			return false
		}
	}
	return true
}

// getPersistentVolumeClaims returns the claims of pod's ordinal, in the
// order of set's templates: named "<claim>-<set>-<ordinal>", labelled with
// the template's labels and the set's selector's matchLabels.
func getPersistentVolumeClaims(set *appsv1.StatefulSet, pod *corev1.Pod) []corev1.PersistentVolumeClaim {
	ordinal := getOrdinal(pod)
	claims := make([]corev1.PersistentVolumeClaim, 0, len(set.Spec.VolumeClaimTemplates))
	for i := range set.Spec.VolumeClaimTemplates {
		claim := set.Spec.VolumeClaimTemplates[i].DeepCopy()
		claim.Name = getPersistentVolumeClaimName(set, &set.Spec.VolumeClaimTemplates[i], ordinal)
		claim.Namespace = set.Namespace
		if set.Spec.Selector != nil {
			if claim.Labels == nil {
				claim.Labels = map[string]string{}
			}
			for k, v := range set.Spec.Selector.MatchLabels {
				claim.Labels[k] = v
			}
		}
		claims = append(claims, *claim)
	}
	return claims
}

// updateStorage makes pod's volumes for set's claim templates refer to the
// pod's claims; its other volumes are kept.
func updateStorage(set *appsv1.StatefulSet, pod *corev1.Pod) {
	templates := map[string]bool{}
	var volumes []corev1.Volume
	for i, claim := range getPersistentVolumeClaims(set, pod) {
		name := set.Spec.VolumeClaimTemplates[i].Name
		templates[name] = true
		volumes = append(volumes, corev1.Volume{
			Name: name,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: claim.Name,
			}},
		})
	}
	for _, v := range pod.Spec.Volumes {
		if !templates[v.Name] {
			volumes = append(volumes, v)
		}
	}
	pod.Spec.Volumes = volumes
}

// initIdentity gives a new pod its identity and its hostname and
// subdomain, which are immutable afterwards.
func initIdentity(set *appsv1.StatefulSet, pod *corev1.Pod) {
	updateIdentity(set, pod)
	pod.Spec.Hostname = pod.Name
	pod.Spec.Subdomain = set.Spec.ServiceName
}

// updateIdentity sets pod's name, namespace and identity labels from its
// ordinal.
func updateIdentity(set *appsv1.StatefulSet, pod *corev1.Pod) {
	ordinal := getOrdinal(pod)
	pod.Name = getPodName(set, ordinal)
	pod.Namespace = set.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetPodNameLabel] = pod.Name
	pod.Labels[appsv1.PodIndexLabel] = strconv.Itoa(ordinal)
}

func getPodRevision(pod *corev1.Pod) string {
	if pod.Labels == nil {
		return ""
	}
	return pod.Labels[appsv1.StatefulSetRevisionLabel]
}

func setPodRevision(pod *corev1.Pod, revision string) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetRevisionLabel] = revision
}

// newStatefulSetPod is the pod of ordinal built from set's template.
func newStatefulSetPod(set *appsv1.StatefulSet, ordinal int) *corev1.Pod {
	ref := metav1.NewControllerRef(set, controllerKind)
	// PodFromTemplate fails only for an owner without object metadata.
	pod, _ := controllerutil.PodFromTemplate(&set.Spec.Template, set, ref)
	pod.Name = getPodName(set, ordinal)
	initIdentity(set, pod)
	updateStorage(set, pod)
	return pod
}

// newVersionedStatefulSetPod builds the pod of ordinal at the current
// revision when a rolling update has not reached ordinal yet (below the
// partition, or, without a partition, among the current replicas), at the
// update revision otherwise. The condition keeps upstream's operator
// precedence.
func newVersionedStatefulSetPod(currentSet, updateSet *appsv1.StatefulSet, currentRevision, updateRevision string, ordinal int) *corev1.Pod {
	ru := currentSet.Spec.UpdateStrategy.RollingUpdate
	if isRollingUpdate(currentSet) && (ru == nil && ordinal < getStartOrdinal(currentSet)+int(currentSet.Status.CurrentReplicas)) ||
		(ru != nil && ordinal < getStartOrdinal(currentSet)+int(partitionOf(currentSet))) {
		pod := newStatefulSetPod(currentSet, ordinal)
		setPodRevision(pod, currentRevision)
		return pod
	}
	pod := newStatefulSetPod(updateSet, ordinal)
	setPodRevision(pod, updateRevision)
	return pod
}

func replicasOf(set *appsv1.StatefulSet) int32 {
	if set.Spec.Replicas == nil {
		return 1
	}
	return *set.Spec.Replicas
}

// isRollingUpdate: the RollingUpdate strategy (also when not defaulted).
func isRollingUpdate(set *appsv1.StatefulSet) bool {
	t := set.Spec.UpdateStrategy.Type
	return t == appsv1.RollingUpdateStatefulSetStrategyType || t == ""
}

func partitionOf(set *appsv1.StatefulSet) int32 {
	ru := set.Spec.UpdateStrategy.RollingUpdate
	if ru == nil || ru.Partition == nil {
		return 0
	}
	return *ru.Partition
}

// maxUnavailableOf is rollingUpdate.maxUnavailable scaled to the replicas
// (rounded down), at least 1.
func maxUnavailableOf(set *appsv1.StatefulSet) (int, error) {
	ru := set.Spec.UpdateStrategy.RollingUpdate
	v := intstrutil.FromInt32(1)
	if ru != nil && ru.MaxUnavailable != nil {
		v = *ru.MaxUnavailable
	}
	n, err := intstrutil.GetScaledValueFromIntOrPercent(&v, int(replicasOf(set)), false)
	if err != nil {
		return 0, err
	}
	return max(n, 1), nil
}

func allowsBurst(set *appsv1.StatefulSet) bool {
	return set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement
}

func isCreated(pod *corev1.Pod) bool     { return pod.Status.Phase != "" }
func isPending(pod *corev1.Pod) bool     { return pod.Status.Phase == corev1.PodPending }
func isFailed(pod *corev1.Pod) bool      { return pod.Status.Phase == corev1.PodFailed }
func isSucceeded(pod *corev1.Pod) bool   { return pod.Status.Phase == corev1.PodSucceeded }
func isTerminating(pod *corev1.Pod) bool { return pod.DeletionTimestamp != nil }

func isRunningAndReady(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && controllerutil.IsPodReady(pod)
}

// isHealthy: running, ready and not terminating.
func isHealthy(pod *corev1.Pod) bool {
	return isRunningAndReady(pod) && !isTerminating(pod)
}

// retentionPolicy is the set's PVC retention policy with Retain for what
// is unset.
func retentionPolicy(set *appsv1.StatefulSet) appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	p := appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	if set.Spec.PersistentVolumeClaimRetentionPolicy != nil {
		if w := set.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted; w != "" {
			p.WhenDeleted = w
		}
		if w := set.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled; w != "" {
			p.WhenScaled = w
		}
	}
	return p
}

const (
	retain = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	del    = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
)

// isClaimOwnerUpToDate reports whether claim's ownerReferences follow
// set's retention policy for pod, as upstream:
//
//	whenScaled Retain, whenDeleted Retain: no reference to the set or pod
//	whenScaled Retain, whenDeleted Delete: the set only
//	whenScaled Delete, whenDeleted Retain: the pod only, once scaled down
//	whenScaled Delete, whenDeleted Delete: the set, or the pod once scaled down
//
// A claim with a stale reference (the set's or pod's name with another
// UID) or under another controller is left alone (true).
func isClaimOwnerUpToDate(logger klog.Logger, claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	if hasStaleOwnerRef(claim, set, controllerKind) || hasStaleOwnerRef(claim, pod, podKind) {
		return true
	}
	if hasUnexpectedController(claim, set, pod) {
		// Our references must go; nothing is added next to another
		// controller.
		return !hasOwnerRef(claim, set) && !hasOwnerRef(claim, pod)
	}
	if hasNonControllerOwner(claim, set, pod) {
		return false
	}
	policy := retentionPolicy(set)
	scaledDown := !podInOrdinalRange(pod, set)
	switch {
	case policy.WhenScaled == retain && policy.WhenDeleted == del:
		return hasOwnerRef(claim, set) && !hasOwnerRef(claim, pod)
	case policy.WhenScaled == del && policy.WhenDeleted == retain:
		return !hasOwnerRef(claim, set) && scaledDown == hasOwnerRef(claim, pod)
	case policy.WhenScaled == del && policy.WhenDeleted == del:
		return scaledDown != hasOwnerRef(claim, set) && scaledDown == hasOwnerRef(claim, pod)
	default:
		if policy.WhenScaled != retain || policy.WhenDeleted != retain {
			logger.Error(nil, "Unknown PVC retention policy, treating as Retain", "statefulSet", klog.KObj(set), "policy", policy)
		}
		return !hasOwnerRef(claim, set) && !hasOwnerRef(claim, pod)
	}
}

// updateClaimOwnerRefForSetAndPod rewrites claim's references to set and
// pod as set's retention policy wants them.
func updateClaimOwnerRefForSetAndPod(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) {
	unexpected := hasUnexpectedController(claim, set, pod)
	var refs []metav1.OwnerReference
	for _, r := range claim.OwnerReferences {
		if !matchesRef(&r, set, controllerKind) && !matchesRef(&r, pod, podKind) {
			refs = append(refs, r)
		}
	}
	if !unexpected {
		policy := retentionPolicy(set)
		scaledDown := !podInOrdinalRange(pod, set)
		switch {
		case policy.WhenScaled == retain && policy.WhenDeleted == del:
			refs = addControllerRef(refs, set, controllerKind)
		case policy.WhenScaled == del && policy.WhenDeleted == retain:
			if scaledDown {
				refs = addControllerRef(refs, pod, podKind)
			}
		case policy.WhenScaled == del && policy.WhenDeleted == del:
			if scaledDown {
				refs = addControllerRef(refs, pod, podKind)
			} else {
				refs = addControllerRef(refs, set, controllerKind)
			}
		}
	}
	claim.OwnerReferences = refs
}

func hasOwnerRef(target, owner metav1.Object) bool {
	for _, r := range target.GetOwnerReferences() {
		if r.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

// hasUnexpectedController reports whether, under a policy that deletes
// claims, claim has a controller other than set and pod, or a reference
// to their names with another UID.
func hasUnexpectedController(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	policy := retentionPolicy(set)
	if policy.WhenScaled == retain && policy.WhenDeleted == retain {
		return false
	}
	for i := range claim.OwnerReferences {
		r := &claim.OwnerReferences[i]
		switch {
		case matchesRef(r, set, controllerKind):
			if r.UID != set.UID {
				return true
			}
		case matchesRef(r, pod, podKind):
			if r.UID != pod.UID {
				return true
			}
		case r.Controller != nil && *r.Controller:
			return true
		}
	}
	return false
}

// hasNonControllerOwner reports whether set or pod owns claim without
// being its controller.
func hasNonControllerOwner(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	for _, r := range claim.OwnerReferences {
		if (r.UID == set.UID || r.UID == pod.UID) && (r.Controller == nil || !*r.Controller) {
			return true
		}
	}
	return false
}

// hasStaleOwnerRef reports whether target refers to owner's kind and name
// with another UID.
func hasStaleOwnerRef(target, owner metav1.Object, kind schema.GroupVersionKind) bool {
	refs := target.GetOwnerReferences()
	for i := range refs {
		if matchesRef(&refs[i], owner, kind) {
			return refs[i].UID != owner.GetUID()
		}
	}
	return false
}

func addControllerRef(refs []metav1.OwnerReference, owner metav1.Object, kind schema.GroupVersionKind) []metav1.OwnerReference {
	for _, r := range refs {
		if r.UID == owner.GetUID() {
			return refs
		}
	}
	return append(refs, *metav1.NewControllerRef(owner, kind))
}

func matchesRef(ref *metav1.OwnerReference, owner metav1.Object, kind schema.GroupVersionKind) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false
	}
	return gv.Group == kind.Group && ref.Kind == kind.Kind && ref.Name == owner.GetName()
}
