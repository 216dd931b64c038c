package openapi

import (
	"fmt"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kube-openapi/pkg/common"
)

// extensionAction is the vendor extension naming an operation's verb: get,
// list, post, put, patch, delete, deletecollection, watch, watchlist or
// connect.
const extensionAction = "x-kubernetes-action"

// Patch content types a PATCH accepts, in upstream's order.
var patchContentTypes = []string{
	string(types.JSONPatchType),
	string(types.MergePatchType),
	string(types.StrategicMergePatchType),
	string(types.ApplyYAMLPatchType),
}

// typeRef names a model by its canonical Go type name. kube-openapi's
// builders resolve payload samples through OpenAPICanonicalTypeName, so
// routes need no Go values; "string" is the plain string schema.
type typeRef string

func (t typeRef) OpenAPICanonicalTypeName() string { return string(t) }

const stringType typeRef = "string"

type response struct {
	code    int
	message string
	model   typeRef
}

var _ common.StatusCodeResponse = response{}

func (r response) Code() int          { return r.code }
func (r response) Message() string    { return r.message }
func (r response) Model() interface{} { return r.model }
func ok(model typeRef) response       { return response{http.StatusOK, "OK", model} }
func created(model typeRef) response  { return response{http.StatusCreated, "Created", model} }
func accepted(model typeRef) response { return response{http.StatusAccepted, "Accepted", model} }

// route is one operation on one path: what a go-restful route is to the
// upstream API server, built from the resource table instead.
type route struct {
	method, path, operation, doc string
	params                       []common.Parameter
	consumes, produces           []string
	metadata                     map[string]interface{}
	reads, writes                typeRef
	responses                    []common.StatusCodeResponse
}

var _ common.Route = (*route)(nil)

func (r *route) Method() string                                   { return r.method }
func (r *route) Path() string                                     { return r.path }
func (r *route) OperationName() string                            { return r.operation }
func (r *route) Parameters() []common.Parameter                   { return r.params }
func (r *route) Description() string                              { return r.doc }
func (r *route) Consumes() []string                               { return r.consumes }
func (r *route) Produces() []string                               { return r.produces }
func (r *route) Metadata() map[string]interface{}                 { return r.metadata }
func (r *route) StatusCodeResponses() []common.StatusCodeResponse { return r.responses }

func (r *route) RequestPayloadSample() interface{} {
	if r.reads == "" {
		return nil
	}
	return r.reads
}

func (r *route) ResponsePayloadSample() interface{} {
	if r.writes == "" {
		return nil
	}
	return r.writes
}

// routeContainer holds the routes of one group-version, like a go-restful
// WebService rooted at /api/v1 or /apis/<group>/<version>.
type routeContainer struct {
	root   string
	routes []common.Route
}

var _ common.RouteContainer = (*routeContainer)(nil)

func (c *routeContainer) RootPath() string                   { return c.root }
func (c *routeContainer) PathParameters() []common.Parameter { return nil }
func (c *routeContainer) Routes() []common.Route             { return c.routes }

// routeBuilder turns the resource table into routes the way the upstream
// API installer (k8s.io/apiserver/pkg/endpoints/installer.go) lays them out.
type routeBuilder struct {
	registry         *registry
	mediaTypes       []string
	streamMediaTypes []string
}

func (b *routeBuilder) allMediaTypes() []string {
	return append(append([]string{}, b.mediaTypes...), b.streamMediaTypes...)
}

// groupVersion builds the routes of one group-version.
func (b *routeBuilder) groupVersion(gv schema.GroupVersion, resources []Resource) (*routeContainer, error) {
	c := &routeContainer{root: "/" + gvPath(gv)}
	c.routes = append(c.routes, &route{
		method:    http.MethodGet,
		path:      c.root + "/",
		operation: "getAPIResources",
		doc:       "get available resources",
		consumes:  b.mediaTypes,
		produces:  b.mediaTypes,
		writes:    typeRef(apiResourceListType),
	})
	for _, r := range resources {
		routes, err := b.resource(c.root, r)
		if err != nil {
			return nil, err
		}
		c.routes = append(c.routes, routes...)
	}
	return c, nil
}

