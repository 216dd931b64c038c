package daemonset

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Label keys of daemon pods, as upstream names them.
const (
	// TemplateGenerationLabel holds the DaemonSet's template generation
	// (its deprecated.daemonset.template.generation annotation) at the
	// pod's creation.
	TemplateGenerationLabel = "pod-template-generation"
	// RevisionHashLabel holds the hash of the DaemonSet's revision at the
	// pod's creation; ControllerRevisions carry it too.
	RevisionHashLabel = appsv1.DefaultDaemonSetUniqueLabelKey
)

// The taints every daemon pod tolerates, as upstream's
// AddOrUpdateDaemonPodTolerations adds them.
const (
	taintNodeNotReady           = "node.kubernetes.io/not-ready"
	taintNodeUnreachable        = "node.kubernetes.io/unreachable"
	taintNodeDiskPressure       = "node.kubernetes.io/disk-pressure"
	taintNodeMemoryPressure     = "node.kubernetes.io/memory-pressure"
	taintNodePIDPressure        = "node.kubernetes.io/pid-pressure"
	taintNodeUnschedulable      = "node.kubernetes.io/unschedulable"
	taintNodeNetworkUnavailable = "node.kubernetes.io/network-unavailable"
)

// NodeShouldRunDaemonPod judges node for ds as upstream does, with the
// scheduler's rules (node name, node selector, required node affinity,
// taints against the template's tolerations plus the daemon tolerations):
// shouldRun when a daemon pod should be created there,
// shouldContinueRunning when an existing one may stay (a NoSchedule taint
// the pod does not tolerate keeps new pods off but does not evict).
func NodeShouldRunDaemonPod(node *corev1.Node, ds *appsv1.DaemonSet) (shouldRun, shouldContinueRunning bool) {
	pod := NewPod(ds, node.Name)
	// A template naming another node never runs here.
	if ds.Spec.Template.Spec.NodeName != "" && ds.Spec.Template.Spec.NodeName != node.Name {
		return false, false
	}
	fitsNodeName, fitsNodeAffinity, fitsTaints := predicates(pod, node, node.Spec.Taints)
	if !fitsNodeName || !fitsNodeAffinity {
		return false, false
	}
	if !fitsTaints {
		// Only an untolerated NoExecute taint evicts a running pod.
		_, untoleratedNoExecute := v1helper.FindMatchingUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoExecute
		})
		return false, !untoleratedNoExecute
	}
	return true, true
}

// predicates are the scheduler's checks that decide a daemon pod's node.
func predicates(pod *corev1.Pod, node *corev1.Node, taints []corev1.Taint) (fitsNodeName, fitsNodeAffinity, fitsTaints bool) {
	fitsNodeName = pod.Spec.NodeName == "" || pod.Spec.NodeName == node.Name
	// An invalid selector matches nothing, as in the scheduler.
	fitsNodeAffinity, _ = nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	_, untolerated := v1helper.FindMatchingUntoleratedTaint(taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoExecute || t.Effect == corev1.TaintEffectNoSchedule
	})
	fitsTaints = !untolerated
	return fitsNodeName, fitsNodeAffinity, fitsTaints
}

// NewPod is the daemon pod ds would run on nodeName, as the predicates
// see it: the template with the daemon tolerations, bound to nodeName.
func NewPod(ds *appsv1.DaemonSet, nodeName string) *corev1.Pod {
	pod := &corev1.Pod{Spec: *ds.Spec.Template.Spec.DeepCopy(), ObjectMeta: *ds.Spec.Template.ObjectMeta.DeepCopy()}
	pod.Namespace = ds.Namespace
	pod.Spec.NodeName = nodeName
	AddOrUpdateDaemonPodTolerations(&pod.Spec)
	return pod
}

// AddOrUpdateDaemonPodTolerations adds the tolerations upstream gives
// every daemon pod: not-ready and unreachable (NoExecute), so the node
// lifecycle controller never evicts it; disk, memory and PID pressure and
// unschedulable (NoSchedule); network-unavailable for hostNetwork pods.
func AddOrUpdateDaemonPodTolerations(spec *corev1.PodSpec) {
	add := func(key string, effect corev1.TaintEffect) {
		addOrUpdateToleration(spec, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect})
	}
	add(taintNodeNotReady, corev1.TaintEffectNoExecute)
	add(taintNodeUnreachable, corev1.TaintEffectNoExecute)
	add(taintNodeDiskPressure, corev1.TaintEffectNoSchedule)
	add(taintNodeMemoryPressure, corev1.TaintEffectNoSchedule)
	add(taintNodePIDPressure, corev1.TaintEffectNoSchedule)
	add(taintNodeUnschedulable, corev1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(taintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)
	}
}

