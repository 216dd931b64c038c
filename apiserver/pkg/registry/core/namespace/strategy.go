// Package namespace holds the Namespace kind's strategies, defaults and
// selectable fields, and what finalizes a namespace.
package namespace

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

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

// SetFinalizers is the update of namespaces/finalize: the stored namespace
// (current) with ns's spec.finalizers, at ns's resourceVersion when it names
// one.
func SetFinalizers(current runtime.Object, ns *corev1.Namespace) runtime.Object {
	cur := current.DeepCopyObject().(*corev1.Namespace)
	if ns.ResourceVersion != "" {
		cur.ResourceVersion = ns.ResourceVersion
	}
	cur.Spec.Finalizers = ns.Spec.Finalizers
	return cur
}

// FinalizeStrategy lets namespaces/finalize change spec.finalizers only.
type FinalizeStrategy struct{ rest.Strategy }

// PrepareForUpdate keeps everything of old but the new spec.finalizers.
func (FinalizeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	n, o := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	fin := n.Spec.Finalizers
	*n = *o.DeepCopy()
	n.Spec.Finalizers = fin
}

// ValidateUpdate validates the finalizers as upstream's finalize strategy.
func (FinalizeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateNamespaceFinalizeUpdate(obj.(*corev1.Namespace), old.(*corev1.Namespace))
}

// Subresource names the endpoint: finalize.
func (FinalizeStrategy) Subresource() string { return SubFinalize }

// SubFinalize names the finalize subresource.
const SubFinalize = "finalize"