// scope holds what the paths of one resource or subresource share.
type scope struct {
	root       string
	kind       string            // the parent's kind, used in docs and operation names
	gvk        map[string]string // x-kubernetes-group-version-kind of the operations
	namespaced string            // "Namespaced" or ""
	subName    string            // subresource name, "" for the resource itself
	custom     bool              // a custom resource: no strategic merge patch
}

// patchContentTypes are the patch types an operation accepts: custom
// resources take no strategic merge patch, as upstream.
func (s scope) patchContentTypes() []string {
	if !s.custom {
		return patchContentTypes
	}
	out := make([]string, 0, len(patchContentTypes))
	for _, t := range patchContentTypes {
		if t != string(types.StrategicMergePatchType) {
			out = append(out, t)
		}
	}
	return out
}

func gvkExtension(gvk schema.GroupVersionKind) map[string]string {
	return map[string]string{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}
}

func (s scope) operation(verb, suffix string) string {
	return verb + s.namespaced + s.kind + upperFirst(s.subName) + suffix
}

func (s scope) meta(action string) map[string]interface{} {
	return map[string]interface{}{extensionAction: action, extensionGVK: s.gvk}
}

// watchPath is the deprecated /watch/ twin of a path under root.
func (s scope) watchPath(path string) string {
	return s.root + "/watch" + strings.TrimPrefix(path, s.root)
}

func (b *routeBuilder) resource(root string, r Resource) ([]common.Route, error) {
	objType, err := b.registry.typeOf(r.gvk())
	if err != nil {
		return nil, err
	}
	obj := typeRef(objType)
	var list typeRef
	if r.has(VerbList) {
		t, err := b.registry.typeOf(r.listGVK())
		if err != nil {
			return nil, err
		}
		list = typeRef(t)
	}

	var base []common.Parameter
	collection := root + "/" + r.Resource
	if r.Namespaced {
		base = []common.Parameter{pathParam("namespace", namespaceDescription)}
		collection = root + "/namespaces/{namespace}/" + r.Resource
	}
	item := collection + "/{name}"
	itemParams := with(base, pathParam("name", "name of the "+r.Kind))

	s := scope{root: root, kind: r.Kind, gvk: gvkExtension(r.gvk()), custom: r.Schema != nil}
	if r.Namespaced {
		s.namespaced = "Namespaced"
	}
	deleted := typeRef(statusType)
	if r.DeleteReturnsObject {
		deleted = obj
	}

	var routes []common.Route
	if r.has(VerbList) {
		routes = append(routes, b.list(s, collection, base, list, r.has(VerbWatch), ""))
	}
	if r.has(VerbCreate) {
		routes = append(routes, b.create(s, collection, base, obj))
	}
	if r.has(VerbDeleteCollection) {
		routes = append(routes, b.deleteCollection(s, collection, base))
	}
	if r.has(VerbWatch) && r.has(VerbList) {
		routes = append(routes, b.watchList(s, s.watchPath(collection), base, ""))
	}
	if r.has(VerbGet) {
		routes = append(routes, b.get(s, item, itemParams, obj))
	}
	if r.has(VerbUpdate) {
		routes = append(routes, b.update(s, item, itemParams, obj))
	}
	if r.has(VerbPatch) {
		routes = append(routes, b.patch(s, item, itemParams, obj))
	}
	if r.has(VerbDelete) {
		routes = append(routes, b.delete(s, item, itemParams, deleted))
	}
	if r.has(VerbWatch) {
		routes = append(routes, b.watch(s, s.watchPath(item), itemParams))
	}
	if r.Namespaced && r.has(VerbList) {
		all := scope{root: root, kind: r.Kind, gvk: s.gvk}
		routes = append(routes, b.list(all, root+"/"+r.Resource, nil, list, r.has(VerbWatch), "ForAllNamespaces"))
		if r.has(VerbWatch) {
			routes = append(routes, b.watchList(all, root+"/watch/"+r.Resource, nil, "ForAllNamespaces"))
		}
	}

	for _, sub := range r.Subresources {
		subRoutes, err := b.subresource(s, r, sub, item, base)
		if err != nil {
			return nil, err
		}
		routes = append(routes, subRoutes...)
	}
	return routes, nil
}

