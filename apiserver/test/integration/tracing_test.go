package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/tracing/tracingtest"
)

// TestTracing: with --tracing-endpoint the API server exports each
// request as a KubernetesAPI span, the child of the client's traceparent,
// naming the verb, resource, namespace and code, with the admission and
// etcd write (and its revision) as child spans in that order.
func TestTracing(t *testing.T) {
	col := tracingtest.Start(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	ts := testserver.Start(t, func(o *server.Options) { o.Tracing.Endpoint = col.Endpoint() })

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	client := kubernetes.NewForConfigOrDie(tracingtest.WithTraceparent(ts.AdminConfig, traceID, parentID))
	pod, err := client.CoreV1().Pods("default").Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "traced"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	inTrace := func(s tracingtest.Span) bool { return s.TraceID == traceID }
	req := col.Wait(t, 20*time.Second, "KubernetesAPI create pods", tracingtest.And(inTrace,
		tracingtest.Named("skiff-apiserver", "KubernetesAPI"), tracingtest.Attr("verb", "create"), tracingtest.Attr("resource", "pods")))
	if req.ParentSpanID != parentID {
		t.Errorf("request span's parent %s, want the traceparent's %s", req.ParentSpanID, parentID)
	}
	if req.Attributes["k8s.namespace.name"] != "default" || req.Attributes["code"] != "201" || req.Kind != "SPAN_KIND_SERVER" {
		t.Errorf("request span %v", req)
	}
	childOf := func(s tracingtest.Span) bool { return s.TraceID == traceID && s.ParentSpanID == req.SpanID }
	admit := col.Wait(t, 10*time.Second, "Admit", tracingtest.And(childOf, tracingtest.Named("skiff-apiserver", "Admit")))
	validate := col.Wait(t, 10*time.Second, "Validate admission", tracingtest.And(childOf, tracingtest.Named("skiff-apiserver", "Validate admission")))
	write := col.Wait(t, 10*time.Second, "Create etcd3", tracingtest.And(childOf, tracingtest.Named("skiff-apiserver", "Create etcd3")))
	if write.Attributes["etcd.revision"] != pod.ResourceVersion || write.Attributes["key"] != "/registry/pods/default/traced" {
		t.Errorf("etcd write span %v: want revision %s", write, pod.ResourceVersion)
	}
	if admit.End.After(validate.Start) || validate.End.After(write.Start) || write.End.After(req.End) {
		t.Errorf("spans out of order: admit %v-%v, validate %v-%v, write %v-%v, request ends %v",
			admit.Start, admit.End, validate.Start, validate.End, write.Start, write.End, req.End)
	}

	// A read is traced too, with the revision it read at.
	if _, err := client.CoreV1().Pods("default").Get(context.Background(), "traced", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	col.Wait(t, 20*time.Second, "KubernetesAPI get pods/traced", tracingtest.And(inTrace,
		tracingtest.Named("skiff-apiserver", "KubernetesAPI"), tracingtest.Attr("verb", "get"), tracingtest.Attr("name", "traced")))
}
