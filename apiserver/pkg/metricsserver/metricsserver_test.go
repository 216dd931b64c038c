package metricsserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// kubelet is a fake node's /metrics/resource: cumulative CPU seconds and
// working sets, stamped with ts.
type kubelet struct {
	ts       time.Time
	nodeCPU  float64
	nodeMem  float64
	start    time.Time
	burnCPU  float64 // ns/burn container "c"
	burnMem  float64
	sideCPU  float64 // ns/burn container "side"
	otherCPU float64 // other/idle container "c"
	fail     bool
	// noPods: the node runs no pod.
	noPods bool
}

func (k kubelet) body() string {
	ms := k.ts.UnixMilli()
	if k.noPods {
		return fmt.Sprintf("node_cpu_usage_seconds_total %g %d\nnode_memory_working_set_bytes %g %d\n", k.nodeCPU, ms, k.nodeMem, ms)
	}
	st := float64(k.start.UnixNano()) / 1e9
	return fmt.Sprintf(`# HELP node_cpu_usage_seconds_total Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total %[2]g %[1]d
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes %[3]g %[1]d
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="c",namespace="ns",pod="burn"} %[4]g %[1]d
container_cpu_usage_seconds_total{container="side",namespace="ns",pod="burn"} %[6]g %[1]d
container_cpu_usage_seconds_total{container="c",namespace="other",pod="idle"} %[7]g %[1]d
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="c",namespace="ns",pod="burn"} %[5]g %[1]d
container_memory_working_set_bytes{container="side",namespace="ns",pod="burn"} 1024 %[1]d
container_memory_working_set_bytes{container="c",namespace="other",pod="idle"} 2048 %[1]d
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="c",namespace="ns",pod="burn"} %[8]f %[9]d
container_start_time_seconds{container="side",namespace="ns",pod="burn"} %[8]f %[9]d
container_start_time_seconds{container="c",namespace="other",pod="idle"} %[8]f %[9]d
# TYPE scrape_error gauge
scrape_error 0
`, ms, k.nodeCPU, k.nodeMem, k.burnCPU, k.burnMem, k.sideCPU, k.otherCPU, st, k.start.UnixMilli())
}

type fakeScraper struct {
	mu    sync.Mutex
	nodes map[string]kubelet
	asked []string
}

func (f *fakeScraper) Scrape(_ context.Context, node *corev1.Node) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, node.Name)
	k, ok := f.nodes[node.Name]
	if !ok || k.fail {
		return nil, errors.New("connection refused")
	}
	return io.NopCloser(strings.NewReader(k.body())), nil
}

func node(name string, ready bool, labels map[string]string) *corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
}

func testPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

var t0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

type fixture struct {
	scraper *fakeScraper
	srv     *Server
	h       http.Handler
}

func newFixture() *fixture {
	f := &fixture{scraper: &fakeScraper{nodes: map[string]kubelet{}}}
	nodes := []*corev1.Node{node("n1", true, map[string]string{"zone": "a"}), node("n2", true, map[string]string{"zone": "b"}), node("down", false, nil)}
	pods := []*corev1.Pod{testPod("ns", "burn", map[string]string{"app": "burn"}), testPod("other", "idle", map[string]string{"app": "idle"}), testPod("ns", "pending", nil)}
	f.srv = New(Options{
		Resolution: time.Second, Scraper: f.scraper, Now: func() time.Time { return t0.Add(time.Hour) },
		Nodes: func(context.Context) ([]*corev1.Node, error) { return nodes, nil },
		Pods: func(_ context.Context, ns string) ([]*corev1.Pod, error) {
			var out []*corev1.Pod
			for _, p := range pods {
				if ns == "" || p.Namespace == ns {
					out = append(out, p)
				}
			}
			return out, nil
		},
	})
	f.h = f.srv.Handler(http.NotFoundHandler())
	return f
}

// scrapeTwice gives n1 two points 2 s apart: the node burns 1.5 cores,
// ns/burn's container c half a core and side none; n2 answers once.
func (f *fixture) scrapeTwice(t *testing.T) {
	t.Helper()
	f.scraper.nodes["n1"] = kubelet{ts: t0, nodeCPU: 100, nodeMem: 1 << 30, start: t0.Add(-time.Minute), burnCPU: 10, burnMem: 5 << 20, sideCPU: 1, otherCPU: 3}
	f.srv.Scrape(context.Background())
	f.scraper.nodes["n1"] = kubelet{ts: t0.Add(2 * time.Second), nodeCPU: 103, nodeMem: 2 << 30, start: t0.Add(-time.Minute), burnCPU: 11, burnMem: 6 << 20, sideCPU: 1, otherCPU: 3.2}
	f.scraper.nodes["n2"] = kubelet{ts: t0.Add(2 * time.Second), nodeCPU: 1, nodeMem: 1, noPods: true}
	f.srv.Scrape(context.Background())
}

