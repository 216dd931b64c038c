package openapi

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/munnerz/goautoneg"
)

// Content types of the protobuf encodings (gnostic's OpenAPI messages). The
// "@" forms are the deprecated spellings clients still send; the answer
// always carries the "." form, as upstream's.
const (
	mimeJSON             = "application/json"
	subtypeJSON          = "json"
	subtypeV2Proto       = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
	subtypeV2ProtoLegacy = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
	subtypeV3Proto       = "com.github.proto-openapi.spec.v3.v1.0+protobuf"
	subtypeV3ProtoLegacy = "com.github.proto-openapi.spec.v3@v1.0+protobuf"
)

// encoding is a content type a document can be served in.
type encoding struct {
	subtype     string // subtype of application/ matched against Accept
	contentType string // Content-Type of the answer
	proto       bool
}

var (
	v2Encodings = []encoding{
		{subtypeJSON, mimeJSON, false},
		{subtypeV2ProtoLegacy, "application/" + subtypeV2Proto, true},
		{subtypeV2Proto, "application/" + subtypeV2Proto, true},
	}
	v3Encodings = []encoding{
		{subtypeJSON, mimeJSON, false},
		{subtypeV3Proto, "application/" + subtypeV3Proto, true},
		{subtypeV3ProtoLegacy, "application/" + subtypeV3Proto, true},
	}
)

// negotiate picks the encoding of the most preferred Accept clause, or
// reports false when none is acceptable.
func negotiate(r *http.Request, encodings []encoding) (encoding, bool) {
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	for _, clause := range goautoneg.ParseAccept(accept) {
		for _, e := range encodings {
			if clause.Type != "application" && clause.Type != "*" {
				continue
			}
			if clause.SubType != e.subtype && clause.SubType != "*" {
				continue
			}
			return e, true
		}
	}
	return encoding{}, false
}

func allowRead(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// serve writes one encoding of doc, honouring If-None-Match and Range
// through http.ServeContent.
func serve(w http.ResponseWriter, r *http.Request, doc document, e encoding) {
	data := doc.json
	if e.proto {
		data = doc.proto
	}
	w.Header().Set("Content-Type", e.contentType)
	w.Header().Set("Etag", strconv.Quote(doc.etag))
	http.ServeContent(w, r, "", doc.modified, bytes.NewReader(data))
}

// ServeV2 serves GET /openapi/v2: the Swagger 2.0 document as JSON or as
// gnostic protobuf (what kubectl asks for), chosen by the Accept header.
func (s *Spec) ServeV2(w http.ResponseWriter, r *http.Request) {
	if !allowRead(w, r) {
		return
	}
	w.Header().Add("Vary", "Accept")
	e, ok := negotiate(r, v2Encodings)
	if !ok {
		http.Error(w, "not acceptable", http.StatusNotAcceptable)
		return
	}
	serve(w, r, s.v2, e)
}

// ServeV3Discovery serves GET /openapi/v3: the path of every group-version
// document, each with the hash of its current content.
func (s *Spec) ServeV3Discovery(w http.ResponseWriter, r *http.Request) {
	if !allowRead(w, r) {
		return
	}
	serve(w, r, s.discovery, encoding{subtype: subtypeJSON, contentType: mimeJSON})
}

// ServeV3GroupVersion serves GET /openapi/v3/<gvPath>, where gvPath is
// "api/v1" or "apis/<group>/<version>". A request whose hash query parameter
// matches the document's hash may be cached for good; one with a stale hash
// is redirected to the current one.
func (s *Spec) ServeV3GroupVersion(w http.ResponseWriter, r *http.Request, gvPath string) {
	if !allowRead(w, r) {
		return
	}
	doc, found := s.v3[gvPath]
	if !found {
		http.NotFound(w, r)
		return
	}
	w.Header().Add("Vary", "Accept")
	e, ok := negotiate(r, v3Encodings)
	if !ok {
		http.Error(w, "not acceptable", http.StatusNotAcceptable)
		return
	}
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != doc.etag {
			http.Redirect(w, r, serverRelativeURL(gvPath, doc.etag), http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat))
	}
	serve(w, r, doc, e)
}
