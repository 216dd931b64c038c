package admission

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"skiff.dev/component-base/quota"
)

// ResourceQuotaName is upstream's plugin name.
const ResourceQuotaName = "ResourceQuota"

// QuotaUpdater changes a ResourceQuota with compare-and-swap on its
// resourceVersion, retrying fn on the latest object until the write wins.
type QuotaUpdater func(ctx context.Context, namespace, name string, fn func(q *corev1.ResourceQuota) error) error

// ResourceQuota charges every create against the namespace's quotas. The
// charge is made on the quota object itself (status.used), with
// compare-and-swap, so concurrent creates cannot overshoot a quota: each
// sees the usage the previous one left. A create that fails after its
// charge gives the charge back; a deleted object gives back its usage; a
// pod that reaches Succeeded or Failed gives back all but count/pods.
//
// Upstream leaves status.used to the resource quota controller and only
// charges in admission; until skiff's controller-manager recomputes usage,
// this plugin keeps status.used consistent for creates and deletes itself.
// Updates that change an object's usage (resizing a claim, changing a
// Service's type) are not charged.
type ResourceQuota struct {
	Objects Objects
	Update  QuotaUpdater
}

// Name implements Plugin.
func (*ResourceQuota) Name() string { return ResourceQuotaName }

func (r *ResourceQuota) quotas(ctx context.Context, ns string) ([]*corev1.ResourceQuota, error) {
	list, err := r.Objects.List(ctx, "", "resourcequotas", ns)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.ResourceQuota, 0, len(list))
	for _, obj := range list {
		if q, ok := obj.(*corev1.ResourceQuota); ok {
			out = append(out, q)
		}
	}
	if len(out) > 1 {
		slices.SortFunc(out, func(x, y *corev1.ResourceQuota) int { return strings.Compare(x.Name, y.Name) })
	}
	return out, nil
}

// Validate implements ValidationInterface.
func (r *ResourceQuota) Validate(ctx context.Context, a *Attributes) error {
	if a.Namespace == "" || a.Object == nil {
		return nil
	}
	change := quotaChangeOf(a)
	if change == noQuotaChange {
		return nil
	}
	// The quotas first: a namespace without any (the common case) costs no
	// usage computation.
	quotas, err := r.quotas(ctx, a.Namespace)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("listing resource quotas: %v", err))
	}
	if len(quotas) == 0 {
		return nil
	}
	charge, release := quotaDelta(a, change)
	var undo []func()
	rollback := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	for _, step := range []struct {
		delta   corev1.ResourceList
		release bool
	}{{release, true}, {charge, false}} {
		if len(step.delta) == 0 {
			continue
		}
		if err := r.chargeAll(ctx, a, quotas, step.delta, step.release, &undo); err != nil {
			rollback()
			return err
		}
	}
	if len(undo) > 0 {
		a.OnFailure(rollback)
	}
	return nil
}

// quotaChange is how a write can change quota usage.
type quotaChange int

const (
	noQuotaChange quotaChange = iota
	// createCharge: a create charges the new object's usage.
	createCharge
	// terminalRelease: a pod turning terminal releases its compute usage.
	terminalRelease
	// usageUpdate: a Service changing type, a claim asking for more storage.
	usageUpdate
)

// quotaChangeOf classifies a write, without computing any usage.
func quotaChangeOf(a *Attributes) quotaChange {
	gr := a.Resource.GroupResource()
	switch {
	case a.Operation == Create && a.Subresource == "":
		return createCharge
	case a.Operation == Update && gr == podsGR && a.Subresource == "status":
		pod, ok := a.Object.(*corev1.Pod)
		old, okOld := a.OldObject.(*corev1.Pod)
		if !ok || !okOld || podTerminal(old) || !podTerminal(pod) {
			return noQuotaChange
		}
		return terminalRelease
	case a.Operation == Update && a.Subresource == "" && a.OldObject != nil && (gr == servicesGR || gr == claimsGR):
		return usageUpdate
	}
	return noQuotaChange
}

// quotaDelta computes what a write of kind c charges and releases.
func quotaDelta(a *Attributes, c quotaChange) (charge, release corev1.ResourceList) {
	gr := a.Resource.GroupResource()
	switch c {
	case createCharge:
		return Usage(gr, a.Object), nil
	case terminalRelease:
		return nil, quotaSub(Usage(gr, a.OldObject), Usage(gr, a.Object))
	case usageUpdate:
		return usageChange(Usage(gr, a.OldObject), Usage(gr, a.Object))
	}
	return nil, nil
}

