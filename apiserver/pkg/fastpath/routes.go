package fastpath

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"
)

// RouteKey is the shape of a built-in resource's path: the group-version
// root ("/api/v1", "/apis/apps/v1"), whether a namespace segment follows
// it, the resource, whether a name follows, and the subresource.
type RouteKey struct {
	Root       string
	Namespaced bool
	Resource   string
	Named      bool
	Sub        string
}

// route is what a RouteKey leads to: the handler endpoints.Handler.Install
// registered for that path, and its template, as gorilla/mux knows it.
type route struct {
	handler  http.Handler
	template string
}

// RouteTable finds the handler of a built-in resource's path by a map
// lookup. gorilla/mux tries its routes in order, each with a regular
// expression, and endpoints.Handler.Install registers several for each of
// some hundred resources: a pod create was matched against a random half
// of them on average (the order came from a map), some 10 µs per request.
// No two of the routes Install adds match the same path and Install adds
// them before any other, so the one found here is the one gorilla/mux
// would pick; any other path, and any path gorilla/mux would clean and
// redirect, goes to the router.
//
// A fast path, kept because removing it cost 7.5% of the CPU per protobuf
// create and 6.7% per JSON create in the median of 15 alternated rounds
// (docs/benchmarks.md, "Fast paths"); TestRoutesPickWhatMuxPicks beside it
// compares it with gorilla/mux.
type RouteTable struct {
	table map[RouteKey]route
	next  *mux.Router
}

// NewRouteTable returns an empty table.
func NewRouteTable() *RouteTable {
	return &RouteTable{table: map[RouteKey]route{}}
}

// Add puts in the route of paths of k's shape: h, which the caller also
// registers with gorilla/mux under template.
func (rs *RouteTable) Add(k RouteKey, template string, h http.Handler) {
	rs.table[k] = route{handler: h, template: template}
}

// InFrontOf serves the table's routes from the table and everything else
// through r, in which the same routes must have been registered first.
func (rs *RouteTable) InFrontOf(r *mux.Router) *RouteTable {
	rs.next = r
	return rs
}

// Templates lists the templates of the table's routes.
func (rs *RouteTable) Templates() []string {
	out := make([]string, 0, len(rs.table))
	for _, rt := range rs.table {
		out = append(out, rt.template)
	}
	return out
}

// Lookup finds the template of the route of path (escaped, as the router
// matches it) and its variables as gorilla/mux would set them.
func (rs *RouteTable) Lookup(path string) (template string, vars map[string]string, ok bool) {
	rt, vars, ok := rs.lookup(path)
	return rt.template, vars, ok
}

func (rs *RouteTable) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rt, vars, ok := rs.lookup(req.URL.EscapedPath())
	if !ok {
		rs.next.ServeHTTP(w, req)
		return
	}
	rt.handler.ServeHTTP(w, mux.SetURLVars(req, vars))
}

// lookup finds the route of path, with its variables as gorilla/mux would
// set them (the router uses the encoded path).
func (rs *RouteTable) lookup(path string) (route, map[string]string, bool) {
	if strings.Contains(path, "//") || strings.Contains(path, "/.") || strings.HasSuffix(path, "/") {
		return route{}, nil, false
	}
	var k RouteKey
	var rest string
	switch {
	case strings.HasPrefix(path, "/api/"):
		i := strings.IndexByte(path[len("/api/"):], '/')
		if i < 0 {
			return route{}, nil, false
		}
		k.Root, rest = path[:len("/api/")+i], path[len("/api/")+i+1:]
	case strings.HasPrefix(path, "/apis/"):
		g := strings.IndexByte(path[len("/apis/"):], '/')
		if g < 0 {
			return route{}, nil, false
		}
		v := strings.IndexByte(path[len("/apis/")+g+1:], '/')
		if v < 0 {
			return route{}, nil, false
		}
		end := len("/apis/") + g + 1 + v
		k.Root, rest = path[:end], path[end+1:]
	default:
		return route{}, nil, false
	}
	var seg [5]string
	n := 0
	for rest != "" {
		if n == len(seg) {
			return route{}, nil, false
		}
		s, after, _ := strings.Cut(rest, "/")
		if s == "" {
			return route{}, nil, false
		}
		seg[n], n, rest = s, n+1, after
	}
	// The variables are made only for a path that has a route.
	var ns, name string
	switch n {
	case 1: // a cluster-scoped collection, or a namespaced one across namespaces
		k.Resource = seg[0]
	case 2:
		k.Resource, k.Named, name = seg[0], true, seg[1]
	case 3:
		if seg[0] == "namespaces" {
			nk := k
			nk.Namespaced, nk.Resource = true, seg[2]
			if rt, ok := rs.table[nk]; ok {
				return rt, map[string]string{"namespace": seg[1]}, true
			}
		}
		k.Resource, k.Named, k.Sub, name = seg[0], true, seg[2], seg[1]
	case 4, 5:
		if seg[0] != "namespaces" {
			return route{}, nil, false
		}
		k.Namespaced, k.Resource, k.Named, ns, name = true, seg[2], true, seg[1], seg[3]
		if n == 5 {
			k.Sub = seg[4]
		}
	default:
		return route{}, nil, false
	}
	rt, ok := rs.table[k]
	if !ok {
		return route{}, nil, false
	}
	vars := map[string]string{}
	if ns != "" {
		vars["namespace"] = ns
	}
	if name != "" {
		vars["name"] = name
	}
	return rt, vars, true
}
