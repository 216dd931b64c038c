package endpoints

import (
	"bytes"
	"net/http"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/fastpath"
)

// respond writes obj (an object or a list) in the view and format the
// client negotiated.
func (h *Handler) respond(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, list bool) {
	t, err := h.negotiate(r.Header.Get("Accept"), list)
	if err != nil {
		h.writeStatusJSON(w, err)
		return
	}
	h.respondAs(w, r, code, obj, t)
}

// respondWritten writes obj, which a write has just stored as written
// (its storage encoding, without its resourceVersion; nil if there is
// none), as respond does. A protobuf answer is the written bytes with the
// resourceVersion put in: the bytes encoding obj gives, without encoding
// it a second time (fastpath.TestWithResourceVersionIsTheEncoding). That needs the
// written encoding to be of obj's own kind and version, as it is when the
// storage version is the one served.
func (h *Handler) respondWritten(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, written []byte) {
	t, err := h.negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		h.writeStatusJSON(w, err)
		return
	}
	if written != nil && t.view == viewObject && t.info.MediaType == runtime.ContentTypeProtobuf {
		stored, ok := fastpath.ParseStored(written)
		gvk := obj.GetObjectKind().GroupVersionKind()
		m, err := meta.Accessor(obj)
		if ok && err == nil && stored.APIVersion == gvk.GroupVersion().String() && stored.Kind == gvk.Kind {
			buf := answerBuffers.Get().(*[]byte)
			*buf = stored.AppendWithResourceVersion((*buf)[:0], m.GetResourceVersion())
			writeHeader(w, code, t)
			_, _ = w.Write(*buf)
			// The ResponseWriter has copied or sent the bytes by now.
			if cap(*buf) <= maxAnswerBuffer {
				answerBuffers.Put(buf)
			}
			return
		}
	}
	h.respondAs(w, r, code, obj, t)
}

// answerBuffers hold the answers respondWritten assembles; buffers that
// grew beyond maxAnswerBuffer are left to the garbage collector.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxAnswerBuffer = 64 << 10

func (h *Handler) respondAs(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, t target) {
	if t.view == viewObject && t.info.MediaType == runtime.ContentTypeProtobuf && isUnstructured(obj) {
		h.writeStatusJSON(w, newNotAcceptable("only the following media types are accepted: application/json, application/yaml"))
		return
	}
	out, err := h.transform(r, obj, t.view, false)
	if err != nil {
		h.writeStatusJSON(w, err)
		return
	}
	h.write(w, r, code, t, out)
}

// transform turns an object into the requested view.
func (h *Handler) transform(r *http.Request, obj runtime.Object, v view, noHeaders bool) (runtime.Object, error) {
	switch v {
	case viewTable:
		var opts metav1.TableOptions
		if err := h.decodeParams(r, &opts); err != nil {
			return nil, err
		}
		table, custom, err := h.customTable(obj, noHeaders || opts.NoHeaders)
		if !custom {
			table, err = h.printer.Table(obj, noHeaders || opts.NoHeaders)
		}
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		table.TypeMeta = metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"}
		for i := range table.Rows {
			row := &table.Rows[i]
			switch opts.IncludeObject {
			case metav1.IncludeNone:
				row.Object = runtime.RawExtension{}
			case metav1.IncludeObject:
			default:
				if row.Object.Object != nil {
					row.Object.Object = partialMetadata(row.Object.Object)
				}
			}
		}
		return table, nil
	case viewPartialMetadata:
		if meta.IsListType(obj) {
			items, err := meta.ExtractList(obj)
			if err != nil {
				return nil, err
			}
			out := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadataList", APIVersion: "meta.k8s.io/v1"}}
			if l, err := meta.ListAccessor(obj); err == nil {
				out.ResourceVersion, out.Continue, out.RemainingItemCount = l.GetResourceVersion(), l.GetContinue(), l.GetRemainingItemCount()
			}
			for _, item := range items {
				out.Items = append(out.Items, *partialMetadata(item))
			}
			return out, nil
		}
		return partialMetadata(obj), nil
	}
	return obj, nil
}

// partialMetadata is the object's metadata alone.
func partialMetadata(obj runtime.Object) *metav1.PartialObjectMetadata {
	out := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"}}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if m, ok := u.Object["metadata"].(map[string]any); ok {
			_ = runtime.DefaultUnstructuredConverter.FromUnstructured(runtime.DeepCopyJSON(m), &out.ObjectMeta)
		}
		return out
	}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Ptr && !v.IsNil() {
		if f := v.Elem().FieldByName("ObjectMeta"); f.IsValid() {
			if om, ok := f.Interface().(metav1.ObjectMeta); ok {
				out.ObjectMeta = *om.DeepCopy()
			}
		}
	}
	return out
}

func (h *Handler) write(w http.ResponseWriter, r *http.Request, code int, t target, obj runtime.Object) {
	enc := runtime.Encoder(t.info.Serializer)
	if r.URL.Query().Get("pretty") == "true" && t.info.PrettySerializer != nil {
		enc = t.info.PrettySerializer
	}
	data, err := runtime.Encode(enc, obj)
	if err != nil {
		klog.FromContext(r.Context()).Error(err, "encoding a response")
		h.writeStatusJSON(w, apierrors.NewInternalError(err))
		return
	}
	writeHeader(w, code, t)
	_, _ = w.Write(data)
}

func writeHeader(w http.ResponseWriter, code int, t target) {
	w.Header().Set("Content-Type", t.mediaType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
}

// writeObject writes a Status or another meta object in the negotiated format.
func (h *Handler) writeObject(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object) {
	t, err := h.negotiate(r.Header.Get("Accept"), false)
	if err != nil || t.view != viewObject {
		// Status is always an object, whatever view was asked for.
		t, _ = h.negotiate("application/json", false)
		if info, ok := h.serializerFor(r.Header.Get("Accept")); ok {
			t.info, t.mediaType = info, info.MediaType
		}
	}
	h.write(w, r, code, t, obj)
}

func (h *Handler) serializerFor(accept string) (runtime.SerializerInfo, bool) {
	for _, i := range h.codecs.Factory.SupportedMediaTypes() {
		if accept != "" && bytes.Contains([]byte(accept), []byte(i.MediaType)) {
			return i, true
		}
	}
	return runtime.SerializerInfo{}, false
}

// writeStatusJSON is the last resort when negotiation itself failed.
func (h *Handler) writeStatusJSON(w http.ResponseWriter, err error) {
	se := ToStatusError(err, schemaGR, "")
	status := se.Status()
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	t, _ := h.negotiate("application/json", false)
	var buf bytes.Buffer
	_ = t.info.Serializer.Encode(&status, &buf)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(buf.Bytes())
}