// chargeAll charges (or releases) delta on every quota it concerns,
// appending the undo of each charge made.
func (r *ResourceQuota) chargeAll(ctx context.Context, a *Attributes, quotas []*corev1.ResourceQuota, delta corev1.ResourceList, release bool, undo *[]func()) error {
	for _, q := range quotas {
		if !release && a.Operation == Create && quota.MatchesScopes(q, a.Object) {
			if err := checkConstraints(q, a.Object); err != nil {
				return forbidden(a, fmt.Errorf("failed quota: %s: %v", q.Name, err))
			}
		}
		names := matchingNames(q, a.Object, delta)
		if len(names) == 0 {
			continue
		}
		if a.DryRun {
			// The cached quota may lag a write made a moment ago (a pod
			// deleted just before): a refusal is confirmed against the
			// stored quota, and nothing is written.
			if !release && exceeds(q, names, delta) != nil {
				if err := r.check(ctx, q, names, delta); err != nil {
					var refusal *quotaRefusal
					if errors.As(err, &refusal) {
						return forbidden(a, refusal)
					}
					return apierrors.NewInternalError(fmt.Errorf("checking quota %s: %v", q.Name, err))
				}
			}
			continue
		}
		if err := r.apply(ctx, q, names, delta, release); err != nil {
			var refusal *quotaRefusal
			if errors.As(err, &refusal) {
				return forbidden(a, refusal)
			}
			return apierrors.NewInternalError(fmt.Errorf("charging quota %s: %v", q.Name, err))
		}
		q, names := q, names
		*undo = append(*undo, func() {
			if err := r.apply(context.WithoutCancel(ctx), q, names, delta, !release); err != nil {
				klog.FromContext(ctx).Error(err, "giving back a quota charge", "quota", klog.KObj(q))
			}
		})
	}
	return nil
}

// usageChange splits new-old into what grew and what shrank.
func usageChange(old, cur corev1.ResourceList) (grew, shrank corev1.ResourceList) {
	grew, shrank = corev1.ResourceList{}, corev1.ResourceList{}
	for k, v := range cur {
		o := old[k]
		if d := v.DeepCopy(); d.Cmp(o) > 0 {
			d.Sub(o)
			grew[k] = d
		}
	}
	for k, o := range old {
		v := cur[k]
		if d := o.DeepCopy(); d.Cmp(v) > 0 {
			d.Sub(v)
			shrank[k] = d
		}
	}
	return grew, shrank
}

var (
	servicesGR = schema.GroupResource{Resource: "services"}
	claimsGR   = schema.GroupResource{Resource: "persistentvolumeclaims"}
)

var podsGR = schema.GroupResource{Resource: "pods"}

// quotaRefusal is an exceeded quota, found inside the compare-and-swap.
type quotaRefusal struct{ msg string }

func (e *quotaRefusal) Error() string { return e.msg }

// apply adds (or, with release, subtracts) delta's names to the quota's
// status.used in one compare-and-swap, refusing an add that would exceed
// status.hard.
func (r *ResourceQuota) apply(ctx context.Context, q *corev1.ResourceQuota, names []corev1.ResourceName, delta corev1.ResourceList, release bool) error {
	return r.Update(ctx, q.Namespace, q.Name, func(cur *corev1.ResourceQuota) error {
		if release {
			cur.Status.Used = quotaSub(cur.Status.Used, mask(delta, names))
			return nil
		}
		if err := exceeds(cur, names, delta); err != nil {
			return &quotaRefusal{msg: err.Error()}
		}
		cur.Status.Used = quota.Add(cur.Status.Used, mask(delta, names))
		return nil
	})
}

// errWithinQuota ends check's compare-and-swap without a write.
var errWithinQuota = errors.New("within quota")

// check is apply for a dry run: the stored quota's usage is compared, and
// nothing is written. It returns a *quotaRefusal when delta exceeds it.
func (r *ResourceQuota) check(ctx context.Context, q *corev1.ResourceQuota, names []corev1.ResourceName, delta corev1.ResourceList) error {
	err := r.Update(ctx, q.Namespace, q.Name, func(cur *corev1.ResourceQuota) error {
		if err := exceeds(cur, names, delta); err != nil {
			return &quotaRefusal{msg: err.Error()}
		}
		return errWithinQuota
	})
	if errors.Is(err, errWithinQuota) {
		return nil
	}
	return err
}

// exceeds reports upstream's "exceeded quota" (or "status unknown") error
// when adding delta to the quota's usage goes over its hard limits.
func exceeds(q *corev1.ResourceQuota, names []corev1.ResourceName, delta corev1.ResourceList) error {
	var unknown []string
	for _, n := range names {
		if _, ok := q.Status.Used[n]; !ok {
			unknown = append(unknown, string(n))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, strings.Join(unknown, ","))
	}
	requested := mask(delta, names)
	next := quota.Add(mask(q.Status.Used, names), requested)
	var over []corev1.ResourceName
	for _, n := range names {
		hard, ok := q.Status.Hard[n]
		if !ok {
			hard = q.Spec.Hard[n]
		}
		v := next[n]
		if v.Cmp(hard) > 0 {
			over = append(over, n)
		}
	}
	if len(over) == 0 {
		return nil
	}
	return fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
		prettyPrint(mask(requested, over)), prettyPrint(mask(q.Status.Used, over)), prettyPrint(mask(hardOf(q), over)))
}

