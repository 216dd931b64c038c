package endpoints

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/fastpath"
	"skiff.dev/apiserver/pkg/fieldmanager"
	"skiff.dev/apiserver/pkg/kubeletclient"
	"skiff.dev/apiserver/pkg/printers"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/serviceaccount"
	"skiff.dev/apiserver/pkg/storage"
)

// MaxRequestBodyBytes is upstream's limit for a request body (3 MiB).
const MaxRequestBodyBytes = 3 * 1024 * 1024

// Handler serves the REST API of every resource in the table.
type Handler struct {
	codecs  *api.Codecs
	stores  map[schema.GroupVersionResource]*registry.Store
	printer *printers.Printer
	// MinRequestTimeout sets the default watch timeout, as upstream's
	// --min-request-timeout (a watch lasts between it and twice it).
	MinRequestTimeout time.Duration
	// shutdown closes open watches.
	shutdown <-chan struct{}
	// frames shares encoded watch events among watchers.
	frames frameCache
	// quantities remembers which types hold resource quantities.
	quantities quantityTypes
	// Tokens issues service account tokens (serviceaccounts/token); nil
	// when no signing key is configured.
	Tokens *serviceaccount.Issuer
	// Kubelet reaches the kubelets for pods/log, exec, attach and
	// portforward, and nodes/proxy; nil answers those with 503.
	Kubelet *kubeletclient.Client
	// ProxyTransport reaches pods and services for pods/proxy,
	// services/proxy and nodes/proxy on other ports than the kubelet's.
	ProxyTransport http.RoundTripper
	// custom serves the resources of CustomResourceDefinitions.
	custom customStores
	// fields records managedFields and serves server-side apply.
	fields *fieldmanager.Managers
	// routes finds Install's routes without gorilla/mux (Routes).
	routes *fastpath.RouteTable
}

// NewHandler builds the handler for the given stores.
func NewHandler(codecs *api.Codecs, stores []*registry.Store, shutdown <-chan struct{}) *Handler {
	h := &Handler{
		codecs:            codecs,
		stores:            map[schema.GroupVersionResource]*registry.Store{},
		printer:           printers.New(),
		fields:            fieldmanager.New(codecs.Scheme),
		routes:            fastpath.NewRouteTable(),
		MinRequestTimeout: 30 * time.Minute,
		shutdown:          shutdown,
	}
	for _, s := range stores {
		h.stores[s.R.GroupVersion().WithResource(s.R.Resource)] = s
	}
	// Upstream's bound on what JSON patch "copy" operations may add, so a
	// small patch cannot grow a document without limit. (The library only
	// offers a package variable; every handler sets the same value.)
	jsonpatch.AccumulatedCopySizeLimit = MaxRequestBodyBytes
	return h
}

// Store returns the store of a resource, for the server's own bootstrap.
func (h *Handler) Store(gvr schema.GroupVersionResource) *registry.Store {
	if s, ok := h.stores[gvr]; ok {
		return s
	}
	return h.customStore(gvr)
}

// Routes serves the routes of Install from its table (the fast path
// fastpath.RouteTable) and everything else through r, which Install must
// have been given first.
func (h *Handler) Routes(r *mux.Router) *fastpath.RouteTable {
	return h.routes.InFrontOf(r)
}

