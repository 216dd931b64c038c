package server

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"net/http/httptest"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
)

type fakeStats struct{}

func teapot(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(name))
	})
}

func (fakeStats) SummaryHandler() http.Handler         { return teapot("summary") }
func (fakeStats) ResourceMetricsHandler() http.Handler { return teapot("resource") }
func (fakeStats) CadvisorMetricsHandler() http.Handler { return teapot("cadvisor") }

// TestStatsRoutes: the stats endpoints are behind the same authentication
// and authorization as the rest of the API.
func TestStatsRoutes(t *testing.T) {
	mux := http.NewServeMux()
	New(Options{Stats: fakeStats{}}).Register(mux)
	admin := &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: APIServerKubeletClientCN}}}}}
	node := &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}}}}}
	for _, tc := range []struct {
		path     string
		tls      *tls.ConnectionState
		want     int
		wantBody string
	}{
		{"/stats/summary", admin, http.StatusTeapot, "summary"},
		{"/metrics/resource", admin, http.StatusTeapot, "resource"},
		{"/metrics/cadvisor", admin, http.StatusTeapot, "cadvisor"},
		{"/metrics/resource", nil, http.StatusUnauthorized, ""},
		{"/stats/summary", node, http.StatusForbidden, ""},
	} {
		r := httptest.NewRequest(http.MethodGet, tc.path, nil)
		r.TLS = tc.tls
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != tc.want || (tc.wantBody != "" && w.Body.String() != tc.wantBody) {
			t.Errorf("%s: code %d body %q, want %d %q", tc.path, w.Code, w.Body.String(), tc.want, tc.wantBody)
		}
	}
}

// TestMetricsRoute: the kubelet's own /metrics is nodes/metrics, as
// upstream's: 401 without a client certificate, 403 for a user the
// authorizer refuses, served to one it allows and to the API server.
func TestMetricsRoute(t *testing.T) {
	metrics := authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "metrics", Name: "n1"}
	authz := &fakeAuthorizer{user: "prometheus", allow: map[authorizationv1.ResourceAttributes]bool{metrics: true}}
	mux := http.NewServeMux()
	New(Options{NodeName: "n1", Authorizer: authz, Metrics: teapot("kubelet_running_pods 1")}).Register(mux)
	user := func(cn string) *tls.ConnectionState {
		return &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: cn}}}}}
	}
	for _, tc := range []struct {
		name   string
		method string
		tls    *tls.ConnectionState
		want   int
	}{
		{"no client certificate", http.MethodGet, nil, http.StatusUnauthorized},
		{"a user the authorizer refuses", http.MethodGet, user("eve"), http.StatusForbidden},
		{"a user the authorizer allows", http.MethodGet, user("prometheus"), http.StatusTeapot},
		{"the API server", http.MethodGet, user(APIServerKubeletClientCN), http.StatusTeapot},
		{"not a GET", http.MethodPost, user("prometheus"), http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			authz.asked = nil
			r := httptest.NewRequest(tc.method, "/metrics", nil)
			r.TLS = tc.tls
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("code %d (%s), want %d", w.Code, w.Body.String(), tc.want)
			}
			if w.Code == http.StatusTeapot && w.Body.String() != "kubelet_running_pods 1" {
				t.Errorf("body %q, want the metrics handler's", w.Body.String())
			}
			if w.Code == http.StatusForbidden && (len(authz.asked) != 1 || authz.asked[0] != metrics) {
				t.Errorf("asked %+v, want %+v", authz.asked, metrics)
			}
		})
	}
}
