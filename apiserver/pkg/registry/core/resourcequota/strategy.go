// Package resourcequota holds the ResourceQuota kind's strategies. Its status
// is recomputed by the quota admission plugin, a hook the server sets.
package resourcequota

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateResourceQuota, validation.ValidateResourceQuotaUpdate)

// Strategy is the ResourceQuota's main endpoint; StatusStrategy its status.
var (
	Strategy       = rest.Main(validated)
	StatusStrategy = rest.Status(validated)
)

// Usage computes what a new (or changed) quota's status.used must hold
// (the ResourceQuota admission plugin). creating is true on create.
type Usage interface {
	InitialUsage(ctx context.Context, q *corev1.ResourceQuota, creating bool) error
}

// StatusHook keeps a ResourceQuota's status.hard equal to spec.hard and
// fills status.used for resources it does not track yet: the store's hook
// of the kind.
type StatusHook struct{ Usage Usage }

// BeforeCreate computes the new quota's status.
func (q StatusHook) BeforeCreate(ctx context.Context, obj runtime.Object) (func(), error) {
	if rq, ok := obj.(*corev1.ResourceQuota); ok {
		if err := q.Usage.InitialUsage(ctx, rq, true); err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("computing the quota's usage: %v", err))
		}
	}
	return func() {}, nil
}

// BeforeUpdate follows a change of spec.hard. An update that leaves
// spec.hard alone (every status update: the status strategy keeps the old
// spec) stores status as written, as upstream's, so the quota controller
// and clients patching resourcequotas/status are not overruled.
func (q StatusHook) BeforeUpdate(ctx context.Context, obj, old runtime.Object) (func(), error) {
	if rq, ok := obj.(*corev1.ResourceQuota); ok {
		if oq, ok := old.(*corev1.ResourceQuota); ok && apiequality.Semantic.DeepEqual(rq.Spec.Hard, oq.Spec.Hard) {
			return func() {}, nil
		}
		if err := q.Usage.InitialUsage(ctx, rq, false); err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("computing the quota's usage: %v", err))
		}
	}
	return func() {}, nil
}