func hardOf(q *corev1.ResourceQuota) corev1.ResourceList {
	if len(q.Status.Hard) > 0 {
		return q.Status.Hard
	}
	return q.Spec.Hard
}

// matchingNames are the quota's hard resources that delta touches, when
// the quota's scopes select the object.
func matchingNames(q *corev1.ResourceQuota, obj runtime.Object, delta corev1.ResourceList) []corev1.ResourceName {
	if !quota.MatchesScopes(q, obj) {
		return nil
	}
	var out []corev1.ResourceName
	for n := range q.Spec.Hard {
		if _, ok := delta[n]; ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// checkConstraints is upstream's backward-compatible rule: when a quota
// limits cpu or memory, every container must state that request or limit.
func checkConstraints(q *corev1.ResourceQuota, obj runtime.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok || podTerminal(pod) {
		return nil
	}
	missing := map[string][]string{}
	check := func(c corev1.Container) {
		for n := range q.Spec.Hard {
			var list corev1.ResourceList
			base := string(n)
			switch n {
			case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory:
				list, base = c.Resources.Requests, strings.TrimPrefix(base, "requests.")
			case corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory:
				list, base = c.Resources.Limits, strings.TrimPrefix(base, "limits.")
			default:
				continue
			}
			if _, ok := list[corev1.ResourceName(base)]; !ok {
				missing[string(n)] = append(missing[string(n)], c.Name)
			}
		}
	}
	for _, c := range pod.Spec.InitContainers {
		check(c)
	}
	for _, c := range pod.Spec.Containers {
		check(c)
	}
	if len(missing) == 0 {
		return nil
	}
	names := make([]string, 0, len(missing))
	for n := range missing {
		names = append(names, n)
	}
	sort.Strings(names)
	msgs := make([]string, 0, len(names))
	for _, n := range names {
		c := missing[n]
		sort.Strings(c)
		msgs = append(msgs, fmt.Sprintf("%s for: %s", n, strings.Join(c, ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

// Deleted implements DeleteObserver: a deleted object gives back its usage.
func (r *ResourceQuota) Deleted(ctx context.Context, a *Attributes) {
	if a.Namespace == "" || a.OldObject == nil || a.DryRun {
		return
	}
	quotas, err := r.quotas(ctx, a.Namespace)
	if err != nil {
		klog.FromContext(ctx).Error(err, "listing quotas to release a deleted object's usage", "namespace", a.Namespace)
		return
	}
	if len(quotas) == 0 {
		return
	}
	delta := Usage(a.Resource.GroupResource(), a.OldObject)
	for _, q := range quotas {
		names := matchingNames(q, a.OldObject, delta)
		if len(names) == 0 {
			continue
		}
		if err := r.apply(ctx, q, names, delta, true); err != nil {
			klog.FromContext(ctx).Error(err, "releasing a deleted object's quota usage", "quota", klog.KObj(q))
		}
	}
}

// InitialUsage computes what a new (or changed) quota's status.used must
// start from: the usage of the objects in the namespace now, for the quota's
// hard resources that status.used does not have yet. self is the quota
// being created, counted in resourcequotas.
func (r *ResourceQuota) InitialUsage(ctx context.Context, q *corev1.ResourceQuota, self bool) error {
	var missing []corev1.ResourceName
	for n := range q.Spec.Hard {
		if _, ok := q.Status.Used[n]; !ok {
			missing = append(missing, n)
		}
	}
	q.Status.Hard = q.Spec.Hard.DeepCopy()
	if len(missing) == 0 {
		return nil
	}
	total := corev1.ResourceList{}
	for _, gr := range resourcesFor(missing) {
		objs, err := r.Objects.List(ctx, gr.Group, gr.Resource, q.Namespace)
		if err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		for _, obj := range objs {
			if quota.MatchesScopes(q, obj) {
				total = quota.Add(total, Usage(gr, obj))
			}
		}
	}
	if self {
		total = quota.Add(total, Usage(schema.GroupResource{Resource: "resourcequotas"}, q))
	}
	if q.Status.Used == nil {
		q.Status.Used = corev1.ResourceList{}
	}
	for _, n := range missing {
		if v, ok := total[n]; ok {
			q.Status.Used[n] = v
		} else {
			hard := q.Spec.Hard[n]
			q.Status.Used[n] = *resource.NewQuantity(0, hard.Format)
		}
	}
	return nil
}

// resourcesFor lists the resources whose objects count towards names.
func resourcesFor(names []corev1.ResourceName) []schema.GroupResource {
	set := map[schema.GroupResource]bool{}
	for _, n := range names {
		if gr, ok := quota.ResourceFor(n); ok {
			set[gr] = true
		}
	}
	out := make([]schema.GroupResource, 0, len(set))
	for gr := range set {
		out = append(out, gr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