// Install adds a route for every resource, subresource and scope to r, and
// to the table Routes serves them from.
func (h *Handler) Install(r *mux.Router) {
	add := func(k fastpath.RouteKey, template string, handler http.Handler) {
		r.Handle(template, handler)
		h.routes.Add(k, template, handler)
	}
	for _, s := range h.stores {
		s := s
		root := "/apis/" + s.R.Group + "/" + s.R.Version
		if s.R.Group == "" {
			root = "/api/" + s.R.Version
		}
		res := s.R.Resource
		if s.R.Namespaced {
			coll := root + "/namespaces/{namespace}/" + res
			add(fastpath.RouteKey{Root: root, Namespaced: true, Resource: res}, coll, h.collection(s, true))
			add(fastpath.RouteKey{Root: root, Namespaced: true, Resource: res, Named: true}, coll+"/{name}", h.item(s, ""))
			for _, sub := range s.R.Subresources() {
				add(fastpath.RouteKey{Root: root, Namespaced: true, Resource: res, Named: true, Sub: sub}, coll+"/{name}/"+sub, h.item(s, sub))
				if sub == registry.SubProxy {
					// The proxied path follows; only gorilla/mux knows it.
					r.Handle(coll+"/{name}/"+sub+"/{path:.*}", h.item(s, sub))
				}
			}
			add(fastpath.RouteKey{Root: root, Resource: res}, root+"/"+res, h.collection(s, false))
		} else {
			coll := root + "/" + res
			add(fastpath.RouteKey{Root: root, Resource: res}, coll, h.collection(s, false))
			add(fastpath.RouteKey{Root: root, Resource: res, Named: true}, coll+"/{name}", h.item(s, ""))
			for _, sub := range s.R.Subresources() {
				add(fastpath.RouteKey{Root: root, Resource: res, Named: true, Sub: sub}, coll+"/{name}/"+sub, h.item(s, sub))
				if sub == registry.SubProxy {
					r.Handle(coll+"/{name}/"+sub+"/{path:.*}", h.item(s, sub))
				}
			}
		}
		if s.R.Binding != nil && s.R.Group == "" {
			// The bindings resource, which older schedulers and clients
			// (client libraries' create_namespaced_binding) post to.
			add(fastpath.RouteKey{Root: root, Namespaced: true, Resource: LegacyBindingsResource.Resource},
				root+"/namespaces/{namespace}/"+LegacyBindingsResource.Resource, h.legacyBindings(s))
		}
	}
}

// LegacyBindingsResource is core v1's bindings: a Binding posted to
// /api/v1/namespaces/{namespace}/bindings binds the pod it names, as a post
// to that pod's binding subresource does (upstream's LegacyBindingREST).
var LegacyBindingsResource = CreateOnlyResource{Resource: "bindings", Kind: "Binding", Namespaced: true}

func (h *Handler) legacyBindings(s *registry.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ns := mux.Vars(r)["namespace"]
		gr := schema.GroupResource{Resource: LegacyBindingsResource.Resource}
		verb := "create"
		if r.Method != http.MethodPost {
			verb = strings.ToLower(r.Method)
		}
		setRequestInfo(r, &RequestInfo{Verb: verb, Version: s.R.Version, Resource: gr.Resource, Scope: "namespace", Namespace: ns})
		if r.Method != http.MethodPost {
			h.writeError(w, r, apierrors.NewMethodNotSupported(gr, verb), gr, "")
			return
		}
		h.withoutTables(func(w http.ResponseWriter, r *http.Request) { h.bind(w, r, s, ns, "") })(w, r)
	})
}

// RequestInfo describes a resource request, for metrics and logs.
type RequestInfo struct {
	Verb, Group, Version, Resource, Subresource, Scope, Namespace, Name string
}

type requestInfoKey struct{}

// requestInfoHolder lets the outer (metrics) middleware read what the
// resource handler learned about the request.
type requestInfoHolder struct{ info *RequestInfo }

// WithRequestInfoHolder prepares a request to carry its RequestInfo out.
func WithRequestInfoHolder(r *http.Request) (*http.Request, func() *RequestInfo) {
	h := &requestInfoHolder{}
	return r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, h)), func() *RequestInfo { return h.info }
}

func setRequestInfo(r *http.Request, info *RequestInfo) {
	if h, ok := r.Context().Value(requestInfoKey{}).(*requestInfoHolder); ok {
		h.info = info
	}
}

