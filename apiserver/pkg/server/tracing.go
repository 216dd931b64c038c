package server

import (
	"context"
	"net/http"
	"os"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	k8stracing "k8s.io/component-base/tracing"

	"skiff.dev/apiserver/pkg/endpoints"
	"skiff.dev/component-base/tracing"
)

// setupTracing builds the server's TracerProvider from --tracing-endpoint
// (a no-op one without it).
func (s *Server) setupTracing(ctx context.Context, o *Options) error {
	host, _ := os.Hostname()
	tp, err := o.Tracing.NewProvider(ctx, "skiff-apiserver", host)
	if err != nil {
		return err
	}
	s.tracerProvider = tp
	return nil
}

// withTracing is upstream's WithTracing filter: every request is a span
// named KubernetesAPI, the child of the span an incoming W3C traceparent
// names (a sampled parent is always traced), and the filters, admission
// and storage below add their spans to it. With tracing off the handler
// is returned unwrapped.
func (s *Server) withTracing(next http.Handler) http.Handler {
	if tracing.IsNoop(s.tracerProvider) {
		return next
	}
	return k8stracing.WithTracing(next, s.tracerProvider, "KubernetesAPI")
}

// traceRequest names what the request acted on in its span: the verb,
// the resource, the namespace and name, and the response's code.
func traceRequest(ctx context.Context, ri *endpoints.RequestInfo, code int) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("verb", ri.Verb), attribute.String("group", ri.Group), attribute.String("version", ri.Version),
		attribute.String("resource", ri.Resource), attribute.String("code", strconv.Itoa(code)),
	}
	if ri.Subresource != "" {
		attrs = append(attrs, attribute.String("subresource", ri.Subresource))
	}
	if ri.Namespace != "" {
		attrs = append(attrs, tracing.NamespaceKey.String(ri.Namespace))
	}
	if ri.Name != "" {
		attrs = append(attrs, attribute.String("name", ri.Name))
	}
	span.SetAttributes(attrs...)
}
