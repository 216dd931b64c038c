package replicaset

import (
	"fmt"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	core "k8s.io/client-go/testing"
)

// A traced sync is a "Sync ReplicaSet" span naming the ReplicaSet, with a
// "Create pod" child per pod it created, naming the pod's namespace, name
// and uid.
func TestSyncSpans(t *testing.T) {
	rs := newRS("nginx", 2)
	f := newFixture(t, rs)
	n := 0
	f.client.PrependReactor("create", "pods", func(action core.Action) (bool, runtime.Object, error) {
		p := action.(core.CreateAction).GetObject().(*corev1.Pod)
		n++
		p.UID = types.UID(fmt.Sprintf("uid-%d", n))
		return false, nil, nil
	})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	f.c.tracer = tp.Tracer("test")
	if err := f.sync(rs); err != nil {
		t.Fatal(err)
	}
	var sync sdktrace.ReadOnlySpan
	var creates []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.Name() {
		case "Sync ReplicaSet":
			sync = s
		case "Create pod":
			creates = append(creates, s)
		}
	}
	if sync == nil {
		t.Fatalf("no Sync ReplicaSet span in %d spans", len(rec.Ended()))
	}
	attrs := map[string]string{}
	for _, kv := range sync.Attributes() {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if attrs["k8s.namespace.name"] != "default" || attrs["k8s.replicaset.name"] != "nginx" || attrs["k8s.replicaset.uid"] != string(rs.UID) ||
		attrs["replicas"] != "2" || attrs["pods"] != "0" {
		t.Errorf("sync span attributes %v", attrs)
	}
	if len(creates) != 2 {
		t.Fatalf("%d Create pod spans, want 2", len(creates))
	}
	uids := map[string]bool{}
	for _, c := range creates {
		if c.Parent().SpanID() != sync.SpanContext().SpanID() || c.SpanContext().TraceID() != sync.SpanContext().TraceID() {
			t.Errorf("Create pod span is not a child of the sync")
		}
		a := map[string]string{}
		for _, kv := range c.Attributes() {
			a[string(kv.Key)] = kv.Value.Emit()
		}
		uids[a["k8s.pod.uid"]] = true
		if a["k8s.namespace.name"] != "default" || a["k8s.pod.name"] == "" || a["k8s.pod.uid"] == "" {
			t.Errorf("Create pod span attributes %v", a)
		}
	}
	if !uids["uid-1"] || !uids["uid-2"] {
		t.Errorf("the Create pod spans name uids %v, want the created pods' uid-1 and uid-2", uids)
	}
}
