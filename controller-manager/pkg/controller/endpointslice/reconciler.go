package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// endpointMeta is what slices are grouped by: one port set, one address
// type.
type endpointMeta struct {
	ports       []discoveryv1.EndpointPort
	addressType discoveryv1.AddressType
}

// reconcile creates, updates and deletes svc's slices so that they hold
// one endpoint per pod of pods that belongs in them, as upstream's
// Reconciler does: slices of an address type the Service no longer has
// are deleted, then each address type is reconciled on its own.
func (c *Controller) reconcile(ctx context.Context, svc *corev1.Service, pods []*corev1.Pod,
	existing []*discoveryv1.EndpointSlice, triggerTime time.Time, st *metrics.EndpointSliceSync) error {
	logger := klog.FromContext(ctx)
	var errs []error
	var toDelete []*discoveryv1.EndpointSlice
	byType := map[discoveryv1.AddressType][]*discoveryv1.EndpointSlice{}
	supported := addressTypesForService(logger, svc)
	for _, s := range existing {
		if !supported.Has(s.AddressType) {
			toDelete = append(toDelete, s)
			continue
		}
		byType[s.AddressType] = append(byType[s.AddressType], s)
	}
	types := supported.UnsortedList()
	slices.Sort(types)
	for _, t := range types {
		if err := c.reconcileByAddressType(ctx, svc, pods, byType[t], triggerTime, t, st); err != nil {
			errs = append(errs, err)
		}
	}
	for _, s := range toDelete {
		if err := c.deleteEndpointSlice(ctx, svc, s); err != nil {
			errs = append(errs, fmt.Errorf("error deleting %s EndpointSlice for Service %s/%s: %w", s.Name, svc.Namespace, svc.Name, err))
			continue
		}
		st.Deletes++
		st.Removed += len(s.Endpoints)
	}
	return errors.Join(errs...)
}

