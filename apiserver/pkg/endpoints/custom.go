package endpoints

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/gorilla/mux"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/registry"
)

// customStores holds the stores of custom resources, which come and go with
// their CustomResourceDefinitions while the server runs.
type customStores struct {
	mu     sync.RWMutex
	byGVR  map[schema.GroupVersionResource]*registry.Store
	byKind map[schema.GroupVersionKind]*registry.Store
	// resources in discovery order (group, then version priority).
	resources []*registry.Resource
}

// SetCustom replaces the custom resources served. stores must be in the
// order discovery lists them: by group, then each group's preferred version
// first.
func (h *Handler) SetCustom(stores []*registry.Store) {
	byGVR := make(map[schema.GroupVersionResource]*registry.Store, len(stores))
	byKind := make(map[schema.GroupVersionKind]*registry.Store, 2*len(stores))
	resources := make([]*registry.Resource, 0, len(stores))
	for _, s := range stores {
		byGVR[s.R.GroupVersion().WithResource(s.R.Resource)] = s
		byKind[s.R.GroupVersionKind()] = s
		byKind[s.R.GroupVersion().WithKind(s.R.ListKindName())] = s
		resources = append(resources, s.R)
	}
	h.custom.mu.Lock()
	h.custom.byGVR, h.custom.byKind, h.custom.resources = byGVR, byKind, resources
	h.custom.mu.Unlock()
	served := make(map[*registry.Resource]bool, len(resources))
	for _, r := range resources {
		served[r] = true
	}
	h.fields.Forget(func(r *registry.Resource) bool { return served[r] })
}

// CustomResources returns the custom resources served now.
func (h *Handler) CustomResources() []*registry.Resource {
	h.custom.mu.RLock()
	defer h.custom.mu.RUnlock()
	return slices.Clone(h.custom.resources)
}

func (h *Handler) customStore(gvr schema.GroupVersionResource) *registry.Store {
	h.custom.mu.RLock()
	defer h.custom.mu.RUnlock()
	return h.custom.byGVR[gvr]
}

// customStoreOf finds the store of a custom resource's object or list.
func (h *Handler) customStoreOf(obj runtime.Object) *registry.Store {
	if !isUnstructured(obj) {
		return nil
	}
	h.custom.mu.RLock()
	defer h.custom.mu.RUnlock()
	return h.custom.byKind[obj.GetObjectKind().GroupVersionKind()]
}

func isUnstructured(obj runtime.Object) bool {
	switch obj.(type) {
	case *unstructured.Unstructured, *unstructured.UnstructuredList:
		return true
	}
	return false
}

// InstallCustom adds the routes of custom resources. It must come after
// every other route under /apis: the routes match any group and version,
// and the request is served only when a custom resource of that name is
// served at the time.
func (h *Handler) InstallCustom(r *mux.Router) {
	const root = "/apis/{group}/{version}"
	for _, p := range []string{
		root + "/namespaces/{namespace}/{resource}/{name}/{sub}",
		root + "/namespaces/{namespace}/{resource}/{name}",
		root + "/namespaces/{namespace}/{resource}",
		root + "/{resource}/{name}/{sub}",
		root + "/{resource}/{name}",
		root + "/{resource}",
	} {
		namespaced := strings.Contains(p, "{namespace}")
		r.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			h.serveCustom(w, req, namespaced)
		}))
	}
}

func (h *Handler) serveCustom(w http.ResponseWriter, r *http.Request, namespaced bool) {
	v := mux.Vars(r)
	gvr := schema.GroupVersionResource{Group: v["group"], Version: v["version"], Resource: v["resource"]}
	s := h.customStore(gvr)
	if s == nil || (namespaced && !s.R.Namespaced) {
		h.writeError(w, r, notFoundPath(r.URL.Path), schemaGR, "")
		return
	}
	sub, name := v["sub"], v["name"]
	switch {
	case name == "":
		h.collection(s, namespaced).ServeHTTP(w, r)
	case sub == "":
		h.item(s, "").ServeHTTP(w, r)
	case slices.Contains(s.R.Subresources(), sub):
		h.item(s, sub).ServeHTTP(w, r)
	default:
		h.writeError(w, r, notFoundPath(r.URL.Path), schemaGR, "")
	}
}

// customTable prints a custom resource's object or list with its CRD's
// columns; the bool is false for other objects.
func (h *Handler) customTable(obj runtime.Object, noHeaders bool) (*metav1.Table, bool, error) {
	s := h.customStoreOf(obj)
	if s == nil || s.R.Custom == nil || s.R.Custom.Table == nil {
		return nil, false, nil
	}
	t, err := s.R.Custom.Table(obj, noHeaders)
	return t, true, err
}

// pruneCustom drops the fields a custom resource's schema does not know
// from a decoded body and reports them as upstream does: a warning for
// each, or a 400 under fieldValidation=Strict.
func (h *Handler) pruneCustom(w http.ResponseWriter, obj runtime.Object, directive string) error {
	s := h.customStoreOf(obj)
	if s == nil || s.R.Custom == nil || s.R.Custom.Prune == nil {
		return nil
	}
	unknown := s.R.Custom.Prune(obj)
	if len(unknown) == 0 || directive == metav1.FieldValidationIgnore {
		return nil
	}
	msgs := make([]string, 0, len(unknown))
	for _, p := range unknown {
		msgs = append(msgs, fmt.Sprintf("unknown field %q", p))
	}
	if directive == metav1.FieldValidationStrict {
		return apierrors.NewBadRequest("strict decoding error: " + strings.Join(msgs, ", "))
	}
	for _, m := range msgs {
		addWarning(w, m)
	}
	return nil
}

// customNotAcceptable refuses a protobuf watch of a custom resource with
// 406, as upstream: custom resources have no protobuf encoding.
func customNotAcceptable(s *registry.Store, t target) error {
	if s.R.Custom != nil && t.view == viewObject && t.info.MediaType == runtime.ContentTypeProtobuf {
		return newNotAcceptable("only the following media types are accepted: application/json, application/yaml")
	}
	return nil
}

// customTerminating refuses creates while the resource's CRD is being
// deleted, with upstream's 405.
func customTerminating(s *registry.Store) error {
	if s.R.Custom == nil || s.R.Custom.Terminating == nil || !s.R.Custom.Terminating() {
		return nil
	}
	err := apierrors.NewMethodNotSupported(s.R.GroupResource(), "create")
	err.ErrStatus.Message = "create not allowed while custom resource definition is terminating"
	return err
}
