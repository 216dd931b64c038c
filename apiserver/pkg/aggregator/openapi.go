package aggregator

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// openAPIV3Discovery answers GET /openapi/v3 with the server's own
// document plus a path for each available remote group-version, whose
// document the backend serves (/openapi/v3/apis/<group>/<version> is
// proxied), as upstream's aggregator merges its backends' OpenAPI v3.
func (h *proxyHandler) openAPIV3Discovery(w http.ResponseWriter, r *http.Request) {
	apis := h.a.availableRemote()
	if len(apis) == 0 || r.Method != http.MethodGet {
		h.next.ServeHTTP(w, r)
		return
	}
	inner := r.Clone(r.Context())
	inner.Header.Del("If-None-Match")
	inner.Header.Del("If-Modified-Since")
	buf := &bufferWriter{header: http.Header{}}
	h.next.ServeHTTP(buf, inner)
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if buf.code != http.StatusOK || json.Unmarshal(buf.body.Bytes(), &doc) != nil || doc.Paths == nil {
		for k, v := range buf.header {
			w.Header()[k] = v
		}
		w.WriteHeader(buf.statusCode())
		_, _ = w.Write(buf.body.Bytes())
		return
	}
	for _, api := range apis {
		p := "apis/" + api.Spec.Group + "/" + api.Spec.Version
		entry, _ := json.Marshal(map[string]string{"serverRelativeURL": "/openapi/v3/" + p})
		doc.Paths[p] = entry
	}
	writeJSON(w, http.StatusOK, &doc)
}

// availableRemote are the available APIServices with a service, by name.
func (a *Aggregator) availableRemote() []*apiregistrationv1.APIService {
	a.st.mu.RLock()
	defer a.st.mu.RUnlock()
	var out []*apiregistrationv1.APIService
	for _, api := range a.st.apis {
		if api.Spec.Service != nil && available(api) {
			out = append(out, api)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// bufferWriter keeps a response in memory.
type bufferWriter struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *bufferWriter) Header() http.Header { return b.header }

func (b *bufferWriter) WriteHeader(code int) {
	if b.code == 0 {
		b.code = code
	}
}

func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.code == 0 {
		b.code = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferWriter) statusCode() int {
	if b.code == 0 {
		return http.StatusOK
	}
	return b.code
}
