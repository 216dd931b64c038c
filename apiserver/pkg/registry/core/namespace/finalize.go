package namespace

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
)

// Finalize replaces a namespace's spec.finalizers (namespaces/finalize)
// with those of obj; when none are left and the namespace is being
// deleted, it is removed, as upstream's FinalizeREST and the namespace
// deleter.
func Finalize(ctx context.Context, s rest.ObjectStore, name string, obj runtime.Object, dryRun bool) (runtime.Object, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, apierrors.NewBadRequest("expected a Namespace")
	}
	fn := func(_ context.Context, current runtime.Object, exists bool) (runtime.Object, error) {
		if !exists {
			return nil, fmt.Errorf("%w: namespace %s", storage.ErrNotFound, name)
		}
		return SetFinalizers(current, ns), nil
	}
	out, _, err := s.Update(ctx, "", name, fn, FinalizeStrategy{Strategy: Strategy}, dryRun)
	if err != nil {
		return nil, err
	}
	done, ok := out.(*corev1.Namespace)
	if ok && !dryRun && done.DeletionTimestamp != nil && !Finalizing(done) && len(done.Finalizers) == 0 {
		uid := done.UID
		deleted, err := s.DeleteStored(ctx, "", name, &storage.Preconditions{UID: &uid})
		if err != nil && !errors.Is(err, storage.ErrNotFound) && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if deleted != nil {
			return deleted, nil
		}
	}
	return out, nil
}
