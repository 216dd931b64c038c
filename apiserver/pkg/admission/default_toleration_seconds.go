package admission

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// DefaultTolerationSecondsName is upstream's plugin name.
const DefaultTolerationSecondsName = "DefaultTolerationSeconds"

// DefaultTolerationSeconds gives every new pod upstream's default
// tolerations for not-ready and unreachable nodes (300 s), unless it already
// tolerates them, so the node lifecycle controller evicts after five minutes.
type DefaultTolerationSeconds struct {
	Seconds int64
}

// Name implements Plugin.
func (*DefaultTolerationSeconds) Name() string { return DefaultTolerationSecondsName }

// Admit implements MutationInterface.
func (d *DefaultTolerationSeconds) Admit(_ context.Context, a *Attributes) error {
	if a.Operation != Create || a.Subresource != "" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	keys := [2]string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}
	var missing [2]bool
	n := 0
	for i, key := range keys {
		missing[i] = !tolerates(pod.Spec.Tolerations, key)
		if missing[i] {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	// One allocation for the seconds of both tolerations and one for the
	// grown list.
	seconds := make([]int64, n)
	tolerations := slices.Grow(pod.Spec.Tolerations, n)
	for i, key := range keys {
		if !missing[i] {
			continue
		}
		s := &seconds[0]
		seconds = seconds[1:]
		*s = d.Seconds
		tolerations = append(tolerations, corev1.Toleration{
			Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: s,
		})
	}
	pod.Spec.Tolerations = tolerations
	return nil
}

// tolerates reports whether one of tolerations tolerates the NoExecute taint
// key.
func tolerates(tolerations []corev1.Toleration, key string) bool {
	for _, t := range tolerations {
		if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") &&
			(t.Operator == corev1.TolerationOpExists || t.Key == key) {
			return true
		}
	}
	return false
}
