package openapi

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
)

func TestV3Discovery(t *testing.T) {
	s := newTestSpec(t)
	srv := newTestServer(t, s)

	resp, body := get(t, srv.Client(), srv.URL+"/openapi/v3", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi/v3: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("Etag") == "" {
		t.Error("GET /openapi/v3: no ETag")
	}
	var discovery struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &discovery); err != nil {
		t.Fatalf("decoding discovery: %v", err)
	}
	for _, gv := range []string{"api/v1", "apis/apps/v1", "apis/rbac.authorization.k8s.io/v1"} {
		t.Run(gv, func(t *testing.T) {
			entry, ok := discovery.Paths[gv]
			if !ok {
				t.Fatalf("discovery has no %s: %s", gv, body)
			}
			u, err := url.Parse(entry.ServerRelativeURL)
			if err != nil {
				t.Fatal(err)
			}
			if u.Path != "/openapi/v3/"+gv {
				t.Errorf("path = %s", u.Path)
			}
			hash := u.Query().Get("hash")
			resp, doc := get(t, srv.Client(), srv.URL+entry.ServerRelativeURL, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d", entry.ServerRelativeURL, resp.StatusCode)
			}
			if want := fmt.Sprintf("%X", sha512.Sum512(doc)); hash != want {
				t.Errorf("hash = %s, want the SHA-512 of the document %s", hash, want)
			}
		})
	}
	if len(discovery.Paths) != 3 {
		t.Errorf("discovery lists %d group-versions, want 3", len(discovery.Paths))
	}
}

func TestV3GroupVersionCaching(t *testing.T) {
	s := newTestSpec(t)
	srv := newTestServer(t, s)
	noRedirect := *srv.Client()
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	hash := s.v3["apis/apps/v1"].etag
	base := srv.URL + "/openapi/v3/apis/apps/v1"

	tests := []struct {
		name         string
		url          string
		header       map[string]string
		wantStatus   int
		wantType     string
		wantCache    string
		wantLocation string
	}{
		{name: "current hash", url: base + "?hash=" + hash, wantStatus: 200, wantType: "application/json", wantCache: "public, immutable"},
		{name: "no hash", url: base, wantStatus: 200, wantType: "application/json"},
		{name: "stale hash", url: base + "?hash=0123", wantStatus: 301, wantLocation: "/openapi/v3/apis/apps/v1?hash=" + hash},
		{name: "etag match", url: base + "?hash=" + hash, header: map[string]string{"If-None-Match": `"` + hash + `"`}, wantStatus: 304, wantCache: "public, immutable"},
		{name: "protobuf", url: base, header: map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"}, wantStatus: 200, wantType: "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"},
		{name: "json preferred", url: base, header: map[string]string{"Accept": "application/json, */*"}, wantStatus: 200, wantType: "application/json"},
		{name: "not acceptable", url: base, header: map[string]string{"Accept": "text/html"}, wantStatus: 406},
		{name: "unknown group-version", url: srv.URL + "/openapi/v3/apis/batch/v1", wantStatus: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, &noRedirect, tt.url, tt.header)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantType != "" && resp.Header.Get("Content-Type") != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", resp.Header.Get("Content-Type"), tt.wantType)
			}
			if got := resp.Header.Get("Cache-Control"); got != tt.wantCache {
				t.Errorf("Cache-Control = %q, want %q", got, tt.wantCache)
			}
			if tt.wantCache != "" && resp.Header.Get("Expires") == "" {
				t.Error("no Expires with an immutable answer")
			}
			if got := resp.Header.Get("Location"); got != tt.wantLocation {
				t.Errorf("Location = %q, want %q", got, tt.wantLocation)
			}
			if tt.wantStatus == 200 {
				if got := resp.Header.Get("Etag"); got != `"`+hash+`"` {
					t.Errorf("Etag = %s", got)
				}
				if !strings.Contains(resp.Header.Get("Vary"), "Accept") {
					t.Error("no Vary: Accept")
				}
			}
			if strings.HasSuffix(tt.wantType, "protobuf") {
				var doc openapiv3.Document
				if err := proto.Unmarshal(body, &doc); err != nil {
					t.Fatalf("decoding protobuf: %v", err)
				}
				if doc.GetPaths() == nil || len(doc.GetComponents().GetSchemas().GetAdditionalProperties()) == 0 {
					t.Error("protobuf document has no paths or schemas")
				}
			}
		})
	}
}

func TestV2Negotiation(t *testing.T) {
	s := newTestSpec(t)
	srv := newTestServer(t, s)
	tests := []struct {
		accept   string
		status   int
		wantType string
	}{
		{"", 200, "application/json"},
		{"application/json", 200, "application/json"},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", 200, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"},
		{"application/com.github.proto-openapi.spec.v2.v1.0+protobuf", 200, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json;q=0.9", 200, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"},
		{"text/html", 406, ""},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			resp, body := get(t, srv.Client(), srv.URL+"/openapi/v2", map[string]string{"Accept": tt.accept})
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status != 200 {
				return
			}
			if got := resp.Header.Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantType)
			}
			if resp.Header.Get("Etag") != `"`+s.v2.etag+`"` {
				t.Errorf("Etag = %q", resp.Header.Get("Etag"))
			}
			if tt.wantType == "application/json" {
				var v map[string]interface{}
				if err := json.Unmarshal(body, &v); err != nil || v["swagger"] != "2.0" {
					t.Errorf("not a Swagger 2.0 JSON document: %v", err)
				}
				return
			}
			var doc openapiv2.Document
			if err := proto.Unmarshal(body, &doc); err != nil {
				t.Fatalf("decoding protobuf: %v", err)
			}
			if doc.GetSwagger() != "2.0" || len(doc.GetDefinitions().GetAdditionalProperties()) == 0 {
				t.Errorf("protobuf document: swagger %q, %d definitions", doc.GetSwagger(), len(doc.GetDefinitions().GetAdditionalProperties()))
			}
		})
	}

	resp, _ := get(t, srv.Client(), srv.URL+"/openapi/v2", map[string]string{"If-None-Match": `"` + s.v2.etag + `"`})
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: status = %d, want 304", resp.StatusCode)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	s := newTestSpec(t)
	srv := newTestServer(t, s)
	for _, path := range []string{"/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1"} {
		resp, err := srv.Client().Post(srv.URL+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("POST %s: %d Allow=%q", path, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
}
