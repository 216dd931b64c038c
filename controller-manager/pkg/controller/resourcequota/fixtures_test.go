package resourcequota

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fixtures of the quota tests (the usage tests themselves are in
// component-base/quota).
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func container(requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

type podOpt func(*corev1.Pod)

func newPod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func withContainers(cs ...corev1.Container) podOpt {
	return func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, cs...) }
}

func withInit(cs ...corev1.Container) podOpt {
	return func(p *corev1.Pod) { p.Spec.InitContainers = append(p.Spec.InitContainers, cs...) }
}

func inPhase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func deadline(s int64) podOpt { return func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = &s } }

func priority(class string) podOpt { return func(p *corev1.Pod) { p.Spec.PriorityClassName = class } }

// deletedAt marks the pod terminating from at with grace seconds.
func deletedAt(at time.Time, grace int64) podOpt {
	return func(p *corev1.Pod) {
		ts := metav1.NewTime(at)
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &grace
	}
}
func scoped(scopes []corev1.ResourceQuotaScope, exprs ...corev1.ScopedResourceSelectorRequirement) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Scopes: scopes}}
	if len(exprs) > 0 {
		q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: exprs}
	}
	return q
}

func pcReq(op corev1.ScopeSelectorOperator, values ...string) corev1.ScopedResourceSelectorRequirement {
	return corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: op, Values: values}
}

