package quota

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	resourcehelper "k8s.io/component-helpers/resource"
)

// storageClassSuffix is how a per-StorageClass claim resource is named:
// <class>.storageclass.storage.k8s.io/<resource>.
const storageClassSuffix = ".storageclass.storage.k8s.io/"

// The kinds whose usage is more than an object count.
var (
	PodsGR     = schema.GroupResource{Resource: "pods"}
	ServicesGR = schema.GroupResource{Resource: "services"}
	ClaimsGR   = schema.GroupResource{Resource: "persistentvolumeclaims"}
)

// podResources are the quota resources a pod's usage can name, besides the
// hugepages and extended resources matched by prefix.
var podResources = map[corev1.ResourceName]bool{
	"count/pods":                            true,
	corev1.ResourcePods:                     true,
	corev1.ResourceCPU:                      true,
	corev1.ResourceMemory:                   true,
	corev1.ResourceEphemeralStorage:         true,
	corev1.ResourceRequestsCPU:              true,
	corev1.ResourceRequestsMemory:           true,
	corev1.ResourceRequestsEphemeralStorage: true,
	corev1.ResourceLimitsCPU:                true,
	corev1.ResourceLimitsMemory:             true,
	corev1.ResourceLimitsEphemeralStorage:   true,
}

// legacyCounts are the core kinds that also have a count without the
// count/ prefix.
var legacyCounts = map[corev1.ResourceName]schema.GroupResource{
	corev1.ResourceServices:               ServicesGR,
	corev1.ResourcePersistentVolumeClaims: ClaimsGR,
	corev1.ResourceConfigMaps:             {Resource: "configmaps"},
	corev1.ResourceSecrets:                {Resource: "secrets"},
	corev1.ResourceReplicationControllers: {Resource: "replicationcontrollers"},
	corev1.ResourceQuotas:                 {Resource: "resourcequotas"},
}

// ObjectCountName is upstream's count/<resource>[.<group>].
func ObjectCountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// ParseCountName splits count/<resource>[.<group>]; ok is false for any
// other name.
func ParseCountName(name corev1.ResourceName) (gr schema.GroupResource, ok bool) {
	rest, ok := strings.CutPrefix(string(name), "count/")
	if !ok || rest == "" {
		return schema.GroupResource{}, false
	}
	res, group, _ := strings.Cut(rest, ".")
	if res == "" {
		return schema.GroupResource{}, false
	}
	return schema.GroupResource{Group: group, Resource: res}, true
}

// isNativeResource is upstream's helper.IsNativeResource: a name without a
// domain, or in the kubernetes.io domain.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// isPodResource reports whether name is part of a pod's usage, as
// upstream's pod evaluator's MatchingResources.
func isPodResource(name corev1.ResourceName) bool {
	s := string(name)
	switch {
	case podResources[name]:
		return true
	case strings.HasPrefix(s, corev1.ResourceHugePagesPrefix), strings.HasPrefix(s, corev1.ResourceRequestsHugePagesPrefix):
		return true
	case !isNativeResource(name) && strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix):
		// Extended resources are only quota'd as requests.<name>.
		return true
	}
	return false
}

func isServiceResource(name corev1.ResourceName) bool {
	switch name {
	case "count/services", corev1.ResourceServices, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers:
		return true
	}
	return false
}

func isClaimResource(name corev1.ResourceName) bool {
	switch name {
	case "count/persistentvolumeclaims", corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage:
		return true
	}
	s := string(name)
	return strings.HasSuffix(s, storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims)) ||
		strings.HasSuffix(s, storageClassSuffix+string(corev1.ResourceRequestsStorage))
}

// ResourceFor returns the kind whose objects name counts, or ok false when
// no kind does (the controller then leaves that resource's usage alone).
func ResourceFor(name corev1.ResourceName) (schema.GroupResource, bool) {
	switch {
	case isPodResource(name):
		return PodsGR, true
	case isServiceResource(name):
		return ServicesGR, true
	case isClaimResource(name):
		return ClaimsGR, true
	}
	if gr, ok := legacyCounts[name]; ok {
		return gr, true
	}
	return ParseCountName(name)
}

