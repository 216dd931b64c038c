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
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestCachingAuthorizer: an allowed decision is remembered for the
// authorized TTL and a denied one for the unauthorized TTL, per user,
// groups and attributes; an error is not remembered; a TTL of 0 asks every
// time.
func TestCachingAuthorizer(t *testing.T) {
	ctx := context.Background()
	metrics := authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "metrics", Name: "n1"}
	stats := metrics
	stats.Subresource = "stats"
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	next := &fakeAuthorizer{user: "prometheus", allow: map[authorizationv1.ResourceAttributes]bool{metrics: true}}
	c := NewCachingAuthorizer(next, 5*time.Minute, 30*time.Second, clk)
	ask := func(user string, groups []string, attrs authorizationv1.ResourceAttributes, wantAllowed bool, wantAsked int) {
		t.Helper()
		allowed, reason, err := c.Authorize(ctx, user, groups, attrs)
		if err != nil || allowed != wantAllowed {
			t.Fatalf("%s %v %s: allowed %v, %v; want %v", user, groups, attrs.Subresource, allowed, err, wantAllowed)
		}
		if !allowed && reason != "no RBAC rule" {
			t.Errorf("a denied decision's reason %q, want the reviewer's", reason)
		}
		if len(next.asked) != wantAsked {
			t.Fatalf("%s %v %s: the reviewer was asked %d times, want %d", user, groups, attrs.Subresource, len(next.asked), wantAsked)
		}
	}

	ask("prometheus", nil, metrics, true, 1)
	ask("prometheus", nil, metrics, true, 1) // remembered
	ask("prometheus", []string{"g"}, metrics, true, 2)
	ask("prometheus", nil, stats, false, 3)
	ask("eve", nil, metrics, false, 4)
	ask("prometheus", nil, stats, false, 4) // a denial, remembered
	ask("eve", nil, metrics, false, 4)

	clk.Step(30*time.Second + time.Millisecond) // the denials expire
	ask("eve", nil, metrics, false, 5)
	ask("prometheus", nil, stats, false, 6)
	ask("prometheus", nil, metrics, true, 6) // the allowed decision stays
	clk.Step(4*time.Minute + 30*time.Second)
	ask("prometheus", nil, metrics, true, 7) // now past 5 minutes
	ask("prometheus", nil, metrics, true, 7)

	// An error is the caller's to see, and asked again next time.
	next.err = errors.New("API server unreachable")
	if _, _, err := c.Authorize(ctx, "bob", nil, metrics); err == nil {
		t.Fatal("the reviewer's error was not returned")
	}
	next.err = nil
	ask("bob", nil, metrics, false, 9)

	// TTLs of 0: nothing remembered.
	next.asked = nil
	c = NewCachingAuthorizer(next, 0, 0, clk)
	ask("prometheus", nil, metrics, true, 1)
	ask("prometheus", nil, metrics, true, 2)
	ask("eve", nil, metrics, false, 3)
	ask("eve", nil, metrics, false, 4)
}

// TestScrapesAskOnce: a scraper's repeated GET /metrics/resource makes one
// SubjectAccessReview while the decision is cached.
func TestScrapesAskOnce(t *testing.T) {
	metrics := authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "metrics", Name: "n1"}
	next := &fakeAuthorizer{user: "prometheus", allow: map[authorizationv1.ResourceAttributes]bool{metrics: true}}
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	h := New(Options{NodeName: "n1", Authorizer: NewCachingAuthorizer(next, DefaultAuthorizedTTL, DefaultUnauthorizedTTL, clk)}).authorized(teapot("ok"))
	for i := 0; i < 10; i++ {
		r := httptest.NewRequest(http.MethodGet, "/metrics/resource", nil)
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: "prometheus"}}}}}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusTeapot {
			t.Fatalf("scrape %d: %d %s", i, w.Code, w.Body.String())
		}
		clk.Step(15 * time.Second)
	}
	if len(next.asked) != 1 {
		t.Errorf("10 scrapes 15s apart asked %d times, want 1", len(next.asked))
	}
}
