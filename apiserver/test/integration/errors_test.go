package integration

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestErrorsAreStatuses(t *testing.T) {
	ts := start(t, nil)
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"}}`
	if code, body := raw(t, ts, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", []byte(cm)); code != http.StatusCreated {
		t.Fatalf("setup: %d %s", code, body)
	}
	big := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"x":"` + strings.Repeat("a", 3*1024*1024+10) + `"}}`
	tests := []struct {
		name        string
		method      string
		path        string
		contentType string
		body        string
		wantCode    int
		wantReason  metav1.StatusReason
		wantCauses  []string // fields named in details.causes
		wantMessage string
	}{
		{name: "malformed json", method: "POST", path: "/api/v1/namespaces/default/configmaps", contentType: "application/json",
			body: `{"apiVersion":"v1","kind":"ConfigMap",`, wantCode: 400, wantReason: metav1.StatusReasonBadRequest},
		{name: "not found", method: "GET", path: "/api/v1/namespaces/default/configmaps/nope",
			wantCode: 404, wantReason: metav1.StatusReasonNotFound, wantMessage: `configmaps "nope" not found`},
		{name: "unknown path", method: "GET", path: "/api/v1/nothings",
			wantCode: 404, wantReason: metav1.StatusReasonNotFound},
		{name: "already exists", method: "POST", path: "/api/v1/namespaces/default/configmaps", contentType: "application/json",
			body: cm, wantCode: 409, wantReason: metav1.StatusReasonAlreadyExists, wantMessage: `configmaps "dup" already exists`},
		{name: "too large", method: "POST", path: "/api/v1/namespaces/default/configmaps", contentType: "application/json",
			body: big, wantCode: 413, wantReason: metav1.StatusReasonRequestEntityTooLarge},
		{name: "unsupported media type", method: "POST", path: "/api/v1/namespaces/default/configmaps", contentType: "text/plain",
			body: cm, wantCode: 415, wantReason: metav1.StatusReasonUnsupportedMediaType},
		{name: "invalid names every field", method: "POST", path: "/api/v1/namespaces/default/pods", contentType: "application/json",
			body:     `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"Bad_Name"},"spec":{"containers":[{"name":"c"}]}}`,
			wantCode: 422, wantReason: metav1.StatusReasonInvalid, wantCauses: []string{"metadata.name", "spec.containers[0].image"}},
		{name: "strict rejects unknown fields", method: "POST", path: "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", contentType: "application/json",
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},"bogus":1}`, wantCode: 400, wantReason: metav1.StatusReasonBadRequest,
			wantMessage: `unknown field "bogus"`},
		{name: "kind mismatch", method: "POST", path: "/api/v1/namespaces/default/configmaps", contentType: "application/json",
			body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`, wantCode: 400, wantReason: metav1.StatusReasonBadRequest},
		{name: "namespace mismatch", method: "POST", path: "/api/v1/namespaces/default/configmaps", contentType: "application/json",
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s","namespace":"other"}}`, wantCode: 400, wantReason: metav1.StatusReasonBadRequest},
		{name: "bad label selector", method: "GET", path: "/api/v1/pods?labelSelector=a%20in%20(", wantCode: 400, wantReason: metav1.StatusReasonBadRequest},
		{name: "unsupported field selector", method: "GET", path: "/api/v1/pods?fieldSelector=spec.bogus%3Dx", wantCode: 400, wantReason: metav1.StatusReasonBadRequest,
			wantMessage: "field label not supported: spec.bogus"},
		{name: "bad resourceVersion", method: "GET", path: "/api/v1/pods?resourceVersion=abc", wantCode: 400, wantReason: metav1.StatusReasonBadRequest},
		{name: "bad continue", method: "GET", path: "/api/v1/pods?limit=1&continue=bm90LWpzb24", wantCode: 400, wantReason: metav1.StatusReasonBadRequest},
		{name: "method not allowed", method: "PUT", path: "/api/v1/namespaces/default/configmaps", contentType: "application/json", body: cm,
			wantCode: 405, wantReason: metav1.StatusReasonMethodNotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := raw(t, ts, tc.method, tc.path, tc.contentType, []byte(tc.body))
			if code != tc.wantCode {
				t.Fatalf("code %d, want %d: %.300s", code, tc.wantCode, body)
			}
			s := status(t, body)
			if s.Status != metav1.StatusFailure || int(s.Code) != tc.wantCode || s.Reason != tc.wantReason {
				t.Errorf("status = %s/%d/%s, want Failure/%d/%s (%s)", s.Status, s.Code, s.Reason, tc.wantCode, tc.wantReason, s.Message)
			}
			if tc.wantMessage != "" && !strings.Contains(s.Message, tc.wantMessage) {
				t.Errorf("message %q does not contain %q", s.Message, tc.wantMessage)
			}
			for _, f := range tc.wantCauses {
				found := false
				if s.Details != nil {
					for _, c := range s.Details.Causes {
						if c.Field == f {
							found = true
						}
					}
				}
				if !found {
					t.Errorf("causes do not name %s: %+v", f, s.Details)
				}
			}
		})
	}
	// Nothing half-valid was stored by any of those requests.
	code, body := raw(t, ts, http.MethodGet, "/api/v1/namespaces/default/configmaps/big", "", nil)
	if code != http.StatusNotFound {
		t.Errorf("the too-large configmap was stored: %d %s", code, body)
	}
}