func (f *fixture) get(t *testing.T, path string, accept string) (int, []byte) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w.Code, w.Body.Bytes()
}

func decodeJSON[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return v
}

func TestNodeMetrics(t *testing.T) {
	f := newFixture()
	if code, body := f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes", ""); code != http.StatusOK || strings.Contains(string(body), `"name"`) {
		t.Fatalf("before any scrape: %d %s, want an empty list", code, body)
	}
	f.scrapeTwice(t)
	for _, asked := range f.scraper.asked {
		if asked == "down" {
			t.Errorf("the not-Ready node was scraped")
		}
	}
	code, body := f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes", "")
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, body)
	}
	list := decodeJSON[metricsv1beta1.NodeMetricsList](t, body)
	if list.Kind != "NodeMetricsList" || list.APIVersion != "metrics.k8s.io/v1beta1" {
		t.Errorf("list type = %+v", list.TypeMeta)
	}
	// n2 has one point only: no rate yet.
	if len(list.Items) != 1 || list.Items[0].Name != "n1" {
		t.Fatalf("items = %+v, want n1 only", list.Items)
	}
	n1 := list.Items[0]
	if cpu := n1.Usage.Cpu().MilliValue(); cpu != 1500 {
		t.Errorf("n1 cpu = %dm, want 1500m", cpu)
	}
	if mem := n1.Usage.Memory().Value(); mem != 2<<30 {
		t.Errorf("n1 memory = %d, want the last working set", mem)
	}
	if n1.Window.Duration != 2*time.Second || !n1.Timestamp.Time.Equal(t0.Add(2*time.Second)) {
		t.Errorf("n1 window %v timestamp %v", n1.Window, n1.Timestamp)
	}
	if n1.Labels["zone"] != "a" || !n1.CreationTimestamp.Time.Equal(t0.Add(time.Hour)) {
		t.Errorf("n1 meta = %+v", n1.ObjectMeta)
	}

	code, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Db", "")
	if list := decodeJSON[metricsv1beta1.NodeMetricsList](t, body); code != http.StatusOK || len(list.Items) != 0 {
		t.Errorf("zone=b: %d %s, want no items", code, body)
	}
	code, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes/n1", "")
	if m := decodeJSON[metricsv1beta1.NodeMetrics](t, body); code != http.StatusOK || m.Kind != "NodeMetrics" || m.Name != "n1" {
		t.Errorf("get n1: %d %s", code, body)
	}
	code, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes/n2", "")
	if st := decodeJSON[metav1.Status](t, body); code != http.StatusNotFound || st.Message != `nodemetrics.metrics.k8s.io "n2" not found` {
		t.Errorf("get n2: %d %s", code, body)
	}

	// n1 stops answering: it is left out until it has two points again.
	f.scraper.nodes["n1"] = kubelet{fail: true}
	f.scraper.nodes["n2"] = kubelet{ts: t0.Add(3 * time.Second), nodeCPU: 2, nodeMem: 1, noPods: true}
	f.srv.Scrape(context.Background())
	if _, body := f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes", ""); len(decodeJSON[metricsv1beta1.NodeMetricsList](t, body).Items) != 1 {
		t.Errorf("after n1 failed: %s, want n2 only (its second point)", body)
	}
}

