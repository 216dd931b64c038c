package tracing

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.17.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	k8stracing "k8s.io/component-base/tracing"
	tracingapi "k8s.io/component-base/tracing/api/v1"
	"k8s.io/klog/v2"
)

// DefaultSamplingRatePerMillion samples every trace started in the daemon
// (upstream's default is 0, which exports only traces a caller sampled): a
// daemon given an endpoint is being traced on purpose. A trace whose
// traceparent says sampled is always exported, as the sampler is
// parent-based.
const DefaultSamplingRatePerMillion = 1_000_000

// Options are the tracing flags.
type Options struct {
	// Endpoint is the host:port of an OTLP gRPC collector; empty: off.
	Endpoint string
	// SamplingRatePerMillion is how many of a million traces the daemon
	// starts are sampled.
	SamplingRatePerMillion int32
}

// NewOptions returns the defaults: off.
func NewOptions() *Options {
	return &Options{SamplingRatePerMillion: DefaultSamplingRatePerMillion}
}

// AddFlags registers the flags under upstream's names (upstream reads them
// from a TracingConfiguration; skiff takes them as flags).
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Endpoint, "tracing-endpoint", o.Endpoint, "The host:port of an OpenTelemetry collector's OTLP gRPC receiver (plain text, e.g. localhost:4317). Empty: tracing is off.")
	fs.Int32Var(&o.SamplingRatePerMillion, "tracing-sampling-rate-per-million", o.SamplingRatePerMillion, "How many of a million traces this daemon starts are sampled (0 to 1000000); a request whose traceparent is sampled is always traced. Used only with --tracing-endpoint.")
}

// Validate checks the options (nil options are tracing off).
func (o *Options) Validate() []error {
	if o == nil {
		return nil
	}
	var errs []error
	if o.Endpoint != "" {
		host, port, err := net.SplitHostPort(o.Endpoint)
		if err == nil && host == "" {
			err = errors.New("no host")
		}
		if err == nil {
			if n, perr := strconv.Atoi(port); perr != nil || n < 1 || n > 65535 {
				err = fmt.Errorf("port %q is not 1 to 65535", port)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--tracing-endpoint %q must be host:port: %v", o.Endpoint, err))
		}
	}
	if o.SamplingRatePerMillion < 0 || o.SamplingRatePerMillion > 1_000_000 {
		errs = append(errs, fmt.Errorf("--tracing-sampling-rate-per-million %d must be between 0 and 1000000", o.SamplingRatePerMillion))
	}
	return errs
}

// Enabled reports whether spans are exported.
func (o *Options) Enabled() bool { return o != nil && o.Endpoint != "" }

// Provider is a daemon's TracerProvider; Shutdown flushes the spans not
// exported yet.
type Provider = k8stracing.TracerProvider

// NewProvider builds the daemon's provider, naming it service (the
// resource's service.name, e.g. "skiff-apiserver") on host: an OTLP gRPC
// exporter behind a batch span processor and a parent-based sampler, as
// upstream's k8s.io/component-base/tracing.NewProvider builds it, or a no-op
// provider when o has no endpoint. The exporter connects lazily: a
// collector that is down loses spans, never the daemon.
func (o *Options) NewProvider(ctx context.Context, service, host string) (Provider, error) {
	if !o.Enabled() {
		return k8stracing.NewNoopTracerProvider(), nil
	}
	if errs := o.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	endpoint, rate := o.Endpoint, o.SamplingRatePerMillion
	attrs := []attribute.KeyValue{semconv.ServiceName(service)}
	if host != "" {
		attrs = append(attrs, semconv.HostName(host))
	}
	tp, err := k8stracing.NewProvider(ctx, &tracingapi.TracingConfiguration{Endpoint: &endpoint, SamplingRatePerMillion: &rate},
		nil, []resource.Option{resource.WithAttributes(attrs...)})
	if err != nil {
		return nil, fmt.Errorf("tracing to %s: %w", endpoint, err)
	}
	klog.FromContext(ctx).Info("tracing", "endpoint", endpoint, "samplingRatePerMillion", rate, "service", service)
	return tp, nil
}

// Shutdown flushes and stops tp, waiting at most 5 seconds for the
// collector.
func Shutdown(ctx context.Context, tp Provider) {
	if tp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "flushing the spans")
	}
}

// IsNoop reports whether tp records nothing (tracing off).
func IsNoop(tp trace.TracerProvider) bool {
	if tp == nil {
		return true
	}
	_, ok := tp.Tracer("").(noop.Tracer)
	return ok
}

// WrapConfig returns a copy of cfg whose requests made within a span carry
// it as a W3C traceparent header and are spans of their own (children of
// the caller's), as upstream wraps its components' clients
// (k8s.io/component-base/tracing WrapperFor). Requests made outside any
// span (watches, lease renewals) are left alone: with skiff's default
// sampling every one of them would otherwise be a trace of its own. With
// tracing off, cfg is returned as it is.
func WrapConfig(cfg *rest.Config, tp trace.TracerProvider) *rest.Config {
	if IsNoop(tp) {
		return cfg
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return otelhttp.NewTransport(rt, otelhttp.WithPropagators(k8stracing.Propagators()), otelhttp.WithTracerProvider(tp),
			otelhttp.WithFilter(func(r *http.Request) bool { return trace.SpanFromContext(r.Context()).SpanContext().IsValid() }))
	})
	return cfg
}

// Tracer is the named tracer of tp, or a no-op tracer when tp is nil.
func Tracer(tp trace.TracerProvider, name string) trace.Tracer {
	if tp == nil {
		return noop.NewTracerProvider().Tracer(name)
	}
	return tp.Tracer(name)
}

// Start starts a child of the span in ctx, with the same provider; when ctx
// carries no recording span (tracing off, or not sampled) it returns ctx
// and a span that records nothing, at no cost.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	return parent.TracerProvider().Tracer("skiff.dev/component-base/tracing").Start(ctx, name, trace.WithAttributes(attrs...))
}

// End records err on span (as upstream's spans do) and ends it.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Attribute keys of the objects a span acts on, OpenTelemetry's semantic
// conventions for Kubernetes, so that a backend finds a pod's spans across
// the daemons by its uid.
const (
	NamespaceKey = attribute.Key("k8s.namespace.name")
	PodNameKey   = attribute.Key("k8s.pod.name")
	PodUIDKey    = attribute.Key("k8s.pod.uid")
	NodeNameKey  = attribute.Key("k8s.node.name")
)

// PodAttributes names pod in a span: namespace, name and uid.
func PodAttributes(pod *corev1.Pod) []attribute.KeyValue {
	return []attribute.KeyValue{NamespaceKey.String(pod.Namespace), PodNameKey.String(pod.Name), PodUIDKey.String(string(pod.UID))}
}
