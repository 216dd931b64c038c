package endpoints

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/registry"
)

// TestRoutesPickWhatMuxPicks: for every path of every built-in resource
// (each template with namespaces and names filled in, some of them
// percent-encoded), and for paths near them, the table finds the route and
// variables gorilla/mux finds, and leaves to the router every path that is
// not one of Install's.
func TestRoutesPickWhatMuxPicks(t *testing.T) {
	h, r := installed()
	r.HandleFunc("/apis/{group}/{version}/namespaces/{namespace}/{resource}", func(http.ResponseWriter, *http.Request) {})
	r.HandleFunc("/apis/{group}/{version}/{resource}/{name}", func(http.ResponseWriter, *http.Request) {})

	var paths []string
	for _, rt := range h.routes.table {
		for _, fill := range []struct{ ns, name string }{{"default", "web-1"}, {"kube-system", "a%3Ab"}, {"x", "status"}} {
			p := strings.NewReplacer("{namespace}", fill.ns, "{name}", fill.name).Replace(rt.template)
			paths = append(paths, p, p+"/", p+"/extra", p+"//", strings.Replace(p, "/", "//", 2), strings.Replace(p, "/v1", "/v9", 1), p+"/./x")
		}
	}
	paths = append(paths, "/", "/api", "/api/", "/api/v1", "/apis/apps", "/apis/apps/v1", "/apis/example.com/v1/widgets",
		"/apis/example.com/v1/namespaces/default/widgets", "/api/v1/namespaces/default/nothing/here/at/all", "/healthz",
		"/api/v1/namespaces/default", "/api/v1/namespaces/default/status", "/api/v1/namespaces/default/finalize",
		"/api/v1/namespaces/default/pods/web/log", "/api/v1/nodes/n1/proxy", "/api/v1/namespaces/default/pods/web/../../x")

	found := 0
	for _, p := range paths {
		req := httptest.NewRequest(http.MethodGet, "https://example"+p, nil)
		var m mux.RouteMatch
		muxOK := r.Match(req, &m)
		var muxTemplate string
		if muxOK {
			muxTemplate, _ = m.Route.GetPathTemplate()
		}
		_, isInstalled := h.routes.byTemplate(muxTemplate)
		rt, vars, ok := h.routes.lookup(req.URL.EscapedPath())
		switch {
		case ok && !muxOK:
			t.Errorf("%s: the table finds %s, gorilla/mux nothing", p, rt.template)
		case ok && rt.template != muxTemplate:
			t.Errorf("%s: the table finds %s, gorilla/mux %s", p, rt.template, muxTemplate)
		case ok && !maps.Equal(vars, m.Vars):
			t.Errorf("%s: variables %v, gorilla/mux's %v", p, vars, m.Vars)
		case !ok && muxOK && isInstalled:
			t.Errorf("%s: gorilla/mux finds Install's %s, the table nothing", p, muxTemplate)
		}
		if ok {
			found++
		}
	}
	if found < len(h.routes.table) {
		t.Errorf("the table found %d paths for %d routes", found, len(h.routes.table))
	}
}

// installed is a handler of every built-in resource and the router it
// installed its routes in, as the server's.
func installed() (*Handler, *mux.Router) {
	var stores []*registry.Store
	for _, r := range registry.Resources() {
		stores = append(stores, &registry.Store{R: r})
	}
	h := NewHandler(api.NewCodecs(), stores, nil)
	r := mux.NewRouter()
	r.UseEncodedPath()
	h.Install(r)
	return h, r
}

// byTemplate is the route Install registered with template.
func (rs *routes) byTemplate(template string) (route, bool) {
	for _, rt := range rs.table {
		if rt.template == template {
			return rt, true
		}
	}
	return route{}, false
}

// BenchmarkRoute finds the handler of a pod create's path, by gorilla/mux
// alone and through the table, over all built-in resources' routes.
func BenchmarkRoute(b *testing.B) {
	h, r := installed()
	req := httptest.NewRequest(http.MethodPost, "https://example/api/v1/namespaces/default/pods", nil)
	b.Run("gorilla-mux", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m mux.RouteMatch
			if !r.Match(req, &m) {
				b.Fatal("no route")
			}
		}
	})
	b.Run("table", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := h.routes.lookup(req.URL.EscapedPath()); !ok {
				b.Fatal("no route")
			}
		}
	})
}
