package iptables

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
)

// withPods names each endpoint's pod, as the endpointslice controller does.
func withPods(s *discoveryv1.EndpointSlice, pods ...string) *discoveryv1.EndpointSlice {
	for i := range s.Endpoints {
		s.Endpoints[i].TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: s.Namespace, Name: pods[i]}
	}
	return s
}

func rulesWrittenEvents(t *testing.T, cs *fake.Clientset, want int) []corev1.Event {
	t.Helper()
	var evs []corev1.Event
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := cs.CoreV1().Events("ns").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		evs = l.Items
		return len(evs) >= want, nil
	}); err != nil {
		t.Fatalf("%d RulesWritten events, want %d: %v", len(evs), want, evs)
	}
	return evs
}

// After a sync that programs new ready endpoints of a Service, the proxy
// records one RulesWritten event on the Service naming the pods, with its
// node and the time to the microsecond; the first sync (endpoints already
// there) and syncs that add no ready endpoint record nothing.
func TestRulesWrittenEvents(t *testing.T) {
	cs := fake.NewSimpleClientset()
	h := newHarness(t, &fakeKernel{})
	m := NewMetrics(prometheus.NewRegistry())
	h.p.o.RulesWritten = NewRulesWritten(cs.CoreV1(), "node-1", m)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.p.o.RulesWritten.Run(ctx)

	web := svc("web", "10.96.0.10", []corev1.ServicePort{tcp("http", 80, 8080)})
	web.UID = "uid-web"
	h.set(web, withPods(slice("web", "web-1", tcpPort("http", 8080), ep{ip: "10.0.0.1", node: "node-1"}), "web-a"))
	h.sync()
	// web-b joins not ready, then ready; web-a stays.
	h.set(withPods(slice("web", "web-1", tcpPort("http", 8080), ep{ip: "10.0.0.1", node: "node-1"}, ep{ip: "10.0.0.2", node: "node-2", notReady: true}), "web-a", "web-b"))
	h.sync()
	before := time.Now()
	h.set(withPods(slice("web", "web-1", tcpPort("http", 8080), ep{ip: "10.0.0.1", node: "node-1"}, ep{ip: "10.0.0.2", node: "node-2"}), "web-a", "web-b"))
	h.sync()
	evs := rulesWrittenEvents(t, cs, 1)
	if len(evs) != 1 {
		t.Fatalf("events: %+v", evs)
	}
	e := evs[0]
	if e.Reason != EventReasonRulesWritten || e.InvolvedObject.Kind != "Service" || e.InvolvedObject.Name != "web" || e.InvolvedObject.UID != "uid-web" ||
		e.Message != "Rules written on node node-1 for 1 new endpoint: web-b (10.0.0.2:8080)" ||
		e.ReportingController != "kube-proxy" || e.ReportingInstance != "node-1" || e.Action == "" || e.Type != corev1.EventTypeNormal {
		t.Errorf("event: %+v", e)
	}
	if e.EventTime.Before(&metav1.MicroTime{Time: before}) || e.EventTime.Time.After(time.Now()) {
		t.Errorf("eventTime %v not the sync's end", e.EventTime)
	}
	// A sync that changes nothing of web records nothing.
	h.set(svc("other", "10.96.0.11", []corev1.ServicePort{tcp("http", 80, 8080)}))
	h.sync()
	h.fullSync()
	if evs := rulesWrittenEvents(t, cs, 1); len(evs) != 1 {
		t.Errorf("%d events after syncs without new endpoints", len(evs))
	}
}

// A sync with a thousand Services' new endpoints writes at most the burst
// of events; the rest are counted as dropped. The message of a Service
// with many new endpoints stays within the API's limit.
func TestRulesWrittenLimits(t *testing.T) {
	cs := fake.NewSimpleClientset()
	h := newHarness(t, &fakeKernel{})
	m := NewMetrics(prometheus.NewRegistry())
	h.p.o.RulesWritten = NewRulesWritten(cs.CoreV1(), "node-1", m)
	h.sync()
	for i := range 1000 {
		name := fmt.Sprintf("s%d", i)
		h.set(svc(name, fmt.Sprintf("10.96.%d.%d", i/250, i%250+1), []corev1.ServicePort{tcp("http", 80, 8080)}),
			withPods(slice(name, name, tcpPort("http", 8080), ep{ip: fmt.Sprintf("10.1.%d.%d", i/250, i%250+1), node: "node-1"}), name+"-pod"))
	}
	h.sync()
	if n := len(h.p.o.RulesWritten.queue); n != RulesWrittenBurst {
		t.Errorf("%d events queued, want %d", n, RulesWrittenBurst)
	}
	if d := testutil.ToFloat64(m.RulesWrittenDropped); d != 1000-RulesWrittenBurst {
		t.Errorf("%v dropped, want %d", d, 1000-RulesWrittenBurst)
	}

	var eps []newEndpoint
	for i := range 1000 {
		eps = append(eps, newEndpoint{pod: fmt.Sprintf("web-%04d", i), addr: fmt.Sprintf("10.2.%d.%d:8080", i/250, i%250)})
	}
	msg := rulesWrittenMessage("node-1", eps)
	if len(msg) > maxNote || !strings.HasPrefix(msg, "Rules written on node node-1 for 1000 new endpoints: web-0000 (10.2.0.0:8080), web-0001") ||
		!strings.HasSuffix(msg, " more") {
		t.Errorf("message (%d characters): %s", len(msg), msg)
	}
}
