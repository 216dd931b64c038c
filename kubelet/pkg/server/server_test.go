package server

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAuthorized(t *testing.T) {
	ok := New(Options{}).authorized(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	chain := func(cn string, orgs ...string) *tls.ConnectionState {
		return &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: cn, Organization: orgs}}}}}
	}
	for _, tc := range []struct {
		name string
		tls  *tls.ConnectionState
		want int
	}{
		{"no TLS", nil, http.StatusUnauthorized},
		{"no verified certificate", &tls.ConnectionState{}, http.StatusUnauthorized},
		{"the API server's kubelet client", chain(APIServerKubeletClientCN), http.StatusTeapot},
		{"a cluster admin", chain("admin", MastersGroup), http.StatusTeapot},
		{"a node", chain("system:node:n1", "system:nodes"), http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/containerLogs/a/b/c", nil)
			r.TLS = tc.tls
			w := httptest.NewRecorder()
			ok.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Errorf("code %d, want %d", w.Code, tc.want)
			}
		})
	}
}

func TestParseLogQuery(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		query   string
		check   func(logQuery) bool
		wantErr bool
	}{
		{query: "", check: func(q logQuery) bool { return q.opts.TailLines == -1 && !q.opts.Follow && q.opts.Since.IsZero() }},
		{query: "tailLines=3&timestamps=true&limitBytes=10", check: func(q logQuery) bool {
			return q.opts.TailLines == 3 && q.opts.Timestamps && q.opts.LimitBytes == 10
		}},
		{query: "sinceSeconds=60", check: func(q logQuery) bool { return q.opts.Since.Equal(now.Add(-time.Minute)) }},
		{query: "sinceTime=2025-12-31T23:00:00Z", check: func(q logQuery) bool { return q.opts.Since.Equal(now.Add(-time.Hour)) }},
		{query: "previous=true&follow=true", check: func(q logQuery) bool { return q.previous && !q.opts.Follow }},
		{query: "tailLines=-1", wantErr: true},
		{query: "tailLines=x", wantErr: true},
		{query: "limitBytes=0", wantErr: true},
		{query: "follow=maybe", wantErr: true},
		{query: "sinceTime=yesterday", wantErr: true},
		{query: "sinceSeconds=5&sinceTime=2025-12-31T23:00:00Z", wantErr: true},
	} {
		t.Run(tc.query, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			got, err := parseLogQuery(q, now)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && !tc.check(got) {
				t.Errorf("parsed %+v", got)
			}
		})
	}
}

func TestParseExecQuery(t *testing.T) {
	for _, tc := range []struct {
		query   string
		wantErr bool
	}{
		{"command=echo&command=hi&stdout=true", false},
		{"command=sh&stdin=1&tty=true&stdout=true", false},
		{"stdout=true", true},
		{"command=echo", true},
		{"command=sh&tty=true&stdout=true&stderr=true", true},
	} {
		t.Run(tc.query, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/exec/a/b/c?"+tc.query, nil)
			if _, err := parseExecQuery(r); (err != nil) != tc.wantErr {
				t.Errorf("err = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
}

func TestExecStatus(t *testing.T) {
	st := execStatus([]string{"sh"}, 3, nil)
	b, _ := json.Marshal(st)
	var back metav1.Status
	_ = json.Unmarshal(b, &back)
	if back.Status != metav1.StatusFailure || back.Reason != "NonZeroExitCode" || back.Details == nil ||
		len(back.Details.Causes) != 1 || back.Details.Causes[0].Type != "ExitCode" || back.Details.Causes[0].Message != "3" {
		t.Errorf("non-zero exit status = %s", b)
	}
	if st := execStatus(nil, 0, nil); st.Status != metav1.StatusSuccess {
		t.Errorf("exit 0 status = %+v", st)
	}
}

func TestParsePorts(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  int
	}{{"port=80", 1}, {"port=80,443", 2}, {"port=80&port=81", 2}, {"", 0}, {"port=0", 0}, {"port=x", 0}, {"port=70000", 0}} {
		r := httptest.NewRequest(http.MethodGet, "/portForward/a/b?"+tc.query, nil)
		ports, err := parsePorts(r)
		if len(ports) != tc.want || (tc.want == 0) != (err != nil) {
			t.Errorf("%q: ports %v err %v", tc.query, ports, err)
		}
	}
}
