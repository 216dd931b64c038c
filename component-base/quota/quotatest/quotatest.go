// Package quotatest builds the pods and quotas that tests of quota usage
// and scopes use.
package quotatest

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// T0 is the tests' "now".
var T0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// List builds a ResourceList from name, quantity pairs.
func List(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// Container is a container named c with those requests and limits.
func Container(requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

// PodOpt changes a pod built by NewPod.
type PodOpt func(*corev1.Pod)

// NewPod is a pod in namespace ns.
func NewPod(name string, opts ...PodOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// WithContainers adds containers.
func WithContainers(cs ...corev1.Container) PodOpt {
	return func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, cs...) }
}

// WithInit adds init containers.
func WithInit(cs ...corev1.Container) PodOpt {
	return func(p *corev1.Pod) { p.Spec.InitContainers = append(p.Spec.InitContainers, cs...) }
}

// InPhase sets the phase.
func InPhase(ph corev1.PodPhase) PodOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

// Deadline sets activeDeadlineSeconds.
func Deadline(s int64) PodOpt { return func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = &s } }

// Priority sets the priority class name.
func Priority(class string) PodOpt { return func(p *corev1.Pod) { p.Spec.PriorityClassName = class } }

// DeletedAt marks the pod terminating from at with grace seconds.
func DeletedAt(at time.Time, grace int64) PodOpt {
	return func(p *corev1.Pod) {
		ts := metav1.NewTime(at)
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &grace
	}
}

// Scoped is a quota with those scopes and scope selector expressions.
func Scoped(scopes []corev1.ResourceQuotaScope, exprs ...corev1.ScopedResourceSelectorRequirement) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Scopes: scopes}}
	if len(exprs) > 0 {
		q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: exprs}
	}
	return q
}

// PCReq is a PriorityClass scope selector requirement.
func PCReq(op corev1.ScopeSelectorOperator, values ...string) corev1.ScopedResourceSelectorRequirement {
	return corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: op, Values: values}
}
