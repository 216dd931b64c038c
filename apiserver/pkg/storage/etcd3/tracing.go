package etcd3

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/component-base/tracing"
)

// noEnd ends an untraced operation.
func noEnd(runtime.Object, error) {}

// traceOp starts the span of one etcd operation on key when the request is
// traced, named as upstream's storage names them ("Create etcd3", ...);
// end records the revision the object was written or read at, or the
// error. Untraced, it costs a check.
func (s *Store) traceOp(ctx context.Context, op, key string) (context.Context, func(runtime.Object, error)) {
	ctx, span := tracing.Start(ctx, op+" etcd3", attribute.String("key", key), attribute.String("resource", s.cfg.GroupResource.String()))
	if !span.IsRecording() {
		return ctx, noEnd
	}
	return ctx, func(obj runtime.Object, err error) {
		if m, merr := meta.Accessor(obj); err == nil && obj != nil && merr == nil {
			span.SetAttributes(attribute.String("etcd.revision", m.GetResourceVersion()))
		}
		tracing.End(span, err)
	}
}