// One is the quantity 1, what one object counts.
func One() resource.Quantity { return *resource.NewQuantity(1, resource.DecimalSI) }

// Usage is what obj, an object of gr, counts against a quota at now, as
// upstream's evaluators compute it. Objects known only by their metadata
// count once, under count/ and their legacy name.
func Usage(gr schema.GroupResource, obj any, now time.Time) corev1.ResourceList {
	out := corev1.ResourceList{ObjectCountName(gr): One()}
	for name, g := range legacyCounts {
		if g == gr {
			out[name] = One()
		}
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		addPodUsage(out, o, now)
	case *corev1.Service:
		addServiceUsage(out, o)
	case *corev1.PersistentVolumeClaim:
		addClaimUsage(out, o)
	}
	return out
}

// PodCountsForQuota is upstream's QuotaV1Pod: a finished pod, or one stuck
// terminating past its grace period, no longer counts (except count/pods).
func PodCountsForQuota(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		grace := time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		if now.After(pod.DeletionTimestamp.Time.Add(grace)) {
			return false
		}
	}
	return true
}

// PodStopsCountingAt is when a terminating pod stops counting, or the zero
// time when that is not known.
func PodStopsCountingAt(pod *corev1.Pod) time.Time {
	if pod.DeletionTimestamp == nil || pod.DeletionGracePeriodSeconds == nil {
		return time.Time{}
	}
	return pod.DeletionTimestamp.Time.Add(time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second)
}

func addPodUsage(out corev1.ResourceList, pod *corev1.Pod, now time.Time) {
	if !PodCountsForQuota(pod, now) {
		delete(out, corev1.ResourcePods)
		return
	}
	requests, limits := podRequestsAndLimits(pod)
	out[corev1.ResourcePods] = One()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, ok := requests[name]; ok {
			out[name] = q
			out[corev1.DefaultResourceRequestsPrefix+name] = q
		}
		if q, ok := limits[name]; ok {
			out[corev1.ResourceName("limits."+string(name))] = q
		}
	}
	for name, q := range requests {
		switch {
		case strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
			out[name] = q
			out[corev1.DefaultResourceRequestsPrefix+name] = q
		case !isNativeResource(name):
			out[corev1.DefaultResourceRequestsPrefix+name] = q
		}
	}
}

// podRequestsAndLimits are upstream's evaluator's, from
// k8s.io/component-helpers/resource: the sum of the containers and of the
// sidecars (restartable init containers), raised to what any init
// container needs while it runs (itself plus the sidecars started before
// it), plus the pod overhead (on limits only where a limit is set).
// Pod-level resources are skipped, as upstream while its PodLevelResources
// gate is off (its default in 1.32).
func podRequestsAndLimits(pod *corev1.Pod) (requests, limits corev1.ResourceList) {
	opts := resourcehelper.PodResourcesOptions{SkipPodLevelResources: true}
	return resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts)
}

// AddTo adds src into dst.
func AddTo(dst, src corev1.ResourceList) {
	for k, v := range src {
		cur := dst[k]
		cur.Add(v)
		dst[k] = cur
	}
}

func addServiceUsage(out corev1.ResourceList, svc *corev1.Service) {
	ports := *resource.NewQuantity(int64(len(svc.Spec.Ports)), resource.DecimalSI)
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		out[corev1.ResourceServicesNodePorts] = ports
	case corev1.ServiceTypeLoadBalancer:
		if a := svc.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			// Node ports are not allocated: only those asked for count.
			var n int64
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					n++
				}
			}
			ports = *resource.NewQuantity(n, resource.DecimalSI)
		}
		out[corev1.ResourceServicesNodePorts] = ports
		out[corev1.ResourceServicesLoadBalancers] = One()
	}
}

