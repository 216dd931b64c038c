package integration

import (
	"context"
	"testing"
	"time"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/tracing/tracingtest"
	"skiff.dev/scheduler/app"
)

// TestTracing: with --tracing-endpoint the scheduler exports a pod's
// scheduling cycle and its bind as spans naming the pod's uid and the
// node, the bind a child of the cycle, and the bind request carries the
// trace to the API server, whose pods/binding span joins it.
func TestTracing(t *testing.T) {
	col := tracingtest.Start(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	ts := testserver.Start(t, func(o *server.Options) { o.Tracing.Endpoint = col.Endpoint() })
	e := &env{t: t, ctx: context.Background(), client: ts.Client}
	e.serviceAccount()
	e.sched, _ = startScheduler(t, ts, func(o *app.Options, _ string) { o.Tracing.Endpoint = col.Endpoint() })
	e.node("n1", "4", "8Gi", 110, nil)
	pod := e.pod("traced", "100m")
	if host := e.waitBound("traced"); host != "n1" {
		t.Fatalf("bound to %q", host)
	}

	uid := string(pod.UID)
	cycle := col.Wait(t, 20*time.Second, "SchedulingCycle of the pod", tracingtest.And(
		tracingtest.Named("skiff-scheduler", "SchedulingCycle"), tracingtest.Attr("k8s.pod.uid", uid)))
	if cycle.Attributes["k8s.node.name"] != "n1" || cycle.Attributes["k8s.pod.name"] != "traced" || cycle.Attributes["attempts"] != "1" {
		t.Errorf("cycle span %v", cycle)
	}
	bind := col.Wait(t, 20*time.Second, "Bind of the pod", tracingtest.And(
		tracingtest.Named("skiff-scheduler", "Bind"), tracingtest.Attr("k8s.pod.uid", uid)))
	if bind.TraceID != cycle.TraceID || bind.ParentSpanID != cycle.SpanID || bind.Attributes["k8s.node.name"] != "n1" {
		t.Errorf("bind span %v: want a child of the cycle %v", bind, cycle)
	}
	if bind.Start.Before(cycle.Start) {
		t.Errorf("bind started %v, before its cycle %v", bind.Start, cycle.Start)
	}
	// The scheduler's client request, then the API server's span of it.
	request := col.Wait(t, 20*time.Second, "the bind's client request", func(s tracingtest.Span) bool {
		return s.Service == "skiff-scheduler" && s.TraceID == bind.TraceID && s.ParentSpanID == bind.SpanID && s.Name == "HTTP POST"
	})
	served := col.Wait(t, 20*time.Second, "the API server's pods/binding span", tracingtest.And(
		tracingtest.Named("skiff-apiserver", "KubernetesAPI"), tracingtest.Attr("resource", "pods"), tracingtest.Attr("subresource", "binding")))
	if served.TraceID != bind.TraceID || served.ParentSpanID != request.SpanID || served.Attributes["name"] != "traced" {
		t.Errorf("API server span %v: want the child of the scheduler's request %v", served, request)
	}
}
