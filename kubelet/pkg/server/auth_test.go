package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// fakeAuthorizer allows user the attributes in allow, and records what it
// was asked.
type fakeAuthorizer struct {
	user  string
	allow map[authorizationv1.ResourceAttributes]bool
	err   error
	asked []authorizationv1.ResourceAttributes
}

func (f *fakeAuthorizer) Authorize(_ context.Context, user string, _ []string, attrs authorizationv1.ResourceAttributes) (bool, string, error) {
	f.asked = append(f.asked, attrs)
	if f.err != nil {
		return false, "", f.err
	}
	return user == f.user && f.allow[attrs], "no RBAC rule", nil
}

// TestAuthorizerDecides: a client that is neither the API server nor an
// admin gets what a SubjectAccessReview on nodes/<subresource> of this
// node allows it, as upstream's kubelet with --authorization-mode Webhook.
func TestAuthorizerDecides(t *testing.T) {
	metrics := authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "metrics", Name: "n1"}
	for _, tc := range []struct {
		name, method, path, user string
		err                      error
		want                     int
		wantAsked                authorizationv1.ResourceAttributes
	}{
		{"metrics allowed", http.MethodGet, "/metrics/cadvisor", "prometheus", nil, http.StatusTeapot, metrics},
		{"metrics of another user", http.MethodGet, "/metrics/resource", "eve", nil, http.StatusForbidden, metrics},
		{"stats not allowed", http.MethodGet, "/stats/summary", "prometheus", nil, http.StatusForbidden,
			authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "stats", Name: "n1"}},
		{"exec is nodes/proxy create", http.MethodPost, "/exec/ns/p/c", "prometheus", nil, http.StatusForbidden,
			authorizationv1.ResourceAttributes{Verb: "create", Version: "v1", Resource: "nodes", Subresource: "proxy", Name: "n1"}},
		{"the authorizer fails", http.MethodGet, "/metrics/cadvisor", "prometheus", errors.New("API server unreachable"), http.StatusInternalServerError, metrics},
	} {
		t.Run(tc.name, func(t *testing.T) {
			authz := &fakeAuthorizer{user: "prometheus", allow: map[authorizationv1.ResourceAttributes]bool{metrics: true}, err: tc.err}
			h := New(Options{NodeName: "n1", Authorizer: authz}).authorized(teapot("ok"))
			r := httptest.NewRequest(tc.method, tc.path, nil)
			r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: tc.user}}}}}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Errorf("code %d (%s), want %d", w.Code, w.Body.String(), tc.want)
			}
			if len(authz.asked) != 1 || authz.asked[0] != tc.wantAsked {
				t.Errorf("asked %+v, want %+v", authz.asked, tc.wantAsked)
			}
		})
	}
}
