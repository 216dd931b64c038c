package controllerutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// RefManager claims objects for one controller, as upstream's
// ControllerRefManager: an owned object that still matches the selector is
// kept; one that no longer matches is released (its ownerReference
// removed); a matching orphan is adopted (given the controller's
// ownerReference). Adoption and release are strategic merge patches with a
// UID precondition, so an object deleted and recreated under the same name
// is never touched by mistake.
type RefManager[T metav1.Object] struct {
	controller metav1.Object
	apiVersion string
	kind       string
	selector   labels.Selector
	canAdopt   func(context.Context) error
	canOnce    sync.Once
	canErr     error
	patch      func(ctx context.Context, namespace, name string, data []byte) error
}

// NewPodRefManager returns a RefManager of pods for controller (of
// apiVersion and kind) with selector. canAdopt, called at most once and
// only before the first adoption, returns an error when the controller may
// no longer adopt (see RecheckDeletionTimestamp); nil allows it.
func NewPodRefManager(client kubernetes.Interface, controller metav1.Object, apiVersion, kind string, selector labels.Selector, canAdopt func(context.Context) error) *RefManager[*corev1.Pod] {
	return &RefManager[*corev1.Pod]{
		controller: controller, apiVersion: apiVersion, kind: kind, selector: selector, canAdopt: canAdopt,
		patch: func(ctx context.Context, ns, name string, data []byte) error {
			_, err := client.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
			return err
		},
	}
}

// NewReplicaSetRefManager is NewPodRefManager for ReplicaSets.
func NewReplicaSetRefManager(client kubernetes.Interface, controller metav1.Object, apiVersion, kind string, selector labels.Selector, canAdopt func(context.Context) error) *RefManager[*appsv1.ReplicaSet] {
	return &RefManager[*appsv1.ReplicaSet]{
		controller: controller, apiVersion: apiVersion, kind: kind, selector: selector, canAdopt: canAdopt,
		patch: func(ctx context.Context, ns, name string, data []byte) error {
			_, err := client.AppsV1().ReplicaSets(ns).Patch(ctx, name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
			return err
		},
	}
}

// Claim returns the objects of objs that the controller owns after
// adopting and releasing as needed. objs are the candidates: the objects
// the controller already owns and the orphans of its namespace. Objects of
// objs are never modified. The error joins the failed adoptions and
// releases; the objects returned are valid even then.
func (m *RefManager[T]) Claim(ctx context.Context, objs []T) ([]T, error) {
	claimed := make([]T, 0, len(objs))
	var errs []error
	for _, obj := range objs {
		ok, err := m.claimOne(ctx, obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			claimed = append(claimed, obj)
		}
	}
	return claimed, errors.Join(errs...)
}

func (m *RefManager[T]) claimOne(ctx context.Context, obj T) (bool, error) {
	matches := m.selector.Matches(labels.Set(obj.GetLabels()))
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		if ref.UID != m.controller.GetUID() {
			return false, nil
		}
		if matches {
			return true, nil
		}
		if m.controller.GetDeletionTimestamp() != nil {
			return false, nil
		}
		err := m.release(ctx, obj)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) {
			return false, err
		}
		return false, nil
	}
	if m.controller.GetDeletionTimestamp() != nil || !matches || obj.GetDeletionTimestamp() != nil ||
		obj.GetNamespace() != m.controller.GetNamespace() {
		return false, nil
	}
	if err := m.adopt(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

type ownerRefPatch struct {
	Metadata ownerRefPatchMeta `json:"metadata"`
}

type ownerRefPatchMeta struct {
	OwnerReferences []map[string]any `json:"ownerReferences"`
	UID             types.UID        `json:"uid"`
}

func (m *RefManager[T]) adopt(ctx context.Context, obj T) error {
	m.canOnce.Do(func() {
		if m.canAdopt != nil {
			m.canErr = m.canAdopt(ctx)
		}
	})
	if m.canErr != nil {
		return fmt.Errorf("can't adopt %s %s/%s: %w", m.kindOf(obj), obj.GetNamespace(), obj.GetName(), m.canErr)
	}
	ref := NewControllerRef(m.controller, m.apiVersion, m.kind)
	data, err := json.Marshal(ownerRefPatch{Metadata: ownerRefPatchMeta{
		OwnerReferences: []map[string]any{{
			"apiVersion": ref.APIVersion, "kind": ref.Kind, "name": ref.Name, "uid": ref.UID,
			"controller": true, "blockOwnerDeletion": true,
		}},
		UID: obj.GetUID(),
	}})
	if err != nil {
		return err
	}
	return m.patch(ctx, obj.GetNamespace(), obj.GetName(), data)
}

func (m *RefManager[T]) release(ctx context.Context, obj T) error {
	data, err := json.Marshal(ownerRefPatch{Metadata: ownerRefPatchMeta{
		OwnerReferences: []map[string]any{{"$patch": "delete", "uid": m.controller.GetUID()}},
		UID:             obj.GetUID(),
	}})
	if err != nil {
		return err
	}
	return m.patch(ctx, obj.GetNamespace(), obj.GetName(), data)
}

func (m *RefManager[T]) kindOf(obj T) string {
	switch any(obj).(type) {
	case *corev1.Pod:
		return "Pod"
	case *appsv1.ReplicaSet:
		return "ReplicaSet"
	}
	return fmt.Sprintf("%T", obj)
}

// RecheckDeletionTimestamp returns a canAdopt function for a RefManager:
// it reads the controller afresh with get (an uncached read, since the
// cache may be stale) and refuses adoption when the controller is gone,
// was replaced by another object of the same name (uid differs) or is being
// deleted.
func RecheckDeletionTimestamp(uid types.UID, get func(context.Context) (metav1.Object, error)) func(context.Context) error {
	return func(ctx context.Context) error {
		fresh, err := get(ctx)
		if err != nil {
			return err
		}
		if fresh.GetUID() != uid {
			return fmt.Errorf("original %s/%s is gone: got uid %v, wanted %v", fresh.GetNamespace(), fresh.GetName(), fresh.GetUID(), uid)
		}
		if fresh.GetDeletionTimestamp() != nil {
			return fmt.Errorf("%s/%s has just been deleted at %v", fresh.GetNamespace(), fresh.GetName(), fresh.GetDeletionTimestamp())
		}
		return nil
	}
}
