package server

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"net/http/httptest"
	"testing"
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
