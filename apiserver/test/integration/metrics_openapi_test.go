package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"skiff.dev/apiserver/pkg/server"
)

// TestMetricsOpenAPI: the built-in metrics.k8s.io is in the OpenAPI
// documents as metrics-server publishes it through upstream's aggregator:
// /openapi/v3 lists apis/metrics.k8s.io/v1beta1, whose document has the
// get and list operations of nodes and pods and the NodeMetrics and
// PodMetrics schemas of k8s.io/metrics; /openapi/v2 has them too; the real
// kubectl explains both kinds from either document. With the built-in API
// off (--metric-resolution 0) neither document has it.
func TestMetricsOpenAPI(t *testing.T) {
	ts := start(t, func(o *server.Options) { o.MetricResolution = time.Minute })
	c := ctx(t)

	code, body := raw(t, ts, http.MethodGet, "/openapi/v3", "", nil)
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &index) != nil {
		t.Fatalf("/openapi/v3: %d %.300s", code, body)
	}
	entry, ok := index.Paths["apis/metrics.k8s.io/v1beta1"]
	if !ok || !strings.HasPrefix(entry.ServerRelativeURL, "/openapi/v3/apis/metrics.k8s.io/v1beta1?hash=") {
		t.Fatalf("/openapi/v3 does not list apis/metrics.k8s.io/v1beta1: %+v", index.Paths["apis/metrics.k8s.io/v1beta1"])
	}

	code, body = raw(t, ts, http.MethodGet, entry.ServerRelativeURL, "", nil)
	var v3 struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any   `json:"properties"`
				GVK        []map[string]any `json:"x-kubernetes-group-version-kind"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(body, &v3); code != http.StatusOK || err != nil {
		t.Fatalf("%s: %d %v %.300s", entry.ServerRelativeURL, code, err, body)
	}
	// metrics-server's operations: get and list, nothing else.
	for path, ops := range map[string]map[string]string{
		"/apis/metrics.k8s.io/v1beta1/nodes":                              {"get": "listMetricsV1beta1NodeMetrics"},
		"/apis/metrics.k8s.io/v1beta1/nodes/{name}":                       {"get": "readMetricsV1beta1NodeMetrics"},
		"/apis/metrics.k8s.io/v1beta1/pods":                               {"get": "listMetricsV1beta1PodMetricsForAllNamespaces"},
		"/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods":        {"get": "listMetricsV1beta1NamespacedPodMetrics"},
		"/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods/{name}": {"get": "readMetricsV1beta1NamespacedPodMetrics"},
	} {
		got, ok := v3.Paths[path]
		if !ok {
			t.Errorf("no path %s in the v3 document", path)
			continue
		}
		for method, id := range ops {
			var op struct {
				OperationID string `json:"operationId"`
			}
			if err := json.Unmarshal(got[method], &op); err != nil || op.OperationID != id {
				t.Errorf("%s %s: operation %q (%v), want %q", method, path, op.OperationID, err, id)
			}
		}
		for _, method := range []string{"post", "put", "patch", "delete"} {
			if _, ok := got[method]; ok {
				t.Errorf("%s %s: metrics.k8s.io is read-only", method, path)
			}
		}
	}
	for name, fields := range map[string][]string{
		"io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics":      {"metadata", "timestamp", "window", "usage"},
		"io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics":       {"metadata", "timestamp", "window", "containers"},
		"io.k8s.metrics.pkg.apis.metrics.v1beta1.ContainerMetrics": {"name", "usage"},
	} {
		s, ok := v3.Components.Schemas[name]
		if !ok {
			t.Errorf("no schema %s in the v3 document", name)
			continue
		}
		for _, f := range fields {
			if _, ok := s.Properties[f]; !ok {
				t.Errorf("schema %s has no field %s", name, f)
			}
		}
	}
	if gvk := v3.Components.Schemas["io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics"].GVK; len(gvk) != 1 ||
		gvk[0]["group"] != "metrics.k8s.io" || gvk[0]["version"] != "v1beta1" || gvk[0]["kind"] != "PodMetrics" {
		t.Errorf("PodMetrics x-kubernetes-group-version-kind = %v", gvk)
	}

	code, body = raw(t, ts, http.MethodGet, "/openapi/v2", "", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics"`) ||
		!strings.Contains(string(body), `"/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods/{name}"`) {
		t.Errorf("/openapi/v2 lacks metrics.k8s.io: %d", code)
	}

	// The real kubectl: explain reads the v3 document, and v2 when asked.
	if out, code := kubectl(t, c, ts, "explain", "podmetrics"); code != 0 || !strings.Contains(out, "PodMetrics") ||
		!strings.Contains(out, "metrics.k8s.io") || !strings.Contains(out, "containers") || !strings.Contains(out, "window") {
		t.Errorf("kubectl explain podmetrics: %d\n%s", code, out)
	}
	if out, code := kubectl(t, c, ts, "explain", "nodemetrics.usage"); code != 0 || !strings.Contains(out, "FIELD:") || !strings.Contains(out, "usage") {
		t.Errorf("kubectl explain nodemetrics.usage: %d\n%s", code, out)
	}
	if out, code := kubectl(t, c, ts, "explain", "podmetrics.containers", "--output", "plaintext-openapiv2"); code != 0 || !strings.Contains(out, "ContainerMetrics") {
		t.Errorf("kubectl explain podmetrics.containers --output plaintext-openapiv2: %d\n%s", code, out)
	}
	if out, code := kubectl(t, c, ts, "get", "--raw", "/openapi/v3"); code != 0 || !strings.Contains(out, `"apis/metrics.k8s.io/v1beta1"`) {
		t.Errorf("kubectl get --raw /openapi/v3: %d\n%.300s", code, out)
	}

	// Off: neither document has the group.
	off := start(t, func(o *server.Options) { o.MetricResolution = 0 })
	if code, body := raw(t, off, http.MethodGet, "/openapi/v3", "", nil); code != http.StatusOK || strings.Contains(string(body), "metrics.k8s.io") {
		t.Errorf("/openapi/v3 with the metrics API off: %d %.300s", code, body)
	}
	if code, body := raw(t, off, http.MethodGet, "/openapi/v2", "", nil); code != http.StatusOK || strings.Contains(string(body), "io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics") {
		t.Errorf("/openapi/v2 with the metrics API off: %d", code)
	}
}