// deleteEndpointSlice deletes slice; one already gone is fine.
func (c *Controller) deleteEndpointSlice(ctx context.Context, svc *corev1.Service, slice *discoveryv1.EndpointSlice) error {
	err := c.client.DiscoveryV1().EndpointSlices(svc.Namespace).Delete(ctx, slice.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	c.tracker.ExpectDeletion(slice)
	return nil
}

// reconcileByAddressType reconciles the slices of one address type.
func (c *Controller) reconcileByAddressType(ctx context.Context, svc *corev1.Service, pods []*corev1.Pod,
	existing []*discoveryv1.EndpointSlice, triggerTime time.Time, addressType discoveryv1.AddressType, st *metrics.EndpointSliceSync) error {
	logger := klog.FromContext(ctx)
	var errs []error
	var toCreate, toUpdate, toDelete []*discoveryv1.EndpointSlice

	// What exists, by port set. Slices owned by another Service of the
	// same name (deleted and recreated) go.
	existingByPorts := map[portMapKey][]*discoveryv1.EndpointSlice{}
	for _, s := range existing {
		if ownedBy(s, svc) {
			k := newPortMapKey(s.Ports)
			existingByPorts[k] = append(existingByPorts[k], s)
		} else {
			toDelete = append(toDelete, s)
		}
	}

	// What should exist, by port set.
	desiredMeta := map[portMapKey]*endpointMeta{}
	desired := map[portMapKey]endpointSet{}
	for _, pod := range pods {
		if !ShouldPodBeInEndpoints(pod, true) {
			continue
		}
		ports := endpointPorts(logger, svc, pod)
		k := newPortMapKey(ports)
		if _, ok := desired[k]; !ok {
			desired[k] = endpointSet{}
			desiredMeta[k] = &endpointMeta{ports: ports, addressType: addressType}
		}
		node, err := c.nodeLister.Get(pod.Spec.NodeName)
		if err != nil {
			if !apierrors.IsNotFound(err) {
				return err
			}
			node = nil
			// A pod on a Node that does not exist is left out (and the
			// Service retried), unless the Service publishes not-ready
			// addresses: a missing Node must not keep a slice stale.
			if !svc.Spec.PublishNotReadyAddresses {
				logger.Info("Skipping Pod for Service, Node not found", "pod", klog.KObj(pod), "service", klog.KObj(svc), "node", klog.KRef("", pod.Spec.NodeName))
				errs = append(errs, fmt.Errorf("skipping Pod %s for Service %s/%s: Node %s Not Found", pod.Name, svc.Namespace, svc.Name, pod.Spec.NodeName))
				continue
			}
		}
		ep := podToEndpoint(pod, node, svc, addressType)
		if len(ep.Addresses) > 0 {
			desired[k][keyOf(&ep)] = &ep
		}
	}

	// Port sets in a stable order, so the same input gives the same
	// writes.
	keys := make([]portMapKey, 0, len(desired))
	for k := range desired {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		create, update, del := c.reconcileByPortMapping(logger, svc, existingByPorts[k], desired[k], desiredMeta[k])
		toCreate = append(toCreate, create...)
		toUpdate = append(toUpdate, update...)
		toDelete = append(toDelete, del...)
	}
	// Port sets no pod serves any more.
	stale := make([]portMapKey, 0, len(existingByPorts))
	for k := range existingByPorts {
		if _, ok := desired[k]; !ok {
			stale = append(stale, k)
		}
	}
	slices.Sort(stale)
	for _, k := range stale {
		toDelete = append(toDelete, existingByPorts[k]...)
	}

	// A Service with no endpoints keeps one empty placeholder slice.
	if len(existing) == len(toDelete) && len(toCreate) == 0 {
		placeholder := newEndpointSlice(logger, svc, &endpointMeta{ports: []discoveryv1.EndpointPort{}, addressType: addressType})
		if len(toDelete) == 1 && isPlaceholderOf(toDelete[0], placeholder) {
			// The placeholder is there already: keep it.
			toDelete = toDelete[:0]
		} else {
			toCreate = append(toCreate, placeholder)
		}
	}

	added, removed := endpointChanges(existing, toCreate, toUpdate, toDelete)
	if err := c.finalize(ctx, svc, toCreate, toUpdate, toDelete, triggerTime, st); err != nil {
		errs = append(errs, err)
	} else {
		st.Added += added
		st.Removed += removed
	}
	return errors.Join(errs...)
}

// isPlaceholderOf reports whether s is the placeholder slice want: no
// endpoints, no ports, the same namespace, labels and owners.
func isPlaceholderOf(s, want *discoveryv1.EndpointSlice) bool {
	if s.Namespace != want.Namespace || len(s.Endpoints) != 0 || len(s.Ports) != 0 || s.AddressType != want.AddressType {
		return false
	}
	if len(s.Labels) != len(want.Labels) {
		return false
	}
	for k, v := range want.Labels {
		if w, ok := s.Labels[k]; !ok || w != v {
			return false
		}
	}
	if len(s.OwnerReferences) != len(want.OwnerReferences) {
		return false
	}
	for i := range s.OwnerReferences {
		if s.OwnerReferences[i].String() != want.OwnerReferences[i].String() {
			return false
		}
	}
	return true
}

// reconcileByPortMapping compares the endpoints of one port set's existing
// slices with the desired ones, in upstream's three steps:
//  1. in each existing slice, drop endpoints no longer desired and update
//     the ones that changed (and the labels, when the Service's changed);
//  2. fill the slices changed in 1 with the endpoints still to place,
//     fullest first;
//  3. put what is left into the unchanged slice it fills best, or into new
//     slices.
//
// Slices left with no endpoints are deleted. desired is consumed.
func (c *Controller) reconcileByPortMapping(logger klog.Logger, svc *corev1.Service, existing []*discoveryv1.EndpointSlice,
	desired endpointSet, meta *endpointMeta) (toCreate, toUpdate, toDelete []*discoveryv1.EndpointSlice) {
	byName := map[string]*discoveryv1.EndpointSlice{}
	var unchanged, updated, deleted []string

	// 1.
	for _, s := range existing {
		byName[s.Name] = s
		kept := []discoveryv1.Endpoint{}
		changed := false
		for i := range s.Endpoints {
			k := keyOf(&s.Endpoints[i])
			want, ok := desired[k]
			if !ok {
				continue
			}
			kept = append(kept, *want)
			if !endpointsEqualBeyondKey(want, &s.Endpoints[i]) {
				changed = true
			}
			delete(desired, k)
		}
		lbls, labelsChanged := sliceLabels(logger, s, svc)
		switch {
		case changed || len(kept) != len(s.Endpoints):
			if len(kept) == 0 {
				deleted = append(deleted, s.Name)
				break
			}
			cp := s.DeepCopy()
			cp.Endpoints, cp.Labels = kept, lbls
			byName[s.Name] = cp
			updated = append(updated, s.Name)
		case labelsChanged:
			cp := s.DeepCopy()
			cp.Labels = lbls
			byName[s.Name] = cp
			updated = append(updated, s.Name)
		default:
			unchanged = append(unchanged, s.Name)
		}
	}

	remaining := desired.sorted()
	pop := func() discoveryv1.Endpoint {
		ep := remaining[0]
		remaining = remaining[1:]
		return *ep
	}

	// 2.
	if len(remaining) > 0 && len(updated) > 0 {
		fill := make([]*discoveryv1.EndpointSlice, len(updated))
		for i, n := range updated {
			fill[i] = byName[n]
		}
		slices.SortStableFunc(fill, func(a, b *discoveryv1.EndpointSlice) int { return len(b.Endpoints) - len(a.Endpoints) })
		for _, s := range fill {
			for len(remaining) > 0 && len(s.Endpoints) < c.maxEndpointsPerSlice {
				s.Endpoints = append(s.Endpoints, pop())
			}
		}
	}

	// 3.
	for len(remaining) > 0 {
		var target *discoveryv1.EndpointSlice
		if len(remaining) < c.maxEndpointsPerSlice && len(unchanged) > 0 {
			candidates := make([]*discoveryv1.EndpointSlice, len(unchanged))
			for i, n := range unchanged {
				candidates[i] = byName[n]
			}
			target = sliceToFill(candidates, len(remaining), c.maxEndpointsPerSlice)
		}
		if target == nil {
			target = newEndpointSlice(logger, svc, meta)
		} else {
			target = target.DeepCopy()
			byName[target.Name] = target
		}
		for len(remaining) > 0 && len(target.Endpoints) < c.maxEndpointsPerSlice {
			target.Endpoints = append(target.Endpoints, pop())
		}
		if target.Name == "" {
			toCreate = append(toCreate, target)
			continue
		}
		updated = append(updated, target.Name)
		unchanged = slices.DeleteFunc(unchanged, func(n string) bool { return n == target.Name })
	}

	for _, n := range updated {
		toUpdate = append(toUpdate, byName[n])
	}
	for _, n := range deleted {
		toDelete = append(toDelete, byName[n])
	}
	return toCreate, toUpdate, toDelete
}

// finalize writes the changes: creates turn into updates of slices that
// would be deleted (same address type, owned by this Service), new slices
// are not created while the Service is being deleted, and every write
// carries the trigger time.
func (c *Controller) finalize(ctx context.Context, svc *corev1.Service, toCreate, toUpdate, toDelete []*discoveryv1.EndpointSlice,
	triggerTime time.Time, st *metrics.EndpointSliceSync) error {
	for i := 0; i < len(toDelete) && len(toCreate) > 0; {
		del, create := toDelete[i], toCreate[len(toCreate)-1]
		if del.AddressType == create.AddressType && ownedBy(del, svc) {
			create.Name, create.UID, create.ResourceVersion = del.Name, del.UID, del.ResourceVersion
			toCreate = toCreate[:len(toCreate)-1]
			toUpdate = append(toUpdate, create)
			toDelete = append(toDelete[:i], toDelete[i+1:]...)
			continue
		}
		i++
	}

	// A Service being deleted gets no new slices: the garbage collector
	// is deleting them.
	if svc.DeletionTimestamp == nil {
		for _, s := range toCreate {
			setTriggerTime(s, triggerTime)
			created, err := c.client.DiscoveryV1().EndpointSlices(svc.Namespace).Create(ctx, s, metav1.CreateOptions{})
			if err != nil {
				// Creates keep failing in a terminating namespace.
				if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
					return nil
				}
				return fmt.Errorf("failed to create EndpointSlice for Service %s/%s: %w", svc.Namespace, svc.Name, err)
			}
			c.tracker.Update(created)
			st.Creates++
			st.ChangeToWrite = c.sinceTrigger(triggerTime)
		}
	}
	for _, s := range toUpdate {
		setTriggerTime(s, triggerTime)
		updated, err := c.client.DiscoveryV1().EndpointSlices(svc.Namespace).Update(ctx, s, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("failed to update %s EndpointSlice for Service %s/%s: %w", s.Name, svc.Namespace, svc.Name, err)
		}
		c.tracker.Update(updated)
		st.Updates++
		st.ChangeToWrite = c.sinceTrigger(triggerTime)
	}
	for _, s := range toDelete {
		if err := c.deleteEndpointSlice(ctx, svc, s); err != nil {
			return fmt.Errorf("failed to delete %s EndpointSlice for Service %s/%s: %w", s.Name, svc.Namespace, svc.Name, err)
		}
		st.Deletes++
	}
	return nil
}

