package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/fastpath"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storage"
)

// listJSON answers a plain JSON list (no Table, no pretty printing) of a
// built-in kind from the watch cache, joining the items' encodings that
// the cache keeps with each object version (fastpath.JSONList), so that
// listing unchanged objects does not encode them again. The bytes are
// those the serializer writes for the whole list. It reports false, having
// written nothing, when the request needs the general path.
func (h *Handler) listJSON(w http.ResponseWriter, r *http.Request, s *registry.Store, ns string, opts storage.ListOptions) bool {
	if s.R.Custom != nil || s.R.SharedStorage != nil || r.URL.Query().Get("pretty") == "true" {
		return false
	}
	t, err := h.negotiate(r.Header.Get("Accept"), true)
	if err != nil || t.view != viewObject || t.info.MediaType != runtime.ContentTypeJSON {
		return false
	}
	items, rev, ok, err := s.EncodedList(r.Context(), ns, opts, func(obj runtime.Object) ([]byte, error) { return json.Marshal(obj) })
	if err != nil {
		h.writeError(w, r, err, s.R.GroupResource(), "")
		return true
	}
	if !ok {
		return false
	}
	empty, ok := h.emptyListJSON(r, s, rev)
	if !ok {
		return false
	}
	body, ok := fastpath.JSONList(empty, items)
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", t.mediaType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return true
}

// emptyListJSON is the serializer's JSON of an empty list of s's kind at
// revision rev, with "items":[] as the cache's lists have it.
func (h *Handler) emptyListJSON(r *http.Request, s *registry.Store, rev int64) ([]byte, bool) {
	list := s.R.NewList()
	list.GetObjectKind().SetGroupVersionKind(s.R.GroupVersion().WithKind(s.R.ListKindName()))
	if err := storage.SetResourceVersion(list, rev); err != nil {
		return nil, false
	}
	// Empty, not nil: "items":[] as the cache's lists have it.
	if err := meta.SetList(list, []runtime.Object{}); err != nil {
		return nil, false
	}
	info, ok := h.serializerFor(runtime.ContentTypeJSON)
	if !ok {
		return nil, false
	}
	var buf bytes.Buffer
	if err := info.Serializer.Encode(list, &buf); err != nil {
		klog.FromContext(r.Context()).Error(err, "Encoding an empty list", "resource", s.R.GroupResource())
		return nil, false
	}
	return buf.Bytes(), true
}
