package garbagecollector

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// client returns the metadata client of the object's resource.
func (c *Controller) client(apiVersion, kind, namespace string) (metadata.ResourceInterface, error) {
	m, err := c.restMapping(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.metadata.Resource(m.Resource).Namespace(namespace), nil
	}
	return c.metadata.Resource(m.Resource), nil
}

// getObject GETs the object live; nil means it does not exist (any more)
// with that UID.
func (c *Controller) getObject(ctx context.Context, id objectReference) (*metav1.PartialObjectMetadata, error) {
	cl, err := c.client(id.APIVersion, id.Kind, id.Namespace)
	if err != nil {
		return nil, err
	}
	obj, err := cl.Get(ctx, id.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if obj.UID != id.UID {
		return nil, nil
	}
	return obj, nil
}

// attemptToDeleteItem decides about one node: delete it, detach it from
// absent owners, or leave it.
func (c *Controller) attemptToDeleteItem(ctx context.Context, uid types.UID) error {
	n, ok := c.graph.view(uid)
	if !ok {
		return nil
	}
	logger := klog.FromContext(ctx).WithValues("item", n.identity.String())
	if !n.virtual && n.beingDeleted && !n.deletingDependents {
		return nil
	}
	if n.deletingDependents {
		return c.processDeletingDependents(ctx, n)
	}
	latest, err := c.getObject(ctx, n.identity)
	if err != nil {
		return err
	}
	if latest == nil {
		// The object is gone (or is another object now): its dependents
		// have lost an owner.
		logger.V(5).Info("Item does not exist any more; looking at its dependents")
		c.enqueue(c.graph.remove(uid))
		return nil
	}
	if latest.DeletionTimestamp != nil && hasFinalizer(latest.Finalizers, metav1.FinalizerDeleteDependents) {
		return c.processDeletingDependents(ctx, n)
	}
	owners := latest.OwnerReferences
	if len(owners) > 0 {
		if err := c.decide(ctx, n, latest); err != nil {
			return err
		}
	}
	if n.virtual {
		// It exists but the informer has not shown it yet: look again.
		return errRequeue
	}
	return nil
}

// decide classifies the owners by live GETs and acts as upstream does.
func (c *Controller) decide(ctx context.Context, n nodeView, latest *metav1.PartialObjectMetadata) error {
	logger := klog.FromContext(ctx).WithValues("item", n.identity.String())
	var solid, dangling, waiting []metav1.OwnerReference
	for _, ref := range latest.OwnerReferences {
		owner, err := c.getObject(ctx, objectReference{OwnerReference: ref, Namespace: latest.Namespace})
		if err != nil {
			return err
		}
		switch {
		case owner == nil:
			dangling = append(dangling, ref)
		case owner.DeletionTimestamp != nil && hasFinalizer(owner.Finalizers, metav1.FinalizerDeleteDependents):
			waiting = append(waiting, ref)
		default:
			solid = append(solid, ref)
		}
	}
	switch {
	case len(solid) > 0:
		if len(dangling) == 0 && len(waiting) == 0 {
			return nil
		}
		logger.V(2).Info("Item has at least one existing owner; removing references to owners that are absent or waiting for their dependents")
		return c.removeOwnerRefs(ctx, n.identity, uidsOf(append(dangling, waiting...)))
	case len(waiting) > 0 && len(n.dependents) > 0:
		for _, d := range n.dependents {
			if d.deletingDependents {
				// A cycle: stop blocking the owners, as upstream does.
				logger.V(2).Info("Processing item: a dependent is also waiting for its dependents; unblocking the owners")
				if err := c.unblockOwnerRefs(ctx, n.identity, uidsOf(waiting)); err != nil {
					return err
				}
				break
			}
		}
		logger.V(2).Info("At least one owner is waiting for dependents and the item has dependents; deleting it in the foreground")
		return c.deleteObject(ctx, n.identity, metav1.DeletePropagationForeground)
	default:
		policy := metav1.DeletePropagationBackground
		switch {
		case hasFinalizer(latest.Finalizers, metav1.FinalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case hasFinalizer(latest.Finalizers, metav1.FinalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		logger.V(2).Info("Deleting an item whose owners are all gone", "propagationPolicy", policy)
		return c.deleteObject(ctx, n.identity, policy)
	}
}

func uidsOf(refs []metav1.OwnerReference) map[types.UID]bool {
	out := map[types.UID]bool{}
	for _, r := range refs {
		out[r.UID] = true
	}
	return out
}

// processDeletingDependents removes the foregroundDeletion finalizer once
// no blocking dependent is left, and otherwise looks at those dependents.
func (c *Controller) processDeletingDependents(ctx context.Context, n nodeView) error {
	var blocking []dependentView
	for _, d := range n.dependents {
		if d.blocking {
			blocking = append(blocking, d)
		}
	}
	if len(blocking) == 0 {
		klog.FromContext(ctx).V(2).Info("Removing the foregroundDeletion finalizer: no blocking dependents are left", "item", n.identity.String())
		return c.removeFinalizer(ctx, n.identity, metav1.FinalizerDeleteDependents)
	}
	for _, d := range blocking {
		if !d.deletingDependents {
			c.attemptToDelete.Add(d.identity.UID)
		}
	}
	return nil
}

// attemptToOrphanItem removes the owner's reference from its dependents,
// then the orphan finalizer from the owner.
func (c *Controller) attemptToOrphanItem(ctx context.Context, uid types.UID) error {
	n, ok := c.graph.view(uid)
	if !ok {
		return nil
	}
	for _, d := range n.dependents {
		if err := c.removeOwnerRefs(ctx, d.identity, map[types.UID]bool{uid: true}); err != nil {
			return fmt.Errorf("orphaning the dependents of %s: %w", n.identity, err)
		}
	}
	klog.FromContext(ctx).V(2).Info("Orphaned the dependents; removing the orphan finalizer", "item", n.identity.String(), "dependents", len(n.dependents))
	return c.removeFinalizer(ctx, n.identity, metav1.FinalizerOrphanDependents)
}

// deleteObject deletes the object with a UID precondition.
func (c *Controller) deleteObject(ctx context.Context, id objectReference, policy metav1.DeletionPropagation) error {
	cl, err := c.client(id.APIVersion, id.Kind, id.Namespace)
	if err != nil {
		return err
	}
	uid := id.UID
	err = cl.Delete(ctx, id.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &policy})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// removeOwnerRefs drops the references to uids from the object, by a JSON
// merge patch carrying the object's UID (a precondition: UIDs are
// immutable).
func (c *Controller) removeOwnerRefs(ctx context.Context, id objectReference, uids map[types.UID]bool) error {
	return c.patchOwnerRefs(ctx, id, func(refs []metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
		var out []metav1.OwnerReference
		for _, r := range refs {
			if !uids[r.UID] {
				out = append(out, r)
			}
		}
		return out, len(out) != len(refs)
	})
}

// unblockOwnerRefs sets blockOwnerDeletion=false on the references to uids.
func (c *Controller) unblockOwnerRefs(ctx context.Context, id objectReference, uids map[types.UID]bool) error {
	return c.patchOwnerRefs(ctx, id, func(refs []metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
		changed := false
		out := make([]metav1.OwnerReference, len(refs))
		f := false
		for i, r := range refs {
			out[i] = r
			if uids[r.UID] && blocks(r) {
				out[i].BlockOwnerDeletion = &f
				changed = true
			}
		}
		return out, changed
	})
}

func (c *Controller) patchOwnerRefs(ctx context.Context, id objectReference, edit func([]metav1.OwnerReference) ([]metav1.OwnerReference, bool)) error {
	cl, err := c.client(id.APIVersion, id.Kind, id.Namespace)
	if err != nil {
		return err
	}
	obj, err := cl.Get(ctx, id.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if obj.UID != id.UID {
		return nil
	}
	refs, changed := edit(obj.OwnerReferences)
	if !changed {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": refs, "uid": id.UID}})
	if err != nil {
		return err
	}
	_, err = cl.Patch(ctx, id.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// removeFinalizer removes finalizer from the object with a patch that
// carries the resourceVersion (a precondition), retried on conflict.
func (c *Controller) removeFinalizer(ctx context.Context, id objectReference, finalizer string) error {
	cl, err := c.client(id.APIVersion, id.Kind, id.Namespace)
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		obj, err := cl.Get(ctx, id.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if obj.UID != id.UID || !hasFinalizer(obj.Finalizers, finalizer) {
			return nil
		}
		var rest []string
		for _, f := range obj.Finalizers {
			if f != finalizer {
				rest = append(rest, f)
			}
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": rest, "resourceVersion": obj.ResourceVersion}})
		if err != nil {
			return err
		}
		_, err = cl.Patch(ctx, id.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}
