package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
)

// PriorityName is upstream's plugin name.
const PriorityName = "Priority"

// Priority resolves a new pod's priorityClassName to spec.priority and
// spec.preemptionPolicy; a pod naming no class gets the globalDefault class
// (or priority 0). It also keeps PriorityClasses to one globalDefault.
type Priority struct {
	Objects Objects
}

// Name implements Plugin.
func (*Priority) Name() string { return PriorityName }

// Admit implements MutationInterface.
func (p *Priority) Admit(ctx context.Context, a *Attributes) error {
	if !isCreateOf(a, "", "pods") {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	var (
		priority int32
		policy   *corev1.PreemptionPolicy
	)
	if pod.Spec.PriorityClassName == "" {
		pc, err := p.defaultClass(ctx)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to get default priority class: %v", err))
		}
		if pc != nil {
			pod.Spec.PriorityClassName = pc.Name
			priority, policy = pc.Value, pc.PreemptionPolicy
		} else {
			// No default class: priority 0 and, as upstream, the policy a
			// class gets by default.
			policy = ptr.To(corev1.PreemptLowerPriority)
		}
	} else {
		obj, err := p.Objects.Get(ctx, "scheduling.k8s.io", "priorityclasses", "", pod.Spec.PriorityClassName)
		if apierrors.IsNotFound(err) {
			return forbidden(a, fmt.Errorf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
		}
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to get PriorityClass with name %s: %v", pod.Spec.PriorityClassName, err))
		}
		pc := obj.(*schedulingv1.PriorityClass)
		priority, policy = pc.Value, pc.PreemptionPolicy
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return forbidden(a, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
	}
	pod.Spec.Priority = &priority
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return forbidden(a, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		v := *policy
		pod.Spec.PreemptionPolicy = &v
	}
	return nil
}

// defaultClass is the globalDefault class with the lowest value, or nil.
func (p *Priority) defaultClass(ctx context.Context) (*schedulingv1.PriorityClass, error) {
	list, err := p.Objects.List(ctx, "scheduling.k8s.io", "priorityclasses", "")
	if err != nil {
		return nil, err
	}
	var best *schedulingv1.PriorityClass
	for _, obj := range list {
		pc, ok := obj.(*schedulingv1.PriorityClass)
		if ok && pc.GlobalDefault && (best == nil || pc.Value < best.Value) {
			best = pc
		}
	}
	return best, nil
}

// Validate implements ValidationInterface: only one PriorityClass may be the
// global default.
func (p *Priority) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource.Group != "scheduling.k8s.io" || a.Resource.Resource != "priorityclasses" || a.Subresource != "" {
		return nil
	}
	if a.Operation != Create && a.Operation != Update {
		return nil
	}
	pc, ok := a.Object.(*schedulingv1.PriorityClass)
	if !ok || !pc.GlobalDefault {
		return nil
	}
	def, err := p.defaultClass(ctx)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if def != nil && def.Name != pc.Name {
		return forbidden(a, fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", def.Name))
	}
	return nil
}
