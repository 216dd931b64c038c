package admission

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	resourcehelper "k8s.io/component-helpers/resource"
)

// LimitRangerName is upstream's plugin name.
const LimitRangerName = "LimitRanger"

// limitRangerAnnotation records which defaults the plugin set.
const limitRangerAnnotation = "kubernetes.io/limit-ranger"

// LimitRanger applies the LimitRanges of a namespace: on pod creation it
// fills container requests and limits from type Container defaults, then
// it enforces min, max and maxLimitRequestRatio for Containers, Pods and
// PersistentVolumeClaims, with upstream's messages.
type LimitRanger struct {
	Objects Objects
}

// Name implements Plugin.
func (*LimitRanger) Name() string { return LimitRangerName }

// handles: pods on create (their containers cannot change afterwards), PVCs
// on create and update.
func (l *LimitRanger) handles(a *Attributes) bool {
	if a.Subresource != "" || a.Resource.Group != "" {
		return false
	}
	switch a.Resource.Resource {
	case "pods":
		return a.Operation == Create
	case "persistentvolumeclaims":
		return a.Operation == Create || a.Operation == Update
	}
	return false
}

// ranges are the LimitRanges of the write's namespace, read once for Admit
// and Validate.
func (l *LimitRanger) ranges(ctx context.Context, a *Attributes) ([]*corev1.LimitRange, error) {
	list, err := a.listOnce(ctx, l.Objects, "", "limitranges", a.Namespace)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("listing LimitRanges: %v", err))
	}
	if len(list) == 0 {
		return nil, nil
	}
	out := make([]*corev1.LimitRange, 0, len(list))
	for _, obj := range list {
		if lr, ok := obj.(*corev1.LimitRange); ok {
			out = append(out, lr)
		}
	}
	return out, nil
}

// Admit implements MutationInterface: container defaults.
func (l *LimitRanger) Admit(ctx context.Context, a *Attributes) error {
	if !l.handles(a) || a.Resource.Resource != "pods" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	ranges, err := l.ranges(ctx, a)
	if err != nil {
		return err
	}
	for _, lr := range ranges {
		applyContainerDefaults(pod, defaultRequirements(lr))
	}
	return nil
}

// defaultRequirements are the type Container defaults of a LimitRange.
func defaultRequirements(lr *corev1.LimitRange) corev1.ResourceRequirements {
	req := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for k, v := range item.DefaultRequest {
			req.Requests[k] = v.DeepCopy()
		}
		for k, v := range item.Default {
			req.Limits[k] = v.DeepCopy()
		}
	}
	return req
}

func applyContainerDefaults(pod *corev1.Pod, defaults corev1.ResourceRequirements) {
	if len(defaults.Requests) == 0 && len(defaults.Limits) == 0 {
		return
	}
	var notes []string
	set := func(c *corev1.Container, kind string) {
		var setRequests, setLimits []string
		if c.Resources.Limits == nil && len(defaults.Limits) > 0 {
			c.Resources.Limits = corev1.ResourceList{}
		}
		for k, v := range defaults.Limits {
			if _, found := c.Resources.Limits[k]; !found {
				c.Resources.Limits[k] = v.DeepCopy()
				setLimits = append(setLimits, string(k))
			}
		}
		if c.Resources.Requests == nil && len(defaults.Requests) > 0 {
			c.Resources.Requests = corev1.ResourceList{}
		}
		for k, v := range defaults.Requests {
			if _, found := c.Resources.Requests[k]; !found {
				c.Resources.Requests[k] = v.DeepCopy()
				setRequests = append(setRequests, string(k))
			}
		}
		if len(setRequests) > 0 {
			sort.Strings(setRequests)
			notes = append(notes, strings.Join(setRequests, ", ")+fmt.Sprintf(" request for %s %s", kind, c.Name))
		}
		if len(setLimits) > 0 {
			sort.Strings(setLimits)
			notes = append(notes, strings.Join(setLimits, ", ")+fmt.Sprintf(" limit for %s %s", kind, c.Name))
		}
	}
	for i := range pod.Spec.Containers {
		set(&pod.Spec.Containers[i], "container")
	}
	for i := range pod.Spec.InitContainers {
		set(&pod.Spec.InitContainers[i], "init container")
	}
	if len(notes) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[limitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}
}