func (b *routeBuilder) subresource(parent scope, r Resource, sub Subresource, item string, base []common.Parameter) ([]common.Route, error) {
	gvk := sub.gvk(r)
	path := item + "/" + sub.Name
	params := with(base, pathParam("name", "name of the "+gvk.Kind))
	s := parent
	s.subName = sub.Name
	s.gvk = gvkExtension(gvk)

	switch {
	case strings.HasSuffix(gvk.Kind, "Options"):
		return b.connect(s, sub, gvk, path, params)
	case sub.Name == "log":
		return b.log(s, sub, gvk, path, params)
	}

	objType, err := b.registry.typeOf(gvk)
	if err != nil {
		return nil, err
	}
	obj := typeRef(objType)
	var routes []common.Route
	for _, verb := range sub.Verbs {
		switch verb {
		case VerbCreate:
			routes = append(routes, b.create(s, path, params, obj))
		case VerbGet:
			routes = append(routes, b.get(s, path, params, obj))
		case VerbUpdate:
			routes = append(routes, b.update(s, path, params, obj))
		case VerbPatch:
			routes = append(routes, b.patch(s, path, params, obj))
		case VerbDelete:
			routes = append(routes, b.delete(s, path, params, typeRef(statusType)))
		default:
			return nil, fmt.Errorf("openapi: subresource %s/%s: verb %q is not supported on subresources", r.Resource, sub.Name, verb)
		}
	}
	return routes, nil
}

func (b *routeBuilder) get(s scope, path string, params []common.Parameter, obj typeRef) *route {
	doc := "read the specified " + s.kind
	if s.subName != "" {
		doc = "read " + s.subName + " of the specified " + s.kind
	}
	return &route{
		method:    http.MethodGet,
		path:      path,
		operation: s.operation("read", ""),
		doc:       doc,
		params:    with(params, prettyParam()),
		consumes:  []string{"*/*"},
		produces:  b.mediaTypes,
		metadata:  s.meta("get"),
		writes:    obj,
		responses: []common.StatusCodeResponse{ok(obj)},
	}
}

func (b *routeBuilder) list(s scope, path string, params []common.Parameter, list typeRef, watchable bool, suffix string) *route {
	doc := "list objects of kind " + s.kind
	if watchable {
		doc = "list or watch objects of kind " + s.kind
	}
	return &route{
		method:    http.MethodGet,
		path:      path,
		operation: s.operation("list", suffix),
		doc:       doc,
		params:    with(with(params, prettyParam()), listOptionParams()...),
		consumes:  []string{"*/*"},
		produces:  b.allMediaTypes(),
		metadata:  s.meta("list"),
		writes:    list,
		responses: []common.StatusCodeResponse{ok(list)},
	}
}

func (b *routeBuilder) create(s scope, path string, params []common.Parameter, obj typeRef) *route {
	doc := "create" + article(s.kind) + s.kind
	if s.subName != "" {
		doc = "create " + s.subName + " of" + article(s.kind) + s.kind
	}
	return &route{
		method:    http.MethodPost,
		path:      path,
		operation: s.operation("create", ""),
		doc:       doc,
		params:    with(with(params, prettyParam(), bodyParam(true)), optionParams(&metav1.CreateOptions{})...),
		consumes:  []string{"*/*"},
		produces:  b.mediaTypes,
		metadata:  s.meta("post"),
		reads:     obj,
		writes:    obj,
		responses: []common.StatusCodeResponse{ok(obj), created(obj), accepted(obj)},
	}
}

