package endpoints

import (
	"math/rand/v2"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restclientwatch "k8s.io/client-go/rest/watch"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storage/cacher"
)

// watch streams events: headers and a flush first, then one frame per event,
// flushed whenever the event channel is drained; it ends on the client
// leaving, the timeout, shutdown, or the watch closing.
func (h *Handler) watch(w http.ResponseWriter, r *http.Request, s *registry.Store, ns string) {
	gr := s.R.GroupResource()
	opts, raw, err := h.listOptions(r, s)
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	t, err := h.negotiate(r.Header.Get("Accept"), true)
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	if t.info.StreamSerializer == nil {
		h.writeError(w, r, newNotAcceptable("the media type does not support watch streams: "+t.mediaType), gr, "")
		return
	}
	timeout := time.Duration(float64(h.MinRequestTimeout) * (1 + rand.Float64()))
	if raw.TimeoutSeconds != nil {
		timeout = time.Duration(*raw.TimeoutSeconds) * time.Second
	}
	ctx := r.Context()
	wi, err := s.Watch(ctx, ns, opts)
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	defer wi.Stop()

	flusher, ok := w.(http.Flusher)
	if !ok {
		h.writeError(w, r, apierrors.NewInternalError(errNoFlusher), gr, "")
		return
	}
	framer := t.info.StreamSerializer.Framer.NewFrameWriter(w)
	enc := restclientwatch.NewEncoder(streaming.NewEncoder(framer, t.info.StreamSerializer.Serializer), t.info.Serializer)
	contentType := t.mediaType
	if t.info.MediaType == runtime.ContentTypeProtobuf {
		contentType = runtime.ContentTypeProtobuf + ";stream=watch"
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	headersSent := false
	ch := wi.ResultChan()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.shutdown:
			return
		case <-timer.C:
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			obj := ev.Object
			if t.view != viewObject && ev.Type != watch.Error && ev.Type != watch.Bookmark {
				obj, err = h.transform(r, obj, t.view, headersSent)
				if err != nil {
					ev = cacher.ErrorEvent(err)
					obj = ev.Object
				} else if t.view == viewTable {
					headersSent = true
				}
			} else if t.view == viewTable && ev.Type == watch.Bookmark {
				// A bookmark in a Table stream is an empty Table at the revision.
				rv := ""
				if m, ok := obj.(metav1.ObjectMetaAccessor); ok {
					rv = m.GetObjectMeta().GetResourceVersion()
				}
				obj = &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"}, ListMeta: metav1.ListMeta{ResourceVersion: rv}}
			}
			if err := enc.Encode(&watch.Event{Type: ev.Type, Object: obj}); err != nil {
				klog.FromContext(ctx).V(3).Info("watch client went away", "err", err)
				return
			}
			if len(ch) == 0 {
				flusher.Flush()
			}
		}
	}
}

type flushError string

func (e flushError) Error() string { return string(e) }

const errNoFlusher = flushError("the response writer cannot flush a watch stream")
