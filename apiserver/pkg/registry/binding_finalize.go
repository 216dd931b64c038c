package registry

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/registry/core/namespace"
	"skiff.dev/apiserver/pkg/registry/core/pod"
	"skiff.dev/apiserver/pkg/storage"
)

// Bind assigns a pod to a node (pods/binding), as the scheduler does.
func (s *Store) Bind(ctx context.Context, ns, name string, b *corev1.Binding, dryRun bool) error {
	if err := pod.ValidateBinding(b, name); err != nil {
		return err
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
	update := pod.Bind(b, s.now())
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

// Finalize replaces a namespace's spec.finalizers (namespaces/finalize);
// when none are left and the namespace is being deleted, it is removed.
func (s *Store) Finalize(ctx context.Context, name string, ns *corev1.Namespace, dryRun bool) (runtime.Object, error) {
	fn := func(_ context.Context, current runtime.Object, exists bool) (runtime.Object, error) {
		if !exists {
			return nil, fmt.Errorf("%w: namespace %s", storage.ErrNotFound, name)
		}
		return namespace.SetFinalizers(current, ns), nil
	}
	out, _, err := s.Update(ctx, "", name, fn, namespace.FinalizeStrategy{Strategy: s.R.Strategy}, dryRun)
	if err != nil {
		return nil, err
	}
	done, ok := out.(*corev1.Namespace)
	if ok && !dryRun && done.DeletionTimestamp != nil && !namespace.Finalizing(done) && len(done.Finalizers) == 0 {
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