func (b *routeBuilder) update(s scope, path string, params []common.Parameter, obj typeRef) *route {
	doc := "replace the specified " + s.kind
	if s.subName != "" {
		doc = "replace " + s.subName + " of the specified " + s.kind
	}
	return &route{
		method:    http.MethodPut,
		path:      path,
		operation: s.operation("replace", ""),
		doc:       doc,
		params:    with(with(params, prettyParam(), bodyParam(true)), optionParams(&metav1.UpdateOptions{})...),
		consumes:  []string{"*/*"},
		produces:  b.mediaTypes,
		metadata:  s.meta("put"),
		reads:     obj,
		writes:    obj,
		responses: []common.StatusCodeResponse{ok(obj), created(obj)},
	}
}

func (b *routeBuilder) patch(s scope, path string, params []common.Parameter, obj typeRef) *route {
	doc := "partially update the specified " + s.kind
	if s.subName != "" {
		doc = "partially update " + s.subName + " of the specified " + s.kind
	}
	return &route{
		method:    http.MethodPatch,
		path:      path,
		operation: s.operation("patch", ""),
		doc:       doc,
		params:    with(with(params, prettyParam(), bodyParam(true)), optionParams(&metav1.PatchOptions{})...),
		consumes:  s.patchContentTypes(),
		produces:  b.mediaTypes,
		metadata:  s.meta("patch"),
		reads:     typeRef(patchType),
		writes:    obj,
		responses: []common.StatusCodeResponse{ok(obj), created(obj)},
	}
}

func (b *routeBuilder) delete(s scope, path string, params []common.Parameter, deleted typeRef) *route {
	doc := "delete" + article(s.kind) + s.kind
	if s.subName != "" {
		doc = "delete " + s.subName + " of" + article(s.kind) + s.kind
	}
	return &route{
		method:    http.MethodDelete,
		path:      path,
		operation: s.operation("delete", ""),
		doc:       doc,
		params:    with(with(params, prettyParam(), bodyParam(false)), optionParams(&metav1.DeleteOptions{})...),
		consumes:  []string{"*/*"},
		produces:  b.mediaTypes,
		metadata:  s.meta("delete"),
		reads:     typeRef(deleteOptionsType),
		writes:    deleted,
		responses: []common.StatusCodeResponse{ok(deleted), accepted(deleted)},
	}
}

func (b *routeBuilder) deleteCollection(s scope, path string, params []common.Parameter) *route {
	p := with(params, prettyParam(), bodyParam(false))
	p = with(p, optionParams(&metav1.ListOptions{}, "watch", "allowWatchBookmarks")...)
	p = with(p, optionParams(&metav1.DeleteOptions{})...)
	return &route{
		method:    http.MethodDelete,
		path:      path,
		operation: s.operation("deletecollection", ""),
		doc:       "delete collection of " + s.kind,
		params:    p,
		consumes:  []string{"*/*"},
		produces:  b.mediaTypes,
		metadata:  s.meta("deletecollection"),
		reads:     typeRef(deleteOptionsType),
		writes:    typeRef(statusType),
		responses: []common.StatusCodeResponse{ok(typeRef(statusType))},
	}
}

func (b *routeBuilder) watch(s scope, path string, params []common.Parameter) *route {
	return &route{
		method:    http.MethodGet,
		path:      path,
		operation: s.operation("watch", ""),
		doc:       "watch changes to an object of kind " + s.kind + ". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.",
		params:    with(with(params, prettyParam()), listOptionParams()...),
		consumes:  []string{"*/*"},
		produces:  b.allMediaTypes(),
		metadata:  s.meta("watch"),
		writes:    typeRef(watchEventType),
		responses: []common.StatusCodeResponse{ok(typeRef(watchEventType))},
	}
}

