package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"skiff.dev/component-base/quota"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// sync recomputes the usage of the quota keyed key and writes its status
// when hard or used changed.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	q, err := c.quotaLister.ResourceQuotas(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("ResourceQuota has been deleted", "resourceQuota", key)
		return nil
	}
	if err != nil {
		return err
	}
	now := c.clock.Now()
	computed, recheck, calcErr := c.calculateUsage(q, now)
	status := newStatus(q, computed)
	if !quota.Equal(status.Hard, q.Status.Hard) || !quota.Equal(status.Used, q.Status.Used) ||
		q.Status.Hard == nil || q.Status.Used == nil {
		updated := q.DeepCopy()
		updated.Status = status
		if _, err := c.client.CoreV1().ResourceQuotas(namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
			return errors.Join(calcErr, err)
		}
		logger.V(4).Info("Updated ResourceQuota usage", "resourceQuota", klog.KObj(q), "used", status.Used)
	}
	if !recheck.IsZero() {
		c.queue.AddAfter(key, recheck.Sub(now)+time.Second)
	}
	return calcErr
}

// newStatus is hard = spec.hard and used = the previous usage overlaid
// with what was computed, both limited to the names of spec.hard.
func newStatus(q *corev1.ResourceQuota, computed corev1.ResourceList) corev1.ResourceQuotaStatus {
	hard := q.Spec.Hard.DeepCopy()
	if hard == nil {
		hard = corev1.ResourceList{}
	}
	used := corev1.ResourceList{}
	for name := range hard {
		if v, ok := computed[name]; ok {
			used[name] = v
		} else if v, ok := q.Status.Used[name]; ok {
			used[name] = v.DeepCopy()
		}
	}
	return corev1.ResourceQuotaStatus{Hard: hard, Used: used}
}

// calculateUsage sums, for every kind spec.hard names, the usage of the
// kind's objects in the quota's namespace that match the quota's scopes.
// Resources no kind counts, or whose kind the server does not serve, are
// left out. recheck is the earliest time a terminating pod stops counting.
func (c *Controller) calculateUsage(q *corev1.ResourceQuota, now time.Time) (corev1.ResourceList, time.Time, error) {
	byKind := map[schema.GroupResource][]corev1.ResourceName{}
	for name := range q.Spec.Hard {
		if gr, ok := quota.ResourceFor(name); ok {
			byKind[gr] = append(byKind[gr], name)
		}
	}
	kinds := make([]schema.GroupResource, 0, len(byKind))
	for gr := range byKind {
		kinds = append(kinds, gr)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].String() < kinds[j].String() })

	out := corev1.ResourceList{}
	var recheck time.Time
	var errs []error
	for _, gr := range kinds {
		src, err := c.sourceFor(gr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if src == nil {
			continue
		}
		if !src.synced() {
			errs = append(errs, fmt.Errorf("%s: %w", gr, errNotSynced))
			continue
		}
		used, next, err := kindUsage(src, gr, q, byKind[gr], now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for name, v := range used {
			out[name] = v
		}
		if !next.IsZero() && (recheck.IsZero() || next.Before(recheck)) {
			recheck = next
		}
	}
	return out, recheck, errors.Join(errs...)
}

// kindUsage sums names over the objects of src in q's namespace that match
// q's scopes; every name starts at zero, as upstream's
// CalculateUsageStats does.
func kindUsage(src *source, gr schema.GroupResource, q *corev1.ResourceQuota, names []corev1.ResourceName, now time.Time) (corev1.ResourceList, time.Time, error) {
	objs, err := src.inNamespace(q.Namespace)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("listing %s: %w", gr, err)
	}
	total := corev1.ResourceList{}
	var recheck time.Time
	for _, obj := range objs {
		if !quota.MatchesScopes(q, obj) {
			continue
		}
		quota.AddTo(total, quota.Usage(gr, obj, now))
		if pod, ok := obj.(*corev1.Pod); ok && quota.PodCountsForQuota(pod, now) {
			if at := quota.PodStopsCountingAt(pod); !at.IsZero() && (recheck.IsZero() || at.Before(recheck)) {
				recheck = at
			}
		}
	}
	out := corev1.ResourceList{}
	for _, name := range names {
		if v, ok := total[name]; ok {
			out[name] = v
		} else {
			out[name] = resource.Quantity{Format: resource.DecimalSI}
		}
	}
	return out, recheck, nil
}
