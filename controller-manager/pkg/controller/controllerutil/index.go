package controllerutil

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
)

// ControllerUIDIndex is the name of the informer index that maps an object
// to the UID of its controller (its ownerReference with controller: true),
// or, for an object without a controller, to OrphanIndexKey(namespace).
const ControllerUIDIndex = "controllerUID"

// OrphanIndexKey is the ControllerUIDIndex key under which objects of
// namespace that have no controller are filed. It cannot collide with a UID.
func OrphanIndexKey(namespace string) string { return "orphan/" + namespace }

// controllerUIDIndexFunc files obj under its controller's UID, or as an
// orphan of its namespace.
func controllerUIDIndexFunc(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("indexing by controller: %w", err)
	}
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return []string{OrphanIndexKey(m.GetNamespace())}, nil
}

// AddControllerUIDIndex adds the ControllerUIDIndex to inf unless it already
// has it, so every controller sharing an informer may call it (before or
// after the informer starts).
func AddControllerUIDIndex(inf cache.SharedIndexInformer) error {
	if hasControllerUIDIndex(inf) {
		return nil
	}
	err := inf.AddIndexers(cache.Indexers{ControllerUIDIndex: controllerUIDIndexFunc})
	if err != nil && hasControllerUIDIndex(inf) {
		// Another controller added it in the meantime.
		return nil
	}
	return err
}

func hasControllerUIDIndex(inf cache.SharedIndexInformer) bool {
	_, ok := inf.GetIndexer().GetIndexers()[ControllerUIDIndex]
	return ok
}

// ByController returns the objects of indexer whose controller has uid.
func ByController[T any](indexer cache.Indexer, uid types.UID) ([]T, error) {
	return byIndexKey[T](indexer, string(uid))
}

// Orphans returns the objects of indexer in namespace that have no
// controller.
func Orphans[T any](indexer cache.Indexer, namespace string) ([]T, error) {
	return byIndexKey[T](indexer, OrphanIndexKey(namespace))
}

func byIndexKey[T any](indexer cache.Indexer, key string) ([]T, error) {
	objs, err := indexer.ByIndex(ControllerUIDIndex, key)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		t, ok := o.(T)
		if !ok {
			return nil, fmt.Errorf("index %s holds a %T", ControllerUIDIndex, o)
		}
		out = append(out, t)
	}
	return out, nil
}

// FromDeleted returns the object of an informer's delete notification:
// obj itself, or the last state a tombstone (cache.DeletedFinalStateUnknown)
// holds. ok is false (and the error handled) when it is neither a T nor a
// tombstone of one.
func FromDeleted[T any](obj any) (T, bool) {
	if t, ok := obj.(T); ok {
		return t, true
	}
	var zero T
	tomb, ok := obj.(cache.DeletedFinalStateUnknown)
	if !ok {
		utilruntime.HandleError(fmt.Errorf("couldn't get object from tombstone %#v", obj))
		return zero, false
	}
	t, ok := tomb.Obj.(T)
	if !ok {
		utilruntime.HandleError(fmt.Errorf("tombstone contained an unexpected object %#v", obj))
		return zero, false
	}
	return t, true
}
