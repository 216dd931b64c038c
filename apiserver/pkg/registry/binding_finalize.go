package registry

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/storage"
)

// Bind assigns a pod to a node (pods/binding), as the scheduler does.
func (s *Store) Bind(ctx context.Context, ns, name string, b *corev1.Binding, dryRun bool) error {
	var errs field.ErrorList
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Binding").GroupKind(), b.Name, errs)
	}
	if b.Name != "" && b.Name != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", b.Name, name))
	}
	var pre *storage.Preconditions
	if b.UID != "" {
		uid := b.UID
		pre = &storage.Preconditions{UID: &uid}
	}
	if b.ResourceVersion != "" {
		rv := b.ResourceVersion
		if pre == nil {
			pre = &storage.Preconditions{}
		}
		pre.ResourceVersion = &rv
	}
	update := func(existing runtime.Object) (runtime.Object, error) {
		pod := existing.DeepCopyObject().(*corev1.Pod)
		if pod.DeletionTimestamp != nil {
			return nil, fmt.Errorf("%w: pod %s is being deleted, cannot be assigned to a host", storage.ErrConflict, pod.Name)
		}
		if pod.Spec.NodeName != "" {
			return nil, fmt.Errorf("%w: pod %s is already assigned to node %q", storage.ErrConflict, pod.Name, pod.Spec.NodeName)
		}
		pod.Spec.NodeName = b.Target.Name
		for k, v := range b.Annotations {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
		setPodCondition(pod, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(s.now())})
		return pod, nil
	}
	if dryRun {
		cur, err := s.Get(ctx, ns, name)
		if err != nil {
			return err
		}
		_, err = update(cur)
		return err
	}
	_, err := s.Storage.GuaranteedUpdate(ctx, s.Key(ns, name), pre, false, update)
	return err
}

func setPodCondition(pod *corev1.Pod, c corev1.PodCondition) {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == c.Type {
			if pod.Status.Conditions[i].Status == c.Status {
				c.LastTransitionTime = pod.Status.Conditions[i].LastTransitionTime
			}
			pod.Status.Conditions[i] = c
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}

// Finalize replaces a namespace's spec.finalizers (namespaces/finalize);
// when none are left and the namespace is being deleted, it is removed.
func (s *Store) Finalize(ctx context.Context, name string, ns *corev1.Namespace, dryRun bool) (runtime.Object, error) {
	fn := func(_ context.Context, current runtime.Object, exists bool) (runtime.Object, error) {
		if !exists {
			return nil, fmt.Errorf("%w: namespace %s", storage.ErrNotFound, name)
		}
		cur := current.DeepCopyObject().(*corev1.Namespace)
		if ns.ResourceVersion != "" {
			cur.ResourceVersion = ns.ResourceVersion
		}
		cur.Spec.Finalizers = ns.Spec.Finalizers
		return cur, nil
	}
	out, _, err := s.Update(ctx, "", name, fn, finalizeStrategy{s.R.Strategy}, dryRun)
	if err != nil {
		return nil, err
	}
	done, ok := out.(*corev1.Namespace)
	if ok && !dryRun && done.DeletionTimestamp != nil && len(done.Spec.Finalizers) == 0 && len(done.Finalizers) == 0 {
		uid := done.UID
		deleted, err := s.Storage.Delete(ctx, s.Key("", name), &storage.Preconditions{UID: &uid}, nil)
		if err != nil && !IsNotFound(err) {
			return nil, err
		}
		if deleted != nil {
			return deleted, nil
		}
	}
	return out, nil
}

// finalizeStrategy lets namespaces/finalize change spec.finalizers only.
type finalizeStrategy struct{ Strategy }

func (finalizeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	n, o := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	fin := n.Spec.Finalizers
	*n = *o.DeepCopy()
	n.Spec.Finalizers = fin
}

func (finalizeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateNamespaceFinalizeUpdate(obj.(*corev1.Namespace), old.(*corev1.Namespace))
}
