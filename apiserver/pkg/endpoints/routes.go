package endpoints

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"
)

// routeKey is the shape of a built-in resource's path: the group-version
// root ("/api/v1", "/apis/apps/v1"), whether a namespace segment follows
// it, the resource, whether a name follows, and the subresource.
type routeKey struct {
	root       string
	namespaced bool
	resource   string
	named      bool
	sub        string
}

// route is what a routeKey leads to: the handler Install registered for
// that path, and its template, as gorilla/mux knows it.
type route struct {
	handler  http.Handler
	template string
}

// routes finds the handler of a built-in resource's path by a map lookup.
// gorilla/mux tries its routes in order, each with a regular expression,
// and Install registers several for each of some hundred resources: a pod
// create was matched against a random half of them on average (the order
// came from a map), some 10 µs per request. No two of the routes Install
// adds match the same path and Install adds them before any other, so the
// one found here is the one gorilla/mux would pick; any other path, and
// any path gorilla/mux would clean and redirect, goes to the router.
//
// A fast path, kept because removing it cost 7.5% of the CPU per protobuf
// create and 6.7% per JSON create in the median of 15 alternated rounds
// (docs/benchmarks.md, "Fast paths"); TestRoutesPickWhatMuxPicks beside it
// compares it with gorilla/mux.
type routes struct {
	table map[routeKey]route
	next  *mux.Router
}

func (rs *routes) add(k routeKey, template string, h http.Handler) {
	rs.table[k] = route{handler: h, template: template}
}

// Routes serves the routes of Install from its table and everything else
// through r, which Install must have been given first.
func (h *Handler) Routes(r *mux.Router) http.Handler {
	h.routes.next = r
	return &h.routes
}

func (rs *routes) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rt, vars, ok := rs.lookup(req.URL.EscapedPath())
	if !ok {
		rs.next.ServeHTTP(w, req)
		return
	}
	rt.handler.ServeHTTP(w, mux.SetURLVars(req, vars))
}

// lookup finds the route of path, with its variables as gorilla/mux would
// set them (the router uses the encoded path).
func (rs *routes) lookup(path string) (route, map[string]string, bool) {
	if strings.Contains(path, "//") || strings.Contains(path, "/.") || strings.HasSuffix(path, "/") {
		return route{}, nil, false
	}
	var k routeKey
	var rest string
	switch {
	case strings.HasPrefix(path, "/api/"):
		i := strings.IndexByte(path[len("/api/"):], '/')
		if i < 0 {
			return route{}, nil, false
		}
		k.root, rest = path[:len("/api/")+i], path[len("/api/")+i+1:]
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
		k.root, rest = path[:end], path[end+1:]
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
		k.resource = seg[0]
	case 2:
		k.resource, k.named, name = seg[0], true, seg[1]
	case 3:
		if seg[0] == "namespaces" {
			nk := k
			nk.namespaced, nk.resource = true, seg[2]
			if rt, ok := rs.table[nk]; ok {
				return rt, map[string]string{"namespace": seg[1]}, true
			}
		}
		k.resource, k.named, k.sub, name = seg[0], true, seg[2], seg[1]
	case 4, 5:
		if seg[0] != "namespaces" {
			return route{}, nil, false
		}
		k.namespaced, k.resource, k.named, ns, name = true, seg[2], true, seg[1], seg[3]
		if n == 5 {
			k.sub = seg[4]
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
