package pod

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
)

func spanAttrs(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// A traced worker makes the syncs of a pod's start a SyncPod span naming
// the pod, with the sandbox, the pull and the container's create and start
// as its children in that order; once the pod runs, its steady syncs are
// not traced.
func TestWorkerSpans(t *testing.T) {
	h := newHarness(testPod(corev1.RestartPolicyAlways, "busybox"))
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	h.w.cfg.Tracer = tp.Tracer("test")
	h.w.cfg.Lifecycle = &Lifecycle{Hooks: []Hook{
		&NetworkHook{Network: TracedNetwork(h.net)},
		&ImagesHook{Runtime: TracedRuntime(h.rt), Now: h.clock.Now},
		&ContainersHook{Runtime: TracedRuntime(h.rt), Env: EnvContext{Objects: fakeObjects{}}},
	}}
	if h.sync(t) {
		t.Fatal("worker finished")
	}
	if st := h.status.last(); st.Phase != corev1.PodRunning {
		t.Fatalf("phase %s", st.Phase)
	}
	var syncs []sdktrace.ReadOnlySpan
	var children []string
	for _, s := range rec.Ended() {
		if s.Name() == "SyncPod" {
			syncs = append(syncs, s)
		}
	}
	if len(syncs) != 1 {
		t.Fatalf("%d SyncPod spans, want 1", len(syncs))
	}
	sync := syncs[0]
	if a := spanAttrs(sync); a["k8s.pod.uid"] != "u1" || a["k8s.pod.name"] != "p" || a["k8s.namespace.name"] != "ns" {
		t.Errorf("SyncPod attributes %v", a)
	}
	var last sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Parent().SpanID() != sync.SpanContext().SpanID() {
			continue
		}
		children = append(children, s.Name())
		if last != nil && s.StartTime().Before(last.EndTime()) {
			t.Errorf("%s started before %s ended", s.Name(), last.Name())
		}
		last = s
		a := spanAttrs(s)
		switch s.Name() {
		case "RunPodSandbox":
			if a["k8s.pod.uid"] != "u1" || a["k8s.pod.ips"] != `["10.0.0.1"]` {
				t.Errorf("RunPodSandbox attributes %v", a)
			}
		case "PullImage":
			if a["image"] != "docker.io/library/busybox:latest" {
				t.Errorf("PullImage attributes %v", a)
			}
		case "CreateContainer":
			if a["k8s.pod.uid"] != "u1" || a["k8s.container.name"] != "c" || a["container.id"] == "" {
				t.Errorf("CreateContainer attributes %v", a)
			}
		}
	}
	want := []string{"RunPodSandbox", "PullImage", "CreateContainer", "StartContainer"}
	if len(children) != len(want) {
		t.Fatalf("SyncPod's children %v, want %v", children, want)
	}
	for i := range want {
		if children[i] != want[i] {
			t.Fatalf("SyncPod's children %v, want %v", children, want)
		}
	}
	n := len(rec.Ended())
	h.sync(t)
	if len(rec.Ended()) != n {
		t.Errorf("a steady sync of a running pod was traced: %d spans, had %d", len(rec.Ended()), n)
	}
	// Outside a traced sync the wrappers make no spans.
	if _, err := TracedNetwork(h.net).SetUp(context.Background(), PodNetwork{UID: "u2"}); err != nil {
		t.Fatal(err)
	}
	if len(rec.Ended()) != n {
		t.Errorf("an untraced call made a span")
	}
	// The wrapper keeps the network's SandboxChecker.
	if _, ok := TracedNetwork(h.net).(SandboxChecker); !ok {
		t.Error("TracedNetwork hides SandboxChecker")
	}
}
