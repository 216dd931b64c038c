package registry

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
)

// sharedStorage serves one kind from another kind's storage, converting
// every object that crosses it. Keys are passed through unchanged: both
// kinds use the same etcd prefix.
type sharedStorage struct {
	inner storage.Interface
	conv  *rest.SharedStorage
}

var _ storage.Interface = (*sharedStorage)(nil)

// NewSharedStorage wraps inner (the storage of conv.Resource) for a kind
// served from it.
func NewSharedStorage(inner storage.Interface, conv *rest.SharedStorage) storage.Interface {
	return &sharedStorage{inner: inner, conv: conv}
}

func (s *sharedStorage) out(obj runtime.Object, err error) (runtime.Object, error) {
	if err != nil || obj == nil {
		return obj, err
	}
	return s.conv.FromStored(obj)
}

func (s *sharedStorage) Create(ctx context.Context, key string, obj runtime.Object) (runtime.Object, error) {
	in, err := s.conv.ToStored(obj)
	if err != nil {
		return nil, err
	}
	return s.out(s.inner.Create(ctx, key, in))
}

func (s *sharedStorage) Get(ctx context.Context, key string) (runtime.Object, error) {
	return s.out(s.inner.Get(ctx, key))
}

// storedOptions names the fields of a selector as the stored kind has
// them (upstream's field label conversion), and filters with the stored
// kind's attributes.
func (s *sharedStorage) storedOptions(opts storage.ListOptions) (storage.ListOptions, error) {
	if s.conv.StoredFields != nil {
		opts.Predicate.GetAttrs = s.conv.StoredFields
	}
	if opts.Predicate.Field == nil || len(s.conv.FieldLabels) == 0 {
		return opts, nil
	}
	f, err := opts.Predicate.Field.Transform(func(field, value string) (string, string, error) {
		if stored, ok := s.conv.FieldLabels[field]; ok {
			return stored, value, nil
		}
		return field, value, nil
	})
	if err != nil {
		return opts, err
	}
	opts.Predicate.Field = f
	return opts, nil
}

func (s *sharedStorage) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	opts, err := s.storedOptions(opts)
	if err != nil {
		return err
	}
	stored := s.conv.NewStoredList()
	if err := s.inner.GetList(ctx, key, opts, stored); err != nil {
		return err
	}
	converted, err := s.conv.ListFromStored(stored)
	if err != nil {
		return err
	}
	dst, src := reflect.ValueOf(listObj), reflect.ValueOf(converted)
	if dst.Kind() != reflect.Pointer || dst.Type() != src.Type() {
		return fmt.Errorf("shared storage: cannot fill a %T with a %T", listObj, converted)
	}
	dst.Elem().Set(src.Elem())
	return nil
}

func (s *sharedStorage) GuaranteedUpdate(ctx context.Context, key string, pre *storage.Preconditions, ignoreNotFound bool, tryUpdate storage.UpdateFunc) (runtime.Object, error) {
	return s.out(s.inner.GuaranteedUpdate(ctx, key, pre, ignoreNotFound, func(existing runtime.Object) (runtime.Object, error) {
		cur, err := s.conv.FromStored(existing)
		if err != nil {
			return nil, err
		}
		obj, err := tryUpdate(cur)
		if err != nil {
			return nil, err
		}
		return s.conv.ToStored(obj)
	}))
}

func (s *sharedStorage) Delete(ctx context.Context, key string, pre *storage.Preconditions, validate storage.ValidateDeletion) (runtime.Object, error) {
	var v storage.ValidateDeletion
	if validate != nil {
		v = func(ctx context.Context, obj runtime.Object) error {
			cur, err := s.conv.FromStored(obj)
			if err != nil {
				return err
			}
			return validate(ctx, cur)
		}
	}
	return s.out(s.inner.Delete(ctx, key, pre, v))
}

func (s *sharedStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	opts, err := s.storedOptions(opts)
	if err != nil {
		return nil, err
	}
	w, err := s.inner.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		if e.Type == watch.Error || e.Object == nil {
			return e, true
		}
		obj, err := s.conv.FromStored(e.Object)
		if err != nil {
			// Never the stored version under the requested one: the
			// watcher gets the failure and lists again.
			st := apierrors.NewInternalError(fmt.Errorf("converting a watch event: %w", err)).ErrStatus
			return watch.Event{Type: watch.Error, Object: &st}, true
		}
		e.Object = obj
		return e, true
	}), nil
}

func (s *sharedStorage) CurrentRevision(ctx context.Context) (int64, error) {
	return s.inner.CurrentRevision(ctx)
}
