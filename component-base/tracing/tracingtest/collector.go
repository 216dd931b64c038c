// Package tracingtest is an OTLP gRPC collector on loopback for tests: it
// records the spans the daemons export, so that a test can assert what a
// tracing backend would show.
package tracingtest

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"k8s.io/client-go/rest"
)

// Span is one exported span, flattened.
type Span struct {
	// Service is the resource's service.name.
	Service              string
	Name                 string
	TraceID, SpanID      string
	ParentSpanID         string
	Start, End           time.Time
	Attributes           map[string]string
	Kind                 string
	Status, StatusDetail string
}

func (s Span) String() string {
	return fmt.Sprintf("%s %q trace=%s span=%s parent=%s %v", s.Service, s.Name, s.TraceID, s.SpanID, s.ParentSpanID, s.Attributes)
}

// Collector is an OTLP trace service on 127.0.0.1 recording every
// ExportTraceServiceRequest.
type Collector struct {
	collectortrace.UnimplementedTraceServiceServer
	addr string
	srv  *grpc.Server

	mu       sync.Mutex
	spans    []Span
	requests int
	changed  chan struct{}
}

// TB is what Start needs of a test (testing.TB, or a benchmark program's
// stand-in).
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// Start runs a collector until the test ends.
func Start(t TB) *Collector {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &Collector{addr: l.Addr().String(), srv: grpc.NewServer(), changed: make(chan struct{})}
	collectortrace.RegisterTraceServiceServer(c.srv, c)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.srv.Serve(l)
	}()
	t.Cleanup(func() {
		c.srv.Stop()
		<-done
	})
	return c
}

// Endpoint is the collector's host:port, for --tracing-endpoint.
func (c *Collector) Endpoint() string { return c.addr }

// Export records the request's spans.
func (c *Collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	var got []Span
	for _, rs := range req.GetResourceSpans() {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				got = append(got, Span{
					Service: service, Name: sp.GetName(),
					TraceID: hex.EncodeToString(sp.GetTraceId()), SpanID: hex.EncodeToString(sp.GetSpanId()),
					ParentSpanID: hex.EncodeToString(sp.GetParentSpanId()),
					Start:        time.Unix(0, int64(sp.GetStartTimeUnixNano())),
					End:          time.Unix(0, int64(sp.GetEndTimeUnixNano())),
					Attributes:   attrs(sp.GetAttributes()),
					Kind:         sp.GetKind().String(),
					Status:       sp.GetStatus().GetCode().String(), StatusDetail: sp.GetStatus().GetMessage(),
				})
			}
		}
	}
	c.mu.Lock()
	c.spans = append(c.spans, got...)
	c.requests++
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = fmt.Sprint(x.IntValue)
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = fmt.Sprint(x.BoolValue)
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = fmt.Sprint(x.DoubleValue)
		default:
			m[kv.GetKey()] = v.String()
		}
	}
	return m
}

// Spans is every span received so far, in the order of their start.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	out := append([]Span(nil), c.spans...)
	c.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// Requests is how many export requests arrived.
func (c *Collector) Requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests
}

// Match is a span predicate.
type Match func(Span) bool

// Named matches spans of service (any when empty) named name.
func Named(service, name string) Match {
	return func(s Span) bool { return (service == "" || s.Service == service) && s.Name == name }
}

// And matches spans every m matches.
func And(ms ...Match) Match {
	return func(s Span) bool {
		for _, m := range ms {
			if !m(s) {
				return false
			}
		}
		return true
	}
}

// Attr matches spans with attribute key equal to value.
func Attr(key, value string) Match {
	return func(s Span) bool { return s.Attributes[key] == value }
}

// Wait waits until a span matches m and returns the first one; it fails
// the test after timeout, listing what did arrive.
func (c *Collector) Wait(t testing.TB, timeout time.Duration, what string, m Match) Span {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		for _, s := range c.Spans() {
			if m(s) {
				return s
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			var names []string
			for _, s := range c.Spans() {
				names = append(names, s.String())
			}
			t.Fatalf("no span %s within %v; received %d:\n%s", what, timeout, len(names), strings.Join(names, "\n"))
			return Span{}
		}
	}
}

// WithTraceparent returns a copy of cfg whose requests carry the W3C
// traceparent of a sampled span spanID in trace traceID (hex), as a traced
// client's do.
func WithTraceparent(cfg *rest.Config, traceID, spanID string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	value := "00-" + traceID + "-" + spanID + "-01"
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("traceparent", value)
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
