package app

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/tracing/tracingtest"
	cmapp "skiff.dev/controller-manager/app"
)

// TestTracing: with --tracing-endpoint the ReplicaSet controller's sync is
// a span naming the ReplicaSet, each pod it creates a child span naming
// the pod's uid, and the create request carries the trace to the API
// server, whose span of it (and its etcd write) joins it.
func TestTracing(t *testing.T) {
	col := tracingtest.Start(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	ts := testserver.Start(t, func(o *server.Options) { o.Tracing.Endpoint = col.Endpoint() })
	startCM(t, ts, func(o *cmapp.Options) {
		o.Controllers = []string{"replicaset"}
		o.Tracing.Endpoint = col.Endpoint()
	})
	ctx := context.Background()
	rs, err := ts.Client.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("traced", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var uids []string
	poll(t, "two pods", func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, ts.Client, "default", "traced")
		uids = nil
		for _, p := range pods {
			uids = append(uids, string(p.UID))
		}
		return err == nil && len(pods) == 2, nil
	})
	for _, uid := range uids {
		create := col.Wait(t, 20*time.Second, "Create pod "+uid, tracingtest.And(
			tracingtest.Named("skiff-controller-manager", "Create pod"), tracingtest.Attr("k8s.pod.uid", uid)))
		sync := col.Wait(t, 20*time.Second, "the sync that created "+uid, func(s tracingtest.Span) bool {
			return s.Service == "skiff-controller-manager" && s.Name == "Sync ReplicaSet" && s.SpanID == create.ParentSpanID && s.TraceID == create.TraceID
		})
		if sync.Attributes["k8s.replicaset.uid"] != string(rs.UID) || sync.Attributes["k8s.replicaset.name"] != "traced" || sync.Attributes["k8s.namespace.name"] != "default" {
			t.Errorf("sync span %v", sync)
		}
		request := col.Wait(t, 20*time.Second, "the create request of "+uid, func(s tracingtest.Span) bool {
			return s.Service == "skiff-controller-manager" && s.Name == "HTTP POST" && s.ParentSpanID == create.SpanID
		})
		served := col.Wait(t, 20*time.Second, "the API server's span of the create of "+uid, func(s tracingtest.Span) bool {
			return s.Service == "skiff-apiserver" && s.Name == "KubernetesAPI" && s.ParentSpanID == request.SpanID
		})
		if served.TraceID != sync.TraceID || served.Attributes["verb"] != "create" || served.Attributes["resource"] != "pods" || served.Attributes["code"] != "201" {
			t.Errorf("API server span %v: want the create of the pod in the controller's trace %s", served, sync.TraceID)
		}
		col.Wait(t, 20*time.Second, "the etcd write of "+uid, func(s tracingtest.Span) bool {
			return s.Name == "Create etcd3" && s.ParentSpanID == served.SpanID && s.Attributes["etcd.revision"] != ""
		})
	}
}