// claimClass is upstream's GetPersistentVolumeClaimClass: the beta
// annotation first, then spec.storageClassName.
func claimClass(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}

func addClaimUsage(out corev1.ResourceList, pvc *corev1.PersistentVolumeClaim) {
	class := claimClass(pvc)
	if class != "" {
		out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = One()
	}
	q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return
	}
	r := q.DeepCopy()
	r.RoundUp(0)
	out[corev1.ResourceRequestsStorage] = r
	if class != "" {
		out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = r
	}
}

// MatchesScopes reports whether obj falls under every scope and scope
// selector requirement of q. Only pods have scopes: any other object is
// outside a quota that has one, as upstream's MatchesNoScopeFunc says.
func MatchesScopes(q *corev1.ResourceQuota, obj any) bool {
	reqs := make([]corev1.ScopedResourceSelectorRequirement, 0, len(q.Spec.Scopes))
	for _, s := range q.Spec.Scopes {
		reqs = append(reqs, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		reqs = append(reqs, q.Spec.ScopeSelector.MatchExpressions...)
	}
	if len(reqs) == 0 {
		return true
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false
	}
	for _, r := range reqs {
		if !podMatchesScope(pod, r) {
			return false
		}
	}
	return true
}

// podMatchesScope is upstream's podMatchesScopeFunc.
func podMatchesScope(pod *corev1.Pod, req corev1.ScopedResourceSelectorRequirement) bool {
	switch req.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return IsTerminating(pod)
	case corev1.ResourceQuotaScopeNotTerminating:
		return !IsTerminating(pod)
	case corev1.ResourceQuotaScopeBestEffort:
		return IsBestEffort(pod)
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !IsBestEffort(pod)
	case corev1.ResourceQuotaScopePriorityClass:
		if req.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != ""
		}
		return priorityClassMatches(pod, req)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return usesCrossNamespaceAffinity(pod)
	}
	return false
}

// IsTerminating: the pod has an active deadline, so it ends by itself.
func IsTerminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// IsBestEffort is upstream's QoS class BestEffort: no container, init
// containers included, requests or limits any cpu or memory.
func IsBestEffort(pod *corev1.Pod) bool {
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		for _, list := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
			for name, q := range list {
				if (name == corev1.ResourceCPU || name == corev1.ResourceMemory) && q.Sign() > 0 {
					return false
				}
			}
		}
	}
	return true
}

// priorityClassMatches evaluates req as a label requirement on the label
// set {PriorityClass: <class>} (empty when the pod has no class), as
// upstream's podMatchesSelector does. A requirement that does not parse
// matches nothing.
func priorityClassMatches(pod *corev1.Pod, req corev1.ScopedResourceSelectorRequirement) bool {
	var op selection.Operator
	switch req.Operator {
	case corev1.ScopeSelectorOpIn:
		op = selection.In
	case corev1.ScopeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.ScopeSelectorOpExists:
		op = selection.Exists
	case corev1.ScopeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	default:
		return false
	}
	r, err := labels.NewRequirement(string(req.ScopeName), op, req.Values)
	if err != nil {
		return false
	}
	set := labels.Set{}
	if pod.Spec.PriorityClassName != "" {
		set[string(corev1.ResourceQuotaScopePriorityClass)] = pod.Spec.PriorityClassName
	}
	return r.Matches(set)
}

// usesCrossNamespaceAffinity: a pod (anti-)affinity term names namespaces
// or has a namespace selector.
func usesCrossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	var terms []corev1.PodAffinityTerm
	if pa := a.PodAffinity; pa != nil {
		terms = append(terms, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		terms = append(terms, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	for _, t := range terms {
		if len(t.Namespaces) > 0 || t.NamespaceSelector != nil {
			return true
		}
	}
	return false
}

// Add returns a+b.
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := a.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	AddTo(out, b)
	return out
}

// Equal is upstream's quota.Equals: the same names, equal quantities.
func Equal(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