func (h *Handler) info(r *http.Request, s *registry.Store, verb, sub string) *RequestInfo {
	vars := mux.Vars(r)
	scope := "cluster"
	if s.R.Namespaced {
		scope = "namespace"
		if vars["namespace"] == "" {
			scope = "cluster"
		}
	}
	if vars["name"] != "" {
		scope = "resource"
	}
	ri := &RequestInfo{Verb: verb, Group: s.R.Group, Version: s.R.Version, Resource: s.R.Resource, Subresource: sub,
		Scope: scope, Namespace: vars["namespace"], Name: vars["name"]}
	if ri.Name == "" && (verb == "list" || verb == "watch") {
		ri.Name = selectedName(r)
	}
	setRequestInfo(r, ri)
	return ri
}

func (h *Handler) collection(s *registry.Store, namespaced bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ns := mux.Vars(r)["namespace"]
		switch r.Method {
		case http.MethodGet:
			if isWatch(r) {
				h.info(r, s, "watch", "")
				h.watch(w, r, s, ns)
				return
			}
			h.info(r, s, "list", "")
			h.list(w, r, s, ns)
		case http.MethodPost:
			if !namespaced && s.R.Namespaced {
				h.info(r, s, "create", "")
				h.writeError(w, r, apierrors.NewMethodNotSupported(s.R.GroupResource(), "create"), s.R.GroupResource(), "")
				return
			}
			h.info(r, s, "create", "")
			h.create(w, r, s, ns)
		case http.MethodDelete:
			h.info(r, s, "deletecollection", "")
			if !namespaced && s.R.Namespaced {
				h.writeError(w, r, apierrors.NewMethodNotSupported(s.R.GroupResource(), "deletecollection"), s.R.GroupResource(), "")
				return
			}
			h.deleteCollection(w, r, s, ns)
		default:
			h.info(r, s, strings.ToLower(r.Method), "")
			h.writeError(w, r, apierrors.NewMethodNotSupported(s.R.GroupResource(), r.Method), s.R.GroupResource(), "")
		}
	})
}

func (h *Handler) item(s *registry.Store, sub string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vars := mux.Vars(r)
		ns, name := vars["namespace"], vars["name"]
		if !s.R.Namespaced {
			ns = ""
		}
		gr := s.R.GroupResource()
		verb := map[string]string{http.MethodGet: "get", http.MethodPut: "update", http.MethodPatch: "patch",
			http.MethodDelete: "delete", http.MethodPost: "create"}[r.Method]
		if verb == "" {
			verb = strings.ToLower(r.Method)
		}
		if isConnect(sub) || sub == registry.SubProxy {
			// Upstream's metrics name streaming subresources CONNECT.
			verb = "connect"
		}
		h.info(r, s, verb, sub)
		switch {
		case sub == "" && r.Method == http.MethodGet:
			h.get(w, r, s, ns, name)
		case sub == "" && r.Method == http.MethodPut:
			h.update(w, r, s, ns, name, "", s.R.Strategy)
		case sub == "" && r.Method == http.MethodPatch:
			h.patch(w, r, s, ns, name, "", s.R.Strategy)
		case sub == "" && r.Method == http.MethodDelete:
			h.delete(w, r, s, ns, name)
		case s.R.ObjectSubresource(sub) != nil && r.Method == http.MethodGet:
			h.get(w, r, s, ns, name)
		case s.R.ObjectSubresource(sub) != nil && r.Method == http.MethodPut:
			h.update(w, r, s, ns, name, sub, s.R.ObjectSubresource(sub))
		case s.R.ObjectSubresource(sub) != nil && r.Method == http.MethodPatch:
			h.patch(w, r, s, ns, name, sub, s.R.ObjectSubresource(sub))
		case sub == registry.SubScale && (r.Method == http.MethodGet || r.Method == http.MethodPut || r.Method == http.MethodPatch):
			h.scale(w, r, s, ns, name)
		case sub == registry.SubBinding && r.Method == http.MethodPost:
			h.withoutTables(func(w http.ResponseWriter, r *http.Request) { h.bind(w, r, s, ns, name) })(w, r)
		case sub == registry.SubFinalize && r.Method == http.MethodPut:
			h.finalize(w, r, s, name)
		case sub == registry.SubToken && r.Method == http.MethodPost:
			h.withoutTables(func(w http.ResponseWriter, r *http.Request) { h.tokenRequest(w, r, s, ns, name) })(w, r)
		case sub == registry.SubEviction && r.Method == http.MethodPost:
			h.withoutTables(func(w http.ResponseWriter, r *http.Request) { h.evict(w, r, s, ns, name) })(w, r)
		case sub == registry.SubLog && r.Method == http.MethodGet:
			h.podLog(w, r, s, ns, name)
		case sub == registry.SubProxy:
			h.proxy(w, r, s, ns, name)
		case isConnect(sub) && (r.Method == http.MethodGet || r.Method == http.MethodPost):
			h.podConnect(w, r, s, ns, name, sub)
		default:
			res := s.R.Resource
			if sub != "" {
				res += "/" + sub
			}
			h.writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Group: gr.Group, Resource: res}, strings.ToLower(r.Method)), gr, name)
		}
	})
}

