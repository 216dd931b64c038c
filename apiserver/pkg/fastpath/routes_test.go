package fastpath_test

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/endpoints"
	"skiff.dev/apiserver/pkg/fastpath"
	"skiff.dev/apiserver/pkg/registry"
)

// TestRoutesPickWhatMuxPicks: for every path of every built-in resource
// (each template with namespaces and names filled in, some of them
// percent-encoded), and for paths near them, the table finds the route and
// variables gorilla/mux finds, and leaves to the router every path that is
// not one of Install's.
func TestRoutesPickWhatMuxPicks(t *testing.T) {
	table, r := installed()
	r.HandleFunc("/apis/{group}/{version}/namespaces/{namespace}/{resource}", func(http.ResponseWriter, *http.Request) {})
	r.HandleFunc("/apis/{group}/{version}/{resource}/{name}", func(http.ResponseWriter, *http.Request) {})

	templates := table.Templates()
	isTemplate := map[string]bool{}
	var paths []string
	for _, template := range templates {
		isTemplate[template] = true
		for _, fill := range []struct{ ns, name string }{{"default", "web-1"}, {"kube-system", "a%3Ab"}, {"x", "status"}} {
			p := strings.NewReplacer("{namespace}", fill.ns, "{name}", fill.name).Replace(template)
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
		isInstalled := isTemplate[muxTemplate]
		template, vars, ok := table.Lookup(req.URL.EscapedPath())
		switch {
		case ok && !muxOK:
			t.Errorf("%s: the table finds %s, gorilla/mux nothing", p, template)
		case ok && template != muxTemplate:
			t.Errorf("%s: the table finds %s, gorilla/mux %s", p, template, muxTemplate)
		case ok && !maps.Equal(vars, m.Vars):
			t.Errorf("%s: variables %v, gorilla/mux's %v", p, vars, m.Vars)
		case !ok && muxOK && isInstalled:
			t.Errorf("%s: gorilla/mux finds Install's %s, the table nothing", p, muxTemplate)
		}
		if ok {
			found++
		}
	}
	if found < len(templates) {
		t.Errorf("the table found %d paths for %d routes", found, len(templates))
	}
}

// TestRouteTableServesAsMux: a request served through the table in front
// of a router is answered exactly as by the router alone (the same status,
// headers and body): the table's handler sees the variables gorilla/mux
// would set, and every path it does not know, or that gorilla/mux would
// clean and redirect, is the router's. The routes have the shapes Install
// gives them, with a proxy route and routes that match any group after
// them, and handlers that write back what they were given; requests the
// table answers must not pass through the router.
func TestRouteTableServesAsMux(t *testing.T) {
	r := mux.NewRouter()
	r.UseEncodedPath()
	table := fastpath.NewRouteTable()
	viaRouter := false
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			viaRouter = true
			next.ServeHTTP(w, req)
		})
	})
	echo := func(template string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			vars := mux.Vars(req)
			w.Header().Set("X-Template", template)
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprintf(w, "%s %s %q", req.Method, req.URL.String(), slices.Sorted(maps.Keys(vars)))
			for _, k := range slices.Sorted(maps.Keys(vars)) {
				fmt.Fprintf(w, " %s=%s", k, vars[k])
			}
		})
	}
	add := func(k fastpath.RouteKey, template string) {
		h := echo(template)
		r.Handle(template, h)
		table.Add(k, template, h)
	}
	for _, root := range []string{"/api/v1", "/apis/apps/v1"} {
		coll := root + "/namespaces/{namespace}/pods"
		add(fastpath.RouteKey{Root: root, Namespaced: true, Resource: "pods"}, coll)
		add(fastpath.RouteKey{Root: root, Namespaced: true, Resource: "pods", Named: true}, coll+"/{name}")
		add(fastpath.RouteKey{Root: root, Namespaced: true, Resource: "pods", Named: true, Sub: "status"}, coll+"/{name}/status")
		add(fastpath.RouteKey{Root: root, Namespaced: true, Resource: "pods", Named: true, Sub: "proxy"}, coll+"/{name}/proxy")
		r.Handle(coll+"/{name}/proxy/{path:.*}", echo(coll+"/{name}/proxy/{path:.*}"))
		add(fastpath.RouteKey{Root: root, Resource: "pods"}, root+"/pods")
		add(fastpath.RouteKey{Root: root, Resource: "nodes"}, root+"/nodes")
		add(fastpath.RouteKey{Root: root, Resource: "nodes", Named: true}, root+"/nodes/{name}")
		add(fastpath.RouteKey{Root: root, Resource: "nodes", Named: true, Sub: "status"}, root+"/nodes/{name}/status")
	}
	r.Handle("/apis/{group}/{version}/namespaces/{namespace}/{resource}", echo("custom collection"))
	r.Handle("/apis/{group}/{version}/{resource}/{name}", echo("custom item"))
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Error(w, "not found: "+req.URL.Path, http.StatusNotFound)
	})
	table.InFrontOf(r)

	var paths []string
	for _, template := range table.Templates() {
		for _, fill := range []struct{ ns, name string }{{"default", "web-1"}, {"kube-system", "a%3Ab"}, {"x", "status"}} {
			p := strings.NewReplacer("{namespace}", fill.ns, "{name}", fill.name).Replace(template)
			paths = append(paths, p, p+"?watch=true", p+"/", p+"/extra", p+"//", strings.Replace(p, "/", "//", 2), p+"/./x", p+"/../x")
		}
	}
	paths = append(paths, "/", "/api/v1", "/apis/apps/v1", "/apis/example.com/v1/widgets/w", "/api/v1/namespaces/a/pods/p/proxy/metrics",
		"/apis/example.com/v1/namespaces/default/widgets", "/api/v1/namespaces/default/nothing/here/at/all")

	served := 0
	for _, p := range paths {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			plain := httptest.NewRecorder()
			viaRouter = false
			r.ServeHTTP(plain, httptest.NewRequest(method, "https://example"+p, nil))
			plainViaRouter := viaRouter

			fast := httptest.NewRecorder()
			viaRouter = false
			table.ServeHTTP(fast, httptest.NewRequest(method, "https://example"+p, nil))
			if fast.Code != plain.Code || fast.Body.String() != plain.Body.String() || !reflect.DeepEqual(fast.Header(), plain.Header()) {
				t.Errorf("%s %s: the table answered %d %v %q, gorilla/mux %d %v %q", method, p,
					fast.Code, fast.Header(), fast.Body, plain.Code, plain.Header(), plain.Body)
			}
			if _, _, ok := table.Lookup(httptest.NewRequest(method, "https://example"+p, nil).URL.EscapedPath()); ok {
				served++
				if viaRouter {
					t.Errorf("%s %s: the table has its route, but the request went through the router", method, p)
				}
			} else if viaRouter != plainViaRouter {
				t.Errorf("%s %s: not the table's, but the router's handlers ran %v, alone %v", method, p, viaRouter, plainViaRouter)
			}
		}
	}
	if served < 2*len(table.Templates()) {
		t.Errorf("the table served %d requests for %d routes", served, len(table.Templates()))
	}
}

// installed is the route table of a handler of every built-in resource,
// in front of the router the handler installed its routes in, as the
// server's.
func installed() (*fastpath.RouteTable, *mux.Router) {
	var stores []*registry.Store
	for _, r := range registry.Resources() {
		stores = append(stores, &registry.Store{R: r})
	}
	h := endpoints.NewHandler(api.NewCodecs(), stores, nil)
	r := mux.NewRouter()
	r.UseEncodedPath()
	h.Install(r)
	return h.Routes(r), r
}

// BenchmarkRoute finds the handler of a pod create's path, by gorilla/mux
// alone and through the table, over all built-in resources' routes.
func BenchmarkRoute(b *testing.B) {
	table, r := installed()
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
			if _, _, ok := table.Lookup(req.URL.EscapedPath()); !ok {
				b.Fatal("no route")
			}
		}
	})
}
