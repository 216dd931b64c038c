// Package tracing turns on OpenTelemetry tracing in a skiff daemon, as
// upstream's components do with k8s.io/component-base/tracing: the flags
// --tracing-endpoint (the host:port of an OTLP gRPC collector) and
// --tracing-sampling-rate-per-million, a TracerProvider that exports spans
// over OTLP, W3C trace context (traceparent) on every client-go request, and
// span helpers that cost nothing while tracing is off.
//
// Without --tracing-endpoint the provider is a no-op one: no exporter, no
// client transport wrapping, and Start returns the context unchanged with a
// span that records nothing.
package tracing