// isConnect reports whether sub is a streaming subresource proxied to the
// kubelet over an upgraded connection.
func isConnect(sub string) bool {
	return sub == registry.SubExec || sub == registry.SubAttach || sub == registry.SubPortForward
}

func isWatch(r *http.Request) bool {
	v := r.URL.Query().Get("watch")
	return v == "true" || v == "1"
}

// decodeParams decodes query parameters into one of the metav1 option types.
func (h *Handler) decodeParams(r *http.Request, into runtime.Object) error {
	if err := h.codecs.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

func dryRun(values []string) (bool, error) {
	for _, v := range values {
		if v != metav1.DryRunAll {
			return false, apierrors.NewBadRequest(fmt.Sprintf("Invalid dryRun value %q: supported values are: All", v))
		}
	}
	return len(values) > 0, nil
}

// readBody reads at most MaxRequestBodyBytes; more is a 413.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxRequestBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxRequestBodyBytes))
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if len(data) > MaxRequestBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxRequestBodyBytes))
	}
	return data, nil
}

// fieldValidation returns the directive: Strict, Warn (the default) or Ignore.
func fieldValidation(r *http.Request) (string, error) {
	v := r.URL.Query().Get("fieldValidation")
	switch v {
	case "":
		return metav1.FieldValidationWarn, nil
	case metav1.FieldValidationStrict, metav1.FieldValidationWarn, metav1.FieldValidationIgnore:
		return v, nil
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("fieldValidation parameter unsupported: %q, must be one of: Ignore, Warn, Strict", v))
}

