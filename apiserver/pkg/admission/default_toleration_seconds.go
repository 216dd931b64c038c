package admission

import (
	"context"

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
	seconds := d.Seconds
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		tolerated := false
		for _, t := range pod.Spec.Tolerations {
			if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") &&
				(t.Operator == corev1.TolerationOpExists || t.Key == key) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			s := seconds
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{
				Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &s,
			})
		}
	}
	return nil
}
