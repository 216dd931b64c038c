package endpoints

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// view is what the client wants to see of the objects.
type view int

const (
	viewObject view = iota
	viewTable
	viewPartialMetadata
)

// target is the outcome of content negotiation.
type target struct {
	info runtime.SerializerInfo
	view view
	// mediaType is what goes into Content-Type.
	mediaType string
}

// negotiate picks the first acceptable media type of the Accept header.
// Table and PartialObjectMetadata views are meta.k8s.io/v1 only.
func (h *Handler) negotiate(accept string, list bool) (target, error) {
	return h.negotiateViews(accept, list, true)
}

// negotiateViews is negotiate; tables false skips the clauses asking for a
// Table, as upstream does for endpoints without a table convertor (the
// create-only reviews, token requests, bindings and evictions).
func (h *Handler) negotiateViews(accept string, list, tables bool) (target, error) {
	infos := h.codecs.Factory.SupportedMediaTypes()
	find := func(mt string) (runtime.SerializerInfo, bool) {
		for _, i := range infos {
			if i.MediaType == mt {
				return i, true
			}
		}
		return runtime.SerializerInfo{}, false
	}
	jsonInfo, _ := find(runtime.ContentTypeJSON)
	if strings.TrimSpace(accept) == "" {
		return target{info: jsonInfo, mediaType: runtime.ContentTypeJSON}, nil
	}
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		var info runtime.SerializerInfo
		switch mt {
		case "*/*", "application/*":
			info = jsonInfo
		default:
			i, ok := find(mt)
			if !ok {
				continue
			}
			info = i
		}
		v := viewObject
		if as := params["as"]; as != "" {
			if params["g"] != "meta.k8s.io" || params["v"] != "v1" {
				continue
			}
			switch as {
			case "Table":
				if !tables {
					continue
				}
				v = viewTable
			case "PartialObjectMetadata":
				if list {
					continue
				}
				v = viewPartialMetadata
			case "PartialObjectMetadataList":
				if !list {
					continue
				}
				v = viewPartialMetadata
			default:
				continue
			}
		}
		ct := info.MediaType
		return target{info: info, view: v, mediaType: ct}, nil
	}
	return target{}, newNotAcceptable(fmt.Sprintf("only the following media types are accepted: %s", strings.Join(h.mediaTypes(), ", ")))
}

func (h *Handler) mediaTypes() []string {
	var out []string
	for _, i := range h.codecs.Factory.SupportedMediaTypes() {
		out = append(out, i.MediaType)
	}
	return out
}

// bodySerializer returns the serializer for a request's Content-Type.
func (h *Handler) bodySerializer(contentType string) (runtime.SerializerInfo, error) {
	if contentType == "" {
		contentType = runtime.ContentTypeJSON
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return runtime.SerializerInfo{}, newUnsupportedMediaType(contentType)
	}
	for _, i := range h.codecs.Factory.SupportedMediaTypes() {
		if i.MediaType == mt {
			return i, nil
		}
	}
	return runtime.SerializerInfo{}, newUnsupportedMediaType(contentType)
}

// withoutTables answers 406 before a create-only endpoint does anything
// when the client accepts nothing but a Table, as upstream's negotiation
// at the start of a create; otherwise the request goes on with the Accept
// header narrowed to what was chosen, so the answer is not a Table either.
func (h *Handler) withoutTables(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := h.negotiateViews(r.Header.Get("Accept"), false, false)
		if err != nil {
			h.writeStatusJSON(w, err)
			return
		}
		accept := t.mediaType
		if t.view == viewPartialMetadata {
			accept += ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
		}
		r.Header.Set("Accept", accept)
		next(w, r)
	}
}