// sinceTrigger is the time from the trigger time to now (0 without one).
func (c *Controller) sinceTrigger(t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	now := time.Now()
	if c.now != nil {
		now = c.now()
	}
	return max(now.Sub(t), 0)
}

// endpointChanges counts the endpoints the writes add and remove: those
// of the slices written (or deleted) that were not (or no longer are) in
// the existing slices.
func endpointChanges(existing, toCreate, toUpdate, toDelete []*discoveryv1.EndpointSlice) (added, removed int) {
	before := map[endpointKey]bool{}
	for _, s := range existing {
		for i := range s.Endpoints {
			before[keyOf(&s.Endpoints[i])] = true
		}
	}
	after := map[endpointKey]bool{}
	rewritten := map[string]bool{}
	for _, l := range [][]*discoveryv1.EndpointSlice{toCreate, toUpdate} {
		for _, s := range l {
			rewritten[s.Name] = true
			for i := range s.Endpoints {
				after[keyOf(&s.Endpoints[i])] = true
			}
		}
	}
	for _, s := range toDelete {
		rewritten[s.Name] = true
	}
	for _, s := range existing {
		if s.Name != "" && rewritten[s.Name] {
			continue
		}
		for i := range s.Endpoints {
			after[keyOf(&s.Endpoints[i])] = true
		}
	}
	for k := range after {
		if !before[k] {
			added++
		}
	}
	for k := range before {
		if !after[k] {
			removed++
		}
	}
	return added, removed
}

// setTriggerTime sets the endpoints.kubernetes.io/last-change-trigger-time
// annotation, or removes it when there is no new trigger time.
func setTriggerTime(s *discoveryv1.EndpointSlice, t time.Time) {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	if t.IsZero() {
		delete(s.Annotations, corev1.EndpointsLastChangeTriggerTime)
		return
	}
	s.Annotations[corev1.EndpointsLastChangeTriggerTime] = t.UTC().Format(time.RFC3339Nano)
}
