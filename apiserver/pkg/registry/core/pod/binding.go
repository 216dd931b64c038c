package pod

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
)

// CreateBinding assigns a pod to a node (pods/binding), as the scheduler does and
// upstream's BindingREST: under the Binding's UID and resourceVersion
// preconditions, in a compare-and-swap of the stored pod.
func CreateBinding(ctx context.Context, s rest.ObjectStore, ns, name string, b *corev1.Binding, dryRun bool) error {
	if err := ValidateBinding(b, name); err != nil {
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
	update := Bind(b, s.Time())
	if dryRun {
		cur, err := s.Get(ctx, ns, name)
		if err != nil {
			return err
		}
		_, err = update(cur)
		return err
	}
	_, err := s.GuaranteedUpdate(ctx, ns, name, pre, update)
	return err
}