func TestPodMetrics(t *testing.T) {
	f := newFixture()
	f.scrapeTwice(t)
	code, body := f.get(t, "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods", "")
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, body)
	}
	list := decodeJSON[metricsv1beta1.PodMetricsList](t, body)
	if len(list.Items) != 1 || list.Items[0].Name != "burn" || list.Items[0].Namespace != "ns" {
		t.Fatalf("items = %+v, want ns/burn only (pending has no metrics)", list.Items)
	}
	burn := list.Items[0]
	if len(burn.Containers) != 2 || burn.Containers[0].Name != "c" || burn.Containers[1].Name != "side" {
		t.Fatalf("containers = %+v", burn.Containers)
	}
	if cpu := burn.Containers[0].Usage.Cpu().MilliValue(); cpu != 500 {
		t.Errorf("c cpu = %dm, want 500m", cpu)
	}
	if mem := burn.Containers[0].Usage.Memory().Value(); mem != 6<<20 {
		t.Errorf("c memory = %d", mem)
	}
	if burn.Containers[1].Usage.Cpu().IsZero() == false {
		t.Errorf("side cpu = %v, want 0", burn.Containers[1].Usage.Cpu())
	}
	if burn.Labels["app"] != "burn" || burn.Window.Duration != 2*time.Second {
		t.Errorf("burn = %+v", burn)
	}

	_, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/pods", "")
	if n := len(decodeJSON[metricsv1beta1.PodMetricsList](t, body).Items); n != 2 {
		t.Errorf("all namespaces: %d items, want 2: %s", n, body)
	}
	_, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app+in+(idle)", "")
	if l := decodeJSON[metricsv1beta1.PodMetricsList](t, body); len(l.Items) != 1 || l.Items[0].Name != "idle" {
		t.Errorf("app in (idle): %s", body)
	}
	if c := decodeJSON[metricsv1beta1.PodMetricsList](t, body).Items[0].Containers[0]; c.Usage.Cpu().MilliValue() != 100 {
		t.Errorf("idle cpu = %v, want 100m", c.Usage.Cpu())
	}
	_, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=metadata.namespace%3Dother", "")
	if l := decodeJSON[metricsv1beta1.PodMetricsList](t, body); len(l.Items) != 1 || l.Items[0].Namespace != "other" {
		t.Errorf("metadata.namespace=other: %s", body)
	}
	code, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/burn", "")
	if m := decodeJSON[metricsv1beta1.PodMetrics](t, body); code != http.StatusOK || m.Kind != "PodMetrics" || m.Name != "burn" {
		t.Errorf("get burn: %d %s", code, body)
	}
	code, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/pending", "")
	if st := decodeJSON[metav1.Status](t, body); code != http.StatusNotFound || st.Message != `podmetrics.metrics.k8s.io "ns/pending" not found` || st.Details.Kind != "podmetrics" {
		t.Errorf("get pending: %d %s", code, body)
	}

	// Container c restarts: the pod has no metrics until c has two points
	// of its new life.
	k := f.scraper.nodes["n1"]
	k.ts, k.burnCPU = k.ts.Add(2*time.Second), 0.1
	restarted := k
	restarted.start = k.ts.Add(-time.Second)
	f.scraper.nodes["n1"] = restarted
	f.srv.Scrape(context.Background())
	if _, body := f.get(t, "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods", ""); len(decodeJSON[metricsv1beta1.PodMetricsList](t, body).Items) != 0 {
		t.Errorf("after the restart: %s, want no items", body)
	}
	restarted.ts, restarted.burnCPU = restarted.ts.Add(time.Second), 0.35
	f.scraper.nodes["n1"] = restarted
	f.srv.Scrape(context.Background())
	_, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods", "")
	if l := decodeJSON[metricsv1beta1.PodMetricsList](t, body); len(l.Items) != 1 || l.Items[0].Containers[0].Usage.Cpu().MilliValue() != 250 {
		t.Errorf("second point after the restart: %s, want c at 250m", body)
	}
}

func TestSameReadingKeepsThePreviousPoint(t *testing.T) {
	f := newFixture()
	f.scrapeTwice(t)
	// The kubelet answers with the same timestamps again.
	f.srv.Scrape(context.Background())
	_, body := f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes/n1", "")
	if m := decodeJSON[metricsv1beta1.NodeMetrics](t, body); m.Usage.Cpu().MilliValue() != 1500 {
		t.Errorf("n1 = %s, want the rate kept", body)
	}
}

func TestRequestErrors(t *testing.T) {
	f := newFixture()
	f.scrapeTwice(t)
	for _, tc := range []struct {
		name, method, path string
		want               int
		reason             metav1.StatusReason
	}{
		{"bad label selector", http.MethodGet, "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=a%3D%3D%3Db", http.StatusBadRequest, metav1.StatusReasonBadRequest},
		{"unknown field", http.MethodGet, "/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=spec.nodeName%3Dx", http.StatusBadRequest, metav1.StatusReasonBadRequest},
		{"watch", http.MethodGet, "/apis/metrics.k8s.io/v1beta1/nodes?watch=true", http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed},
		{"create", http.MethodPost, "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods", http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed},
		{"delete", http.MethodDelete, "/apis/metrics.k8s.io/v1beta1/nodes/n1", http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed},
		{"unknown resource", http.MethodGet, "/apis/metrics.k8s.io/v1beta1/services", http.StatusNotFound, metav1.StatusReasonNotFound},
		{"pod without namespace", http.MethodGet, "/apis/metrics.k8s.io/v1beta1/pods/burn", http.StatusNotFound, metav1.StatusReasonNotFound},
		{"too deep", http.MethodGet, "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/burn/log", http.StatusNotFound, metav1.StatusReasonNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			f.h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
			st := decodeJSON[metav1.Status](t, w.Body.Bytes())
			if w.Code != tc.want || st.Reason != tc.reason || st.Kind != "Status" {
				t.Errorf("%d %s, want %d %s", w.Code, w.Body, tc.want, tc.reason)
			}
		})
	}
	// Discovery documents are the server's.
	if code, _ := f.get(t, "/apis/metrics.k8s.io/v1beta1", ""); code != http.StatusNotFound {
		t.Errorf("the group-version root went to the metrics handler (code %d), want it passed on", code)
	}
}