// decodeBody decodes a request body into a new object of gvk, applying the
// fieldValidation directive to unknown and duplicate fields.
func (h *Handler) decodeBody(w http.ResponseWriter, r *http.Request, data []byte, gvk schema.GroupVersionKind, into runtime.Object) (runtime.Object, error) {
	info, err := h.bodySerializer(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	directive, err := fieldValidation(r)
	if err != nil {
		return nil, err
	}
	return h.decodeWith(w, info, directive, data, gvk, into)
}

func (h *Handler) decodeWith(w http.ResponseWriter, info runtime.SerializerInfo, directive string, data []byte, gvk schema.GroupVersionKind, into runtime.Object) (runtime.Object, error) {
	if _, custom := into.(*unstructured.Unstructured); custom && info.MediaType == runtime.ContentTypeProtobuf {
		// Custom resources have no protobuf encoding, as upstream.
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
			Message: "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
		}}
	}
	dec := info.Serializer
	if directive != metav1.FieldValidationIgnore && info.StrictSerializer != nil {
		dec = info.StrictSerializer
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, apierrors.NewBadRequest("the request body is empty")
	}
	hasQuantity := h.quantities.has(reflect.TypeOf(into).Elem())
	if hasQuantity && hugeExponent(data) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body holds a number with an exponent of four or more digits: quantities support exponents up to %d", maxQuantityScale))
	}
	obj, actual, err := dec.Decode(data, &gvk, into)
	if err != nil {
		if runtime.IsStrictDecodingError(err) && obj != nil {
			if directive == metav1.FieldValidationStrict {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			if sde, ok := runtime.AsStrictDecodingError(err); ok {
				for _, e := range sde.Errors() {
					addWarning(w, e.Error())
				}
			}
		} else {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s: %v", strings.Join(h.mediaTypes(), ", "), err))
		}
	}
	if actual != nil && (actual.Group != gvk.Group || actual.Version != gvk.Version) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", actual.GroupVersion(), gvk.GroupVersion()))
	}
	if actual != nil && actual.Kind != gvk.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", actual.Kind, gvk.Kind))
	}
	if reflect.TypeOf(obj) != reflect.TypeOf(into) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body decodes to %T, expected %s", obj, gvk.Kind))
	}
	if hasQuantity {
		if err := h.quantities.checkQuantities(obj); err != nil {
			return nil, err
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	if err := h.pruneCustom(w, obj, directive); err != nil {
		return nil, err
	}
	return obj, nil
}

func addWarning(w http.ResponseWriter, msg string) {
	w.Header().Add("Warning", fmt.Sprintf("299 - %s", strconv.Quote(msg)))
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name string) {
	var opts metav1.GetOptions
	if err := h.decodeParams(r, &opts); err != nil {
		h.writeError(w, r, err, s.R.GroupResource(), name)
		return
	}
	obj, err := s.Get(r.Context(), ns, name)
	if err != nil {
		h.writeError(w, r, err, s.R.GroupResource(), name)
		return
	}
	h.respond(w, r, http.StatusOK, obj, false)
}

// listOptions parses selectors and paging into storage options.
func (h *Handler) listOptions(r *http.Request, s *registry.Store) (storage.ListOptions, *metav1.ListOptions, error) {
	var opts metav1.ListOptions
	if err := h.decodeParams(r, &opts); err != nil {
		return storage.ListOptions{}, nil, err
	}
	out := storage.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		AllowWatchBookmarks:  opts.AllowWatchBookmarks,
		SendInitialEvents:    opts.SendInitialEvents,
	}
	if _, err := storage.ParseResourceVersion(opts.ResourceVersion); err != nil {
		return out, nil, apierrors.NewBadRequest(err.Error())
	}
	if opts.Watch || isWatch(r) {
		// Upstream's watch rules: resourceVersionMatch only with the
		// watch-list form (sendInitialEvents).
		switch {
		case opts.SendInitialEvents != nil && opts.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan:
			return out, nil, apierrors.NewBadRequest("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
		case opts.SendInitialEvents != nil && !opts.AllowWatchBookmarks:
			return out, nil, apierrors.NewBadRequest("sendInitialEvents requires allowWatchBookmarks=true")
		case opts.SendInitialEvents == nil && opts.ResourceVersionMatch != "":
			return out, nil, apierrors.NewBadRequest("resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
		}
	} else {
		if opts.SendInitialEvents != nil {
			return out, nil, apierrors.NewBadRequest("sendInitialEvents is forbidden for list")
		}
		switch opts.ResourceVersionMatch {
		case "":
		case metav1.ResourceVersionMatchExact, metav1.ResourceVersionMatchNotOlderThan:
			if opts.ResourceVersion == "" {
				return out, nil, apierrors.NewBadRequest("resourceVersionMatch is forbidden unless resourceVersion is provided")
			}
			if opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact && opts.ResourceVersion == "0" {
				return out, nil, apierrors.NewBadRequest("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"")
			}
		default:
			return out, nil, apierrors.NewBadRequest(fmt.Sprintf("resourceVersionMatch: unsupported value %q", opts.ResourceVersionMatch))
		}
	}
	if opts.Limit < 0 {
		return out, nil, apierrors.NewBadRequest("limit must be a non-negative integer")
	}
	if opts.Continue != "" && opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		return out, nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	label, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return out, nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	field, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return out, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	// Only the kind's selectable fields may be used, as upstream.
	_, known, _ := s.AttrFunc()(s.R.New())
	for _, req := range field.Requirements() {
		if _, ok := known[req.Field]; !ok {
			return out, nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	out.Predicate = storage.SelectionPredicate{Label: label, Field: field, Limit: opts.Limit, Continue: opts.Continue}
	return out, &opts, nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request, s *registry.Store, ns string) {
	opts, _, err := h.listOptions(r, s)
	if err != nil {
		h.writeError(w, r, err, s.R.GroupResource(), "")
		return
	}
	if h.listJSON(w, r, s, ns, opts) {
		return
	}
	list, err := s.List(r.Context(), ns, opts)
	if err != nil {
		h.writeError(w, r, err, s.R.GroupResource(), "")
		return
	}
	list.GetObjectKind().SetGroupVersionKind(s.R.GroupVersion().WithKind(s.R.ListKindName()))
	h.respond(w, r, http.StatusOK, list, true)
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request, s *registry.Store, ns string) {
	gr := s.R.GroupResource()
	opts := &metav1.CreateOptions{}
	dry, data, ok := h.writePreamble(w, r, gr, "", opts)
	if !ok {
		return
	}
	if errs := metav1validation.ValidateCreateOptions(opts); len(errs) > 0 {
		h.writeError(w, r, optionsInvalid("CreateOptions", errs), gr, "")
		return
	}
	if err := customTerminating(s); err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	obj, err := h.decodeBody(w, r, data, s.R.GroupVersionKind(), s.R.New())
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	obj = h.trackCreate(r, s, obj, opts.FieldManager)
	m, _ := meta.Accessor(obj)
	// Once created, obj is only read, to answer: the watch cache may keep
	// it, and a protobuf answer is the bytes written to etcd.
	out, written, err := s.CreateHandedOver(r.Context(), ns, obj, dry)
	if err != nil {
		h.writeError(w, r, err, gr, m.GetName())
		return
	}
	klog.FromContext(r.Context()).V(4).Info("created", "resource", gr, "object", klog.KObj(m))
	h.respondWritten(w, r, http.StatusCreated, out, written)
}

func (h *Handler) update(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name, sub string, strategy rest.Strategy) {
	gr := s.R.GroupResource()
	opts := &metav1.UpdateOptions{}
	dry, data, ok := h.writePreamble(w, r, gr, name, opts)
	if !ok {
		return
	}
	if errs := metav1validation.ValidateUpdateOptions(opts); len(errs) > 0 {
		h.writeError(w, r, optionsInvalid("UpdateOptions", errs), gr, name)
		return
	}
	obj, err := h.decodeBody(w, r, data, s.R.GroupVersionKind(), s.R.New())
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	fn := func(_ context.Context, current runtime.Object, _ bool) (runtime.Object, error) {
		return h.trackFields(r, s, sub, current, obj.DeepCopyObject(), opts.FieldManager), nil
	}
	out, created, err := s.Update(r.Context(), ns, name, fn, strategy, dry)
	h.respondUpdated(w, r, gr, name, out, created, err)
}

// respondUpdated answers a write that may have created its object: 201
// then, 200 otherwise.
func (h *Handler) respondUpdated(w http.ResponseWriter, r *http.Request, gr schema.GroupResource, name string, out runtime.Object, created bool, err error) {
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	h.respond(w, r, code, out, false)
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name string) {
	gr := s.R.GroupResource()
	opts, err := h.deleteOptions(r)
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	dry, err := dryRun(opts.DryRun)
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	out, deleted, err := s.Delete(r.Context(), ns, name, opts, dry)
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	code := http.StatusOK
	//nolint:staticcheck // upstream answers 202 for this deprecated option
	if !deleted && opts.OrphanDependents != nil && !*opts.OrphanDependents {
		code = http.StatusAccepted
	}
	if deleted && !s.R.ReturnDeletedObject {
		m, _ := meta.Accessor(out)
		status := &metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusSuccess,
			Details:  &metav1.StatusDetails{Name: name, Group: s.R.Group, Kind: s.R.Resource, UID: m.GetUID()},
		}
		h.writeObject(w, r, code, status)
		return
	}
	h.respond(w, r, code, out, false)
}

func (h *Handler) deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	if err := h.decodeParams(r, opts); err != nil {
		return nil, err
	}
	data, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) > 0 {
		info, err := h.bodySerializer(r.Header.Get("Content-Type"))
		if err != nil {
			return nil, err
		}
		body := &metav1.DeleteOptions{}
		gvk := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		obj, _, err := info.Serializer.Decode(data, &gvk, body)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding DeleteOptions: %v", err))
		}
		d, ok := obj.(*metav1.DeleteOptions)
		if !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("expected DeleteOptions, got %T", obj))
		}
		opts = d
	}
	if opts.GracePeriodSeconds != nil && *opts.GracePeriodSeconds < 0 {
		one := int64(1)
		opts.GracePeriodSeconds = &one
	}
	if opts.PropagationPolicy != nil {
		switch *opts.PropagationPolicy {
		case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan:
		default:
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "DeleteOptions"}, "", nil)
		}
		//nolint:staticcheck
		if opts.OrphanDependents != nil {
			return nil, apierrors.NewBadRequest("orphanDependents and propagationPolicy cannot both be set")
		}
	}
	return opts, nil
}

