package endpoints

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"sync"
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
	// A watch streams single objects: its views are Table and
	// PartialObjectMetadata (what metadata informers ask for), not the
	// list kinds.
	t, err := h.negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	if err := customNotAcceptable(s, t); err != nil {
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
			} else if t.view == viewPartialMetadata && ev.Type == watch.Bookmark {
				// A metadata client decodes only PartialObjectMetadata: a
				// bookmark's empty object of the resource's kind would end
				// its watch with a decoding error.
				obj = partialMetadata(obj)
			}
			var frame []byte
			if t.view == viewObject && (ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted) {
				// The cacher hands every watcher the same object: encode it once.
				frame, err = h.frames.get(ev.Type, obj, t.mediaType, func() ([]byte, error) { return encodeFrame(t, ev.Type, obj) })
			} else {
				frame, err = encodeFrame(t, ev.Type, obj)
			}
			if err != nil {
				klog.FromContext(ctx).Error(err, "encoding a watch event")
				return
			}
			if _, err := w.Write(frame); err != nil {
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

// encodeFrame renders one watch event as the bytes of one stream frame.
func encodeFrame(t target, typ watch.EventType, obj runtime.Object) ([]byte, error) {
	var buf bytes.Buffer
	fw := t.info.StreamSerializer.Framer.NewFrameWriter(&buf)
	enc := restclientwatch.NewEncoder(streaming.NewEncoder(fw, t.info.StreamSerializer.Serializer), t.info.Serializer)
	if err := enc.Encode(&watch.Event{Type: typ, Object: obj}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// frameCache keeps the encoded frames of recent events, so an event that
// goes to a hundred watchers is encoded once per media type. The key holds
// the object itself, so it stays alive while cached and a new object can
// never match at a reused address.
type frameCache struct {
	mu      sync.Mutex
	entries map[frameKey][]byte
	ring    []frameKey
	next    int
}

type frameKey struct {
	obj   runtime.Object
	typ   watch.EventType
	media string
}

const frameCacheSize = 1024

func (c *frameCache) get(typ watch.EventType, obj runtime.Object, media string, encode func() ([]byte, error)) ([]byte, error) {
	k := frameKey{obj, typ, media}
	c.mu.Lock()
	data, ok := c.entries[k]
	c.mu.Unlock()
	if ok {
		return data, nil
	}
	data, err := encode()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[frameKey][]byte, frameCacheSize)
	}
	if _, ok := c.entries[k]; ok {
		return data, nil
	}
	if len(c.ring) < frameCacheSize {
		c.ring = append(c.ring, k)
	} else {
		delete(c.entries, c.ring[c.next])
		c.ring[c.next] = k
		c.next = (c.next + 1) % frameCacheSize
	}
	c.entries[k] = data
	return data, nil
}
