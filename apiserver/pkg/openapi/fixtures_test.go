package openapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// testResources is a resource table like the API server's, covering every
// route shape: namespaced and cluster-scoped kinds, a plural kind, status,
// scale, binding and eviction subresources, pods/log and a connect
// subresource.
func testResources() []Resource {
	all := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	status := func(kind string) Subresource {
		return Subresource{Name: "status", Kind: kind, Verbs: []string{"get", "patch", "update"}}
	}
	scale := Subresource{Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}}
	return []Resource{
		{
			Version: "v1", Kind: "Pod", Resource: "pods", Namespaced: true, Verbs: all,
			DeleteReturnsObject: true,
			Subresources: []Subresource{
				status("Pod"),
				{Name: "binding", Version: "v1", Kind: "Binding", Verbs: []string{"create"}},
				{Name: "eviction", Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}},
				{Name: "log", Kind: "Pod", Verbs: []string{"get"}},
				{Name: "exec", Kind: "PodExecOptions", Verbs: []string{"create", "get"}},
			},
		},
		{
			Version: "v1", Kind: "Namespace", Resource: "namespaces",
			Verbs:        []string{"create", "delete", "get", "list", "patch", "update", "watch"},
			Subresources: []Subresource{status("Namespace")},
		},
		{Version: "v1", Kind: "Endpoints", Resource: "endpoints", Namespaced: true, Verbs: all},
		{Group: "apps", Version: "v1", Kind: "ReplicaSet", Resource: "replicasets", Namespaced: true, Verbs: all, Subresources: []Subresource{status("ReplicaSet"), scale}},
		{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespaced: true, Verbs: all, Subresources: []Subresource{status("Deployment"), scale}},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Resource: "clusterroles", Verbs: all},
	}
}

func newTestSpec(t *testing.T) *Spec {
	t.Helper()
	s, err := New(testResources(), WithVersion("v1.32.4-skiff"))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// newTestServer serves the documents as the API server mounts them.
func newTestServer(t *testing.T, s *Spec) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/openapi/v2", s.ServeV2)
	mux.HandleFunc("/openapi/v3", s.ServeV3Discovery)
	mux.HandleFunc("/openapi/v3/", func(w http.ResponseWriter, r *http.Request) {
		s.ServeV3GroupVersion(w, r, strings.TrimPrefix(r.URL.Path, "/openapi/v3/"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// get sends a GET with the given headers and returns the response with its
// body read.
func get(t *testing.T, client *http.Client, url string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp, body
}

// v3Doc returns the v3 document of a group-version decoded as generic JSON.
func v3Doc(t *testing.T, s *Spec, gvPath string) map[string]interface{} {
	t.Helper()
	doc, ok := s.v3[gvPath]
	if !ok {
		t.Fatalf("no v3 document for %q", gvPath)
	}
	var m map[string]interface{}
	if err := json.Unmarshal(doc.json, &m); err != nil {
		t.Fatalf("decoding %s: %v", gvPath, err)
	}
	return m
}

// at walks a decoded JSON document along keys.
func at(t *testing.T, v interface{}, keys ...string) interface{} {
	t.Helper()
	for i, k := range keys {
		m, ok := v.(map[string]interface{})
		if !ok {
			t.Fatalf("%s is not an object", strings.Join(keys[:i], "/"))
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("%s: no %q", strings.Join(keys[:i], "/"), k)
		}
	}
	return v
}