func TestNegotiation(t *testing.T) {
	f := newFixture()
	f.scrapeTwice(t)
	code, body := f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes", "application/vnd.kubernetes.protobuf, */*")
	if code != http.StatusOK {
		t.Fatalf("protobuf: %d %s", code, body)
	}
	info, _ := serializerFor("application/vnd.kubernetes.protobuf")
	obj, _, err := info.Serializer.Decode(body, nil, &metricsv1beta1.NodeMetricsList{})
	if err != nil {
		t.Fatalf("decoding the protobuf list: %v", err)
	}
	if l := obj.(*metricsv1beta1.NodeMetricsList); len(l.Items) != 1 || l.Items[0].Usage.Cpu().MilliValue() != 1500 {
		t.Errorf("protobuf list = %+v", l)
	}
	// A Table clause not understood is passed over for the next.
	code, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes", "application/json;as=Table;v=v9;g=meta.k8s.io,application/json")
	if code != http.StatusOK || !strings.Contains(string(body), `"kind":"NodeMetricsList"`) {
		t.Errorf("unknown table version then json: %d %s", code, body)
	}
	if code, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes", "text/html"); code != http.StatusNotAcceptable {
		t.Errorf("text/html: %d %s, want 406", code, body)
	}
	var _ runtime.Object = &metricsv1beta1.NodeMetricsList{}
}

func TestDecodeIgnoresIncompletePoints(t *testing.T) {
	b := newBatch()
	text := `node_cpu_usage_seconds_total 5 1000
container_cpu_usage_seconds_total{container="c",namespace="ns",pod="p"} 1 1000
container_memory_working_set_bytes{container="d",namespace="ns",pod="p"} 1 1000
`
	if err := decode(strings.NewReader(text), "n", t0, b); err != nil {
		t.Fatal(err)
	}
	if len(b.nodes) != 0 || len(b.pods) != 0 {
		t.Errorf("batch = %+v, want nothing (each point lacks CPU or memory)", b)
	}
	if err := decode(strings.NewReader("not { metrics"), "n", t0, b); err == nil {
		t.Error("a body that is not the text format: want an error")
	}
}

func TestStartScrapesEveryResolution(t *testing.T) {
	f := newFixture()
	f.scraper.nodes["n1"] = kubelet{ts: t0, start: t0}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	f.srv.o.Resolution = 20 * time.Millisecond
	go func() { done <- f.srv.Start(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.scraper.mu.Lock()
		n := len(f.scraper.asked)
		f.scraper.mu.Unlock()
		if n >= 6 { // n1 and n2, three cycles
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d scrapes in 10 s at a 20 ms resolution", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestTable: kubectl get podmetrics and nodemetrics get metrics-server's
// table: name, cpu and memory (a pod's summed over its containers),
// window, and each row's metadata.
func TestTable(t *testing.T) {
	f := newFixture()
	f.scrapeTwice(t)
	const accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	code, body := f.get(t, "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods", accept)
	tab := decodeJSON[metav1.Table](t, body)
	if code != http.StatusOK || tab.Kind != "Table" || len(tab.ColumnDefinitions) != 4 || tab.ColumnDefinitions[1].Name != "cpu" || len(tab.Rows) != 1 {
		t.Fatalf("pods table: %d %s", code, body)
	}
	// c burns 500m and side none: the pod's sum.
	if cells := tab.Rows[0].Cells; cells[0] != "burn" || cells[1] != "500m" || cells[2] != "6145Ki" || cells[3] != "2s" {
		t.Errorf("row = %v", cells)
	}
	var meta metav1.PartialObjectMetadata
	if err := json.Unmarshal(tab.Rows[0].Object.Raw, &meta); err != nil || meta.Kind != "PartialObjectMetadata" || meta.Namespace != "ns" || meta.Labels["app"] != "burn" {
		t.Errorf("row object = %s (%v)", tab.Rows[0].Object.Raw, err)
	}
	code, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes/n1?includeObject=Object", accept)
	tab = decodeJSON[metav1.Table](t, body)
	if code != http.StatusOK || len(tab.Rows) != 1 || tab.Rows[0].Cells[1] != "1500m" || !strings.Contains(string(tab.Rows[0].Object.Raw), `"kind":"NodeMetrics"`) {
		t.Errorf("node table with objects: %d %s", code, body)
	}
	code, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes?includeObject=None", accept)
	if tab = decodeJSON[metav1.Table](t, body); code != http.StatusOK || len(tab.Rows) != 1 || tab.Rows[0].Object.Raw != nil {
		t.Errorf("node table without objects: %d %s", code, body)
	}
	if code, body = f.get(t, "/apis/metrics.k8s.io/v1beta1/nodes?includeObject=All", accept); code != http.StatusBadRequest {
		t.Errorf("includeObject=All: %d %s, want 400", code, body)
	}
}
