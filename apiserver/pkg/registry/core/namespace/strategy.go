// Package namespace holds the Namespace kind's strategies, defaults and
// selectable fields, and what finalizes a namespace.
package namespace

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy is the Namespace's main endpoint; StatusStrategy its status.
var (
	Strategy       = rest.Main(rest.PrepareCreate(prepare), rest.Validation(validation.ValidateNamespace, validation.ValidateNamespaceUpdate))
	StatusStrategy = rest.Status(rest.Validation(validation.ValidateNamespace, validation.ValidateNamespaceStatusUpdate))
)

// Default applies upstream's v1 defaults to a Namespace.
var Default = rest.Defaults(defaults.DefaultNamespace)

func prepare(obj runtime.Object) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return
	}
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	// Upstream: every namespace carries the "kubernetes" finalizer, which
	// the namespace controller removes once the namespace is empty.
	has := false
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			has = true
		}
	}
	if !has {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	// Upstream's NamespaceDefaultLabelName: kubernetes.io/metadata.name.
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

// Finalizing: a namespace stays, Terminating, until the namespace
// controller has emptied it and cleared spec.finalizers.
func Finalizing(obj runtime.Object) bool {
	ns, ok := obj.(*corev1.Namespace)
	return ok && len(ns.Spec.Finalizers) > 0
}

// Fields are a Namespace's selectable fields.
func Fields(obj runtime.Object) fields.Set {
	n, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil
	}
	return fields.Set{"status.phase": string(n.Status.Phase)}
}

// MarkTerminating sets a namespace being deleted Terminating.
func MarkTerminating(obj runtime.Object) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		ns.Status.Phase = corev1.NamespaceTerminating
	}
}
