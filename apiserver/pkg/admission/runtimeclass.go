package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// RuntimeClassName is upstream's plugin name.
const RuntimeClassName = "RuntimeClass"

// RuntimeClass rejects a new pod naming a missing RuntimeClass, copies the
// class's overhead into spec.overhead and merges its scheduling node
// selector and tolerations into the pod, as upstream does.
type RuntimeClass struct {
	Objects Objects
}

// Name implements Plugin.
func (*RuntimeClass) Name() string { return RuntimeClassName }

func (r *RuntimeClass) class(ctx context.Context, a *Attributes, pod *corev1.Pod) (*nodev1.RuntimeClass, error) {
	if pod.Spec.RuntimeClassName == nil {
		return nil, nil
	}
	obj, err := r.Objects.Get(ctx, "node.k8s.io", "runtimeclasses", "", *pod.Spec.RuntimeClassName)
	if apierrors.IsNotFound(err) {
		return nil, forbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", *pod.Spec.RuntimeClassName))
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return obj.(*nodev1.RuntimeClass), nil
}

// Admit implements MutationInterface.
func (r *RuntimeClass) Admit(ctx context.Context, a *Attributes) error {
	if !isCreateOf(a, "", "pods") {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	rc, err := r.class(ctx, a, pod)
	if err != nil || rc == nil {
		return err
	}
	if rc.Overhead != nil {
		if pod.Spec.Overhead != nil && !equality.Semantic.DeepEqual(pod.Spec.Overhead, rc.Overhead.PodFixed) {
			return forbidden(a, fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
		pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	}
	if s := rc.Scheduling; s != nil {
		if len(s.NodeSelector) > 0 && pod.Spec.NodeSelector == nil {
			pod.Spec.NodeSelector = map[string]string{}
		}
		for k, v := range s.NodeSelector {
			if old, ok := pod.Spec.NodeSelector[k]; ok && old != v {
				return forbidden(a, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, old))
			}
			pod.Spec.NodeSelector[k] = v
		}
		pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, s.Tolerations)
	}
	return nil
}

// Validate implements ValidationInterface: a pod's overhead must be its
// RuntimeClass's.
func (r *RuntimeClass) Validate(ctx context.Context, a *Attributes) error {
	if !isCreateOf(a, "", "pods") {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	rc, err := r.class(ctx, a, pod)
	if err != nil {
		return err
	}
	if rc == nil || rc.Overhead == nil {
		if pod.Spec.Overhead != nil {
			return forbidden(a, fmt.Errorf("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
		}
		return nil
	}
	if !equality.Semantic.DeepEqual(pod.Spec.Overhead, rc.Overhead.PodFixed) {
		return forbidden(a, fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
	}
	return nil
}

// mergeTolerations adds the tolerations of extra that the pod does not
// already have (upstream's tolerations.MergeTolerations keeps the broadest
// of overlapping ones; skiff adds exact duplicates only once).
func mergeTolerations(have, extra []corev1.Toleration) []corev1.Toleration {
	out := append([]corev1.Toleration(nil), have...)
	for _, t := range extra {
		dup := false
		for _, h := range out {
			if h.MatchToleration(&t) && equalSeconds(h.TolerationSeconds, t.TolerationSeconds) {
				dup = true
				break
			}
		}
		if !dup {
			// A copy: extra is the cached RuntimeClass's own.
			out = append(out, *t.DeepCopy())
		}
	}
	return out
}

func equalSeconds(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