func (b *routeBuilder) watchList(s scope, path string, params []common.Parameter, suffix string) *route {
	return &route{
		method:    http.MethodGet,
		path:      path,
		operation: s.operation("watch", "List"+suffix),
		doc:       "watch individual changes to a list of " + s.kind + ". deprecated: use the 'watch' parameter with a list operation instead.",
		params:    with(with(params, prettyParam()), listOptionParams()...),
		consumes:  []string{"*/*"},
		produces:  b.allMediaTypes(),
		metadata:  s.meta("watchlist"),
		writes:    typeRef(watchEventType),
		responses: []common.StatusCodeResponse{ok(typeRef(watchEventType))},
	}
}

// log is pods/log: a GET whose query parameters are PodLogOptions and whose
// answer is plain text.
func (b *routeBuilder) log(s scope, sub Subresource, gvk schema.GroupVersionKind, path string, params []common.Parameter) ([]common.Route, error) {
	if !sub.has(VerbGet) {
		return nil, nil
	}
	opts, err := b.registry.newObject(gvk.GroupVersion().WithKind(gvk.Kind + "LogOptions"))
	if err != nil {
		return nil, err
	}
	return []common.Route{&route{
		method:    http.MethodGet,
		path:      path,
		operation: s.operation("read", ""),
		doc:       "read " + s.subName + " of the specified " + s.kind,
		params:    with(with(params, prettyParam()), optionParams(opts)...),
		consumes:  []string{"*/*"},
		produces:  append([]string{"text/plain"}, b.mediaTypes...),
		metadata:  s.meta("get"),
		writes:    stringType,
		responses: []common.StatusCodeResponse{ok(stringType)},
	}}, nil
}

// connect is a subresource served by a streaming connection (exec, attach,
// portforward, proxy), whose kind is its options type.
func (b *routeBuilder) connect(s scope, sub Subresource, gvk schema.GroupVersionKind, path string, params []common.Parameter) ([]common.Route, error) {
	opts, err := b.registry.newObject(gvk)
	if err != nil {
		return nil, err
	}
	var methods []string
	for _, m := range []struct{ verb, method string }{
		{VerbGet, http.MethodGet},
		{VerbCreate, http.MethodPost},
		{VerbUpdate, http.MethodPut},
		{VerbPatch, http.MethodPatch},
		{VerbDelete, http.MethodDelete},
	} {
		if sub.has(m.verb) {
			methods = append(methods, m.method)
		}
	}
	isProxy := sub.Name == "proxy"
	if isProxy && sub.has(VerbGet) {
		methods = append(methods, http.MethodHead, http.MethodOptions)
	}
	optParams := optionParams(opts)
	var routes []common.Route
	add := func(path, suffix string, params []common.Parameter) {
		for _, method := range methods {
			routes = append(routes, &route{
				method:    method,
				path:      path,
				operation: s.operation("connect"+upperFirst(strings.ToLower(method)), suffix),
				doc:       "connect " + method + " requests to " + s.subName + " of " + s.kind,
				params:    with(params, optParams...),
				consumes:  []string{"*/*"},
				produces:  []string{"*/*"},
				metadata:  s.meta("connect"),
				writes:    stringType,
			})
		}
	}
	add(path, "", params)
	if isProxy {
		add(path+"/{path}", "WithPath", with(params, pathParam("path", pathDescription)))
	}
	return routes, nil
}

func listOptionParams() []common.Parameter {
	return with(nil, optionParams(&metav1.ListOptions{})...)
}

// with returns a new slice holding params followed by more.
func with[P common.Parameter](params []common.Parameter, more ...P) []common.Parameter {
	out := make([]common.Parameter, 0, len(params)+len(more))
	out = append(out, params...)
	for _, p := range more {
		out = append(out, p)
	}
	return out
}

// article is the padded indefinite article for a kind in operation docs, as
// upstream writes them: " a ", " an ", or " " for a plural like Endpoints.
func article(noun string) string {
	if !strings.HasSuffix(noun, "ss") && strings.HasSuffix(noun, "s") {
		return " "
	}
	if noun != "" && strings.ContainsRune("aeiouAEIOU", rune(noun[0])) {
		return " an "
	}
	return " a "
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