func (h *Handler) deleteCollection(w http.ResponseWriter, r *http.Request, s *registry.Store, ns string) {
	gr := s.R.GroupResource()
	listOpts, _, err := h.listOptions(r, s)
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	opts, err := h.deleteOptions(r)
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	dry, err := dryRun(opts.DryRun)
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	listOpts.ResourceVersion = ""
	listOpts.Predicate.Limit, listOpts.Predicate.Continue = 0, ""
	list, err := s.List(r.Context(), ns, listOpts)
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	out := s.R.NewList()
	var deleted []runtime.Object
	for _, item := range items {
		m, _ := meta.Accessor(item)
		obj, _, err := s.Delete(r.Context(), m.GetNamespace(), m.GetName(), opts.DeepCopy(), dry)
		if err != nil && !registry.IsNotFound(err) {
			h.writeError(w, r, err, gr, m.GetName())
			return
		}
		if obj != nil {
			deleted = append(deleted, obj)
		}
	}
	if err := meta.SetList(out, deleted); err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	out.GetObjectKind().SetGroupVersionKind(s.R.GroupVersion().WithKind(s.R.ListKindName()))
	h.respond(w, r, http.StatusOK, out, true)
}

// bind serves a pod's binding subresource, and with name "" the bindings
// resource, where the Binding names the pod.
func (h *Handler) bind(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name string) {
	gr := s.R.GroupResource()
	dry, data, ok := h.writePreamble(w, r, gr, name, &metav1.CreateOptions{})
	if !ok {
		return
	}
	gvk := corev1.SchemeGroupVersion.WithKind("Binding")
	obj, err := h.decodeBody(w, r, data, gvk, &corev1.Binding{})
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	b := obj.(*corev1.Binding)
	if name == "" {
		if b.Name == "" {
			h.writeError(w, r, apierrors.NewInvalid(gvk.GroupKind(), "", field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")}), gr, "")
			return
		}
		name = b.Name
	}
	if b.Namespace != "" && b.Namespace != ns {
		h.writeError(w, r, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"), gr, name)
		return
	}
	if err := s.R.Binding(r.Context(), s, ns, name, b, dry); err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	h.writeObject(w, r, http.StatusCreated, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated})
}

func (h *Handler) finalize(w http.ResponseWriter, r *http.Request, s *registry.Store, name string) {
	gr := s.R.GroupResource()
	dry, data, ok := h.writePreamble(w, r, gr, name, &metav1.UpdateOptions{})
	if !ok {
		return
	}
	obj, err := h.decodeBody(w, r, data, s.R.GroupVersionKind(), s.R.New())
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	out, err := s.R.Finalize(r.Context(), s, name, obj, dry)
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	h.respond(w, r, http.StatusOK, out, false)
}

// scale serves GET, PUT and PATCH of the scale subresource.
func (h *Handler) scale(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name string) {
	gr := s.R.GroupResource()
	scaleGVK := autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	respondScale := func(obj runtime.Object, err error) {
		var sc *autoscalingv1.Scale
		if err == nil {
			sc, err = s.R.Scale.Get(obj)
		}
		if err != nil {
			h.writeError(w, r, err, gr, name)
			return
		}
		h.respond(w, r, http.StatusOK, sc, false)
	}
	if r.Method == http.MethodGet {
		respondScale(s.Get(r.Context(), ns, name))
		return
	}
	if r.Method == http.MethodPatch {
		if pt, err := h.patchType(r); err == nil && pt == string(types.ApplyYAMLPatchType) {
			h.applyScale(w, r, s, ns, name, respondScale)
			return
		}
	}
	opts := &metav1.UpdateOptions{}
	dry, data, ok := h.writePreamble(w, r, gr, name, opts)
	if !ok {
		return
	}
	if errs := metav1validation.ValidateUpdateOptions(opts); len(errs) > 0 {
		h.writeError(w, r, optionsInvalid("UpdateOptions", errs), gr, name)
		return
	}
	var patchType string
	var body *autoscalingv1.Scale
	if r.Method == http.MethodPatch {
		var err error
		if patchType, err = h.patchType(r); err != nil {
			h.writeError(w, r, err, gr, name)
			return
		}
	} else {
		obj, err := h.decodeBody(w, r, data, scaleGVK, &autoscalingv1.Scale{})
		if err != nil {
			h.writeError(w, r, err, gr, name)
			return
		}
		body = obj.(*autoscalingv1.Scale)
	}
	fn := func(_ context.Context, current runtime.Object, exists bool) (runtime.Object, error) {
		if !exists {
			return nil, fmt.Errorf("%w: %s", storage.ErrNotFound, name)
		}
		cur, err := s.R.Scale.Get(current)
		if err != nil {
			return nil, err
		}
		want := body
		if patchType != "" {
			want = &autoscalingv1.Scale{}
			if err := h.applyPatch(w, r, patchType, data, cur, want, scaleGVK); err != nil {
				return nil, err
			}
		}
		if want.Spec.Replicas < 0 {
			return nil, apierrors.NewInvalid(scaleGVK.GroupKind(), name, fieldErrors("spec.replicas", want.Spec.Replicas, "must be greater than or equal to 0"))
		}
		if want.ResourceVersion != "" && want.ResourceVersion != cur.ResourceVersion {
			return nil, fmt.Errorf("%w: the object has been modified; please apply your changes to the latest version and try again", storage.ErrConflict)
		}
		obj := current.DeepCopyObject()
		if err := s.R.Scale.Set(obj, want.Spec.Replicas); err != nil {
			return nil, err
		}
		// The scale's writer owns the parent's replicas, recorded with
		// subresource "scale", as upstream's.
		return h.trackFields(r, s, registry.SubScale, current, obj, opts.FieldManager), nil
	}
	out, _, err := s.Update(r.Context(), ns, name, fn, s.R.Strategy, dry)
	respondScale(out, err)
}

// writePreamble reads what every write needs: its options (into opts),
// whether it is a dry run, and its body. When it fails it has answered.
func (h *Handler) writePreamble(w http.ResponseWriter, r *http.Request, gr schema.GroupResource, name string, opts runtime.Object) (bool, []byte, bool) {
	if err := h.decodeParams(r, opts); err != nil {
		h.writeError(w, r, err, gr, name)
		return false, nil, false
	}
	dry, err := dryRun(r.URL.Query()["dryRun"])
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return false, nil, false
	}
	data, err := readBody(r)
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return false, nil, false
	}
	return dry, data, true
}