// addOrUpdateToleration adds t to spec, replacing a toleration of the same
// key, operator, value and effect (upstream's AddOrUpdateTolerationInPodSpec).
func addOrUpdateToleration(spec *corev1.PodSpec, t corev1.Toleration) {
	for i := range spec.Tolerations {
		old := &spec.Tolerations[i]
		if old.Key == t.Key && old.Operator == t.Operator && old.Value == t.Value && old.Effect == t.Effect {
			*old = t
			return
		}
	}
	spec.Tolerations = append(spec.Tolerations, t)
}

// ReplaceNodeNameAffinity returns affinity with its required node affinity
// replaced by one term: metadata.name In [nodeName]. The scheduler then
// places the pod on that node and nowhere else (upstream's
// ReplaceDaemonSetPodNodeNameNodeAffinity). affinity may be changed.
func ReplaceNodeNameAffinity(affinity *corev1.Affinity, nodeName string) *corev1.Affinity {
	terms := []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
		Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{nodeName},
	}}}}
	if affinity == nil {
		affinity = &corev1.Affinity{}
	}
	if affinity.NodeAffinity == nil {
		affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	if affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = terms
	return affinity
}

// TargetNodeName is the node pod runs on, or the one its metadata.name
// node affinity names while it is not yet scheduled.
func TargetNodeName(pod *corev1.Pod) (string, error) {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName, nil
	}
	a := pod.Spec.Affinity
	if a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == metav1.ObjectNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
					return f.Values[0], nil
				}
			}
		}
	}
	return "", fmt.Errorf("no node name found for pod %s/%s", pod.Namespace, pod.Name)
}

// podTemplate is the template of ds's pods for revision hash: the daemon
// tolerations, and the labels pod-template-generation (when ds has a
// template generation) and controller-revision-hash.
func podTemplate(ds *appsv1.DaemonSet, generation *int64, hash string) *corev1.PodTemplateSpec {
	t := ds.Spec.Template.DeepCopy()
	AddOrUpdateDaemonPodTolerations(&t.Spec)
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	if generation != nil {
		t.Labels[TemplateGenerationLabel] = fmt.Sprint(*generation)
	}
	if hash != "" {
		t.Labels[RevisionHashLabel] = hash
	}
	return t
}

// templateGeneration reads ds's deprecated.daemonset.template.generation
// annotation, which the API server keeps; nil when absent.
func templateGeneration(ds *appsv1.DaemonSet) (*int64, error) {
	v, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	if !ok {
		return nil, nil
	}
	var g int64
	if _, err := fmt.Sscan(v, &g); err != nil {
		return nil, fmt.Errorf("annotation %s=%q: %w", appsv1.DeprecatedTemplateGeneration, v, err)
	}
	return &g, nil
}

// isPodUpdated reports whether pod belongs to ds's current revision: its
// hash label is hash, or its template generation label is generation.
func isPodUpdated(pod *corev1.Pod, hash string, generation *int64) bool {
	templateMatches := generation != nil && pod.Labels[TemplateGenerationLabel] == fmt.Sprint(*generation)
	hashMatches := hash != "" && pod.Labels[RevisionHashLabel] == hash
	return hashMatches || templateMatches
}

// surgeCount and unavailableCount scale the rolling update's maxSurge and
// maxUnavailable to the number of nodes that should run a pod (rounding
// up, as upstream).
func surgeCount(ds *appsv1.DaemonSet, numberToSchedule int) (int, error) {
	r := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || r == nil || r.MaxSurge == nil {
		return 0, nil
	}
	return intstr.GetScaledValueFromIntOrPercent(r.MaxSurge, numberToSchedule, true)
}

func unavailableCount(ds *appsv1.DaemonSet, numberToSchedule int) (int, error) {
	r := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || r == nil || r.MaxUnavailable == nil {
		return 0, nil
	}
	return intstr.GetScaledValueFromIntOrPercent(r.MaxUnavailable, numberToSchedule, true)
}

// allowsSurge reports whether ds's rolling update may run two pods on a
// node.
func allowsSurge(ds *appsv1.DaemonSet) bool {
	n, err := surgeCount(ds, 1)
	return err == nil && n != 0
}