// Validate implements ValidationInterface: the bounds.
func (l *LimitRanger) Validate(ctx context.Context, a *Attributes) error {
	if !l.handles(a) {
		return nil
	}
	ranges, err := l.ranges(ctx, a)
	if err != nil {
		return err
	}
	var errs []error
	for _, lr := range ranges {
		switch o := a.Object.(type) {
		case *corev1.Pod:
			errs = append(errs, validatePodLimits(lr, o)...)
		case *corev1.PersistentVolumeClaim:
			errs = append(errs, validateClaimLimits(lr, o)...)
		}
	}
	if len(errs) > 0 {
		return forbidden(a, utilerrors.NewAggregate(errs))
	}
	return nil
}

func validatePodLimits(lr *corev1.LimitRange, pod *corev1.Pod) []error {
	var errs []error
	check := func(limit corev1.LimitRangeItem, limitType string, requests, limits corev1.ResourceList) {
		for _, k := range sortedNames(limit.Min) {
			if err := minConstraint(limitType, string(k), limit.Min[k], requests, limits); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range sortedNames(limit.Max) {
			if err := maxConstraint(limitType, string(k), limit.Max[k], requests, limits); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range sortedNames(limit.MaxLimitRequestRatio) {
			if err := ratioConstraint(limitType, string(k), limit.MaxLimitRequestRatio[k], requests, limits); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, limit := range lr.Spec.Limits {
		switch limit.Type {
		case corev1.LimitTypeContainer:
			for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for i := range cs {
					check(limit, string(corev1.LimitTypeContainer), cs[i].Resources.Requests, cs[i].Resources.Limits)
				}
			}
		case corev1.LimitTypePod:
			requests, limits := podTotals(pod)
			check(limit, string(corev1.LimitTypePod), requests, limits)
		}
	}
	return errs
}

// podTotals are the pod's requests and limits as upstream's LimitRanger
// computes them (k8s.io/component-helpers/resource: containers and sidecars,
// at least each init container's peak), without the pod overhead.
func podTotals(pod *corev1.Pod) (corev1.ResourceList, corev1.ResourceList) {
	opts := resourcehelper.PodResourcesOptions{ExcludeOverhead: true, SkipPodLevelResources: true}
	return resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts)
}

func validateClaimLimits(lr *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) []error {
	var errs []error
	t := string(corev1.LimitTypePersistentVolumeClaim)
	for _, limit := range lr.Spec.Limits {
		if limit.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		for _, k := range sortedNames(limit.Min) {
			if err := minConstraint(t, string(k), limit.Min[k], pvc.Spec.Resources.Requests, corev1.ResourceList{}); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range sortedNames(limit.Max) {
			if err := maxRequestConstraint(t, string(k), limit.Max[k], pvc.Spec.Resources.Requests); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

func sortedNames(list corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(list))
	for k := range list {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// enforcedValues compares in milli-units when nothing overflows.
func enforcedValues(req, lim, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := req.Value(), lim.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		r, l, e = req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(limitType, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqOK := requests[corev1.ResourceName(name)]
	lim, limOK := limits[corev1.ResourceName(name)]
	r, l, e := enforcedValues(req, lim, enforced)
	if !reqOK {
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, limitType, enforced.String())
	}
	if r < e {
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	}
	if limOK && l < e {
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	}
	return nil
}

func maxConstraint(limitType, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqOK := requests[corev1.ResourceName(name)]
	lim, limOK := limits[corev1.ResourceName(name)]
	r, l, e := enforcedValues(req, lim, enforced)
	if !limOK {
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, limitType, enforced.String())
	}
	if l > e {
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	}
	if reqOK && r > e {
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	}
	return nil
}

func maxRequestConstraint(limitType, name string, enforced resource.Quantity, requests corev1.ResourceList) error {
	req, reqOK := requests[corev1.ResourceName(name)]
	r, _, e := enforcedValues(req, resource.Quantity{}, enforced)
	if !reqOK {
		return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", name, limitType, enforced.String())
	}
	if r > e {
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(limitType, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqOK := requests[corev1.ResourceName(name)]
	lim, limOK := limits[corev1.ResourceName(name)]
	r, l, _ := enforcedValues(req, lim, enforced)
	if !reqOK || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, limitType, enforced.String())
	}
	if !limOK || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, limitType, enforced.String())
	}
	observed := float64(l) / float64(r)
	display := observed
	max := float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed *= 1000
		max = float64(enforced.MilliValue())
	}
	if observed > max {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, limitType, enforced.String(), display)
	}
	return nil
}
