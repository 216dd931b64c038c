package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"skiff.dev/component-base/tracing/tracingtest"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{SamplingRatePerMillion: 1}, ""},
		{Options{Endpoint: "localhost:4317", SamplingRatePerMillion: 1_000_000}, ""},
		{Options{Endpoint: "localhost", SamplingRatePerMillion: 1}, "--tracing-endpoint"},
		{Options{Endpoint: ":4317", SamplingRatePerMillion: 1}, "no host"},
		{Options{Endpoint: "h:70000", SamplingRatePerMillion: 1}, "port"},
		{Options{SamplingRatePerMillion: 1_000_001}, "--tracing-sampling-rate-per-million"},
		{Options{SamplingRatePerMillion: -1}, "--tracing-sampling-rate-per-million"},
	} {
		errs := tc.o.Validate()
		if tc.want == "" && len(errs) != 0 || tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.o, errs, tc.want)
		}
	}
}

// tracedClient starts a collector, a provider exporting to it, and a
// server answering a pod; got holds the last request's headers.
func tracedClient(t *testing.T) (*tracingtest.Collector, Provider, kubernetes.Interface, *http.Header) {
	col := tracingtest.Start(t)
	o := NewOptions()
	o.Endpoint = col.Endpoint()
	tp, err := o.NewProvider(context.Background(), "skiff-test", "node-a")
	if err != nil {
		t.Fatal(err)
	}
	got := new(http.Header)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns","uid":"u1"}}`))
	}))
	t.Cleanup(srv.Close)
	return col, tp, kubernetes.NewForConfigOrDie(WrapConfig(&rest.Config{Host: srv.URL}, tp)), got
}

// Off: a no-op provider, the client configuration untouched, and Start
// hands back the very context.
func TestOffCostsNothing(t *testing.T) {
	tp, err := NewOptions().NewProvider(context.Background(), "skiff-test", "")
	if err != nil {
		t.Fatal(err)
	}
	if !IsNoop(tp) {
		t.Fatalf("provider without an endpoint: %T", tp)
	}
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	if WrapConfig(cfg, tp) != cfg || cfg.WrapTransport != nil {
		t.Fatal("the client configuration was wrapped with tracing off")
	}
	ctx := context.Background()
	ctx2, span := Start(ctx, "x")
	if ctx2 != ctx || span.IsRecording() {
		t.Fatal("Start made a span with tracing off")
	}
	End(span, nil)
}

// On: spans reach an OTLP collector with the service's name; a client-go
// request carries the span's trace id in traceparent; children keep the
// trace.
func TestExportsAndPropagates(t *testing.T) {
	col, tp, client, got := tracedClient(t)

	ctx, root := Tracer(tp, "test").Start(context.Background(), "root")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1"}}
	cctx, child := Start(ctx, "child", PodAttributes(pod)...)
	if _, err := client.CoreV1().Pods("ns").Get(cctx, "p", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	End(child, nil)
	root.End()
	Shutdown(context.Background(), tp)

	traceID := root.SpanContext().TraceID().String()
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(*got)))
	if sc.TraceID().String() != traceID {
		t.Fatalf("request's traceparent %q, want trace %s", got.Get("traceparent"), traceID)
	}
	s := col.Wait(t, 10*time.Second, "child", tracingtest.Named("skiff-test", "child"))
	if s.TraceID != traceID || s.ParentSpanID != root.SpanContext().SpanID().String() {
		t.Errorf("child %v: not a child of root %s", s, root.SpanContext().SpanID())
	}
	if s.Attributes["k8s.pod.uid"] != "u1" || s.Attributes["k8s.namespace.name"] != "ns" || s.Attributes["k8s.pod.name"] != "p" {
		t.Errorf("child's attributes %v", s.Attributes)
	}
	get := col.Wait(t, 10*time.Second, "the client's request", tracingtest.And(tracingtest.Named("skiff-test", "HTTP GET"), func(x tracingtest.Span) bool { return x.TraceID == traceID }))
	if get.ParentSpanID != s.SpanID || get.SpanID != sc.SpanID().String() {
		t.Errorf("request span %v: parent should be the child span %s and its id the traceparent's %s", get, s.SpanID, sc.SpanID())
	}
}

// A request made outside any span is not traced and carries no
// traceparent.
func TestUntracedRequestsStayPlain(t *testing.T) {
	col, tp, client, got := tracedClient(t)
	if _, err := client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	_, marker := Tracer(tp, "test").Start(context.Background(), "marker")
	marker.End()
	Shutdown(context.Background(), tp)
	if got.Get("traceparent") != "" {
		t.Errorf("traceparent %q on a request made outside any span", got.Get("traceparent"))
	}
	col.Wait(t, 10*time.Second, "marker", tracingtest.Named("skiff-test", "marker"))
	for _, s := range col.Spans() {
		if s.Name != "marker" {
			t.Errorf("span %v exported for an untraced request", s)
		}
	}
}
