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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// reviewClient is a fake clientset whose SubjectAccessReviews allow user
// the attributes in allow (denied otherwise, with reason "no RBAC rule"),
// fail with *err when set, and are counted in *asked.
func reviewClient(user string, allow map[authorizationv1.ResourceAttributes]bool, asked *int, err *error) *fake.Clientset {
	c := fake.NewClientset()
	c.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		*asked++
		if *err != nil {
			return true, nil, *err
		}
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		if sar.Spec.User == user && sar.Spec.ResourceAttributes != nil && allow[*sar.Spec.ResourceAttributes] {
			sar.Status.Allowed = true
		} else {
			sar.Status.Reason = "no RBAC rule"
		}
		return true, sar, nil
	})
	return c
}

// TestSubjectAccessReviewerCaches: with the kubelet's TTLs, an allowed
// decision is remembered for 5 minutes and a denied one for 30 s, per
// user, groups and attributes; an error is not remembered; a TTL of 0
// asks every time.
func TestSubjectAccessReviewerCaches(t *testing.T) {
	ctx := context.Background()
	metrics := authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "metrics", Name: "n1"}
	stats := metrics
	stats.Subresource = "stats"
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	var asked int
	var fail error
	client := reviewClient("prometheus", map[authorizationv1.ResourceAttributes]bool{metrics: true}, &asked, &fail)
	c := NewSubjectAccessReviewer(client, DefaultAuthorizedTTL, DefaultUnauthorizedTTL, clk)
	ask := func(user string, groups []string, attrs authorizationv1.ResourceAttributes, wantAllowed bool, wantAsked int) {
		t.Helper()
		allowed, reason, err := c.Authorize(ctx, user, groups, attrs)
		if err != nil || allowed != wantAllowed {
			t.Fatalf("%s %v %s: allowed %v, %v; want %v", user, groups, attrs.Subresource, allowed, err, wantAllowed)
		}
		if !allowed && reason != "no RBAC rule" {
			t.Errorf("a denied decision's reason %q, want the reviewer's", reason)
		}
		if asked != wantAsked {
			t.Fatalf("%s %v %s: the API server was asked %d times, want %d", user, groups, attrs.Subresource, asked, wantAsked)
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
	fail = errors.New("API server unreachable")
	if _, _, err := c.Authorize(ctx, "bob", nil, metrics); err == nil {
		t.Fatal("the API server's error was not returned")
	}
	fail = nil
	ask("bob", nil, metrics, false, 9)

	// TTLs of 0: nothing remembered.
	asked = 0
	c = NewSubjectAccessReviewer(client, 0, 0, clk)
	ask("prometheus", nil, metrics, true, 1)
	ask("prometheus", nil, metrics, true, 2)
	ask("eve", nil, metrics, false, 3)
	ask("eve", nil, metrics, false, 4)
}

// TestScrapesAskOnce: a scraper's repeated GET /metrics/resource makes one
// SubjectAccessReview while the decision is cached.
func TestScrapesAskOnce(t *testing.T) {
	metrics := authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "metrics", Name: "n1"}
	var asked int
	var fail error
	client := reviewClient("prometheus", map[authorizationv1.ResourceAttributes]bool{metrics: true}, &asked, &fail)
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	h := New(Options{NodeName: "n1", Authorizer: NewSubjectAccessReviewer(client, DefaultAuthorizedTTL, DefaultUnauthorizedTTL, clk)}).authorized(teapot("ok"))
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
	if asked != 1 {
		t.Errorf("10 scrapes 15s apart asked %d times, want 1", asked)
	}
}

// fakeAuthenticator knows the tokens in users, and counts what it was
// asked.
type fakeAuthenticator struct {
	users map[string]string
	err   error
	asked int
}

func (f *fakeAuthenticator) AuthenticateToken(_ context.Context, token string) (string, []string, bool, error) {
	f.asked++
	if f.err != nil {
		return "", nil, false, f.err
	}
	user, ok := f.users[token]
	return user, []string{"system:serviceaccounts"}, ok, nil
}

// TestCachingAuthenticator: a token's answer, known or not, is remembered
// for the TTL; an error is not; a TTL of 0 asks every time.
func TestCachingAuthenticator(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	next := &fakeAuthenticator{users: map[string]string{"good": "system:serviceaccount:monitoring:prometheus"}}
	c := NewCachingAuthenticator(next, 2*time.Minute, clk)
	check := func(token string, wantOK bool, wantAsked int) {
		t.Helper()
		user, groups, ok, err := c.AuthenticateToken(ctx, token)
		if err != nil || ok != wantOK || (ok && (user != next.users[token] || len(groups) != 1)) {
			t.Fatalf("token %q: %q %v %v %v, want ok %v", token, user, groups, ok, err, wantOK)
		}
		if next.asked != wantAsked {
			t.Fatalf("token %q: the reviewer was asked %d times, want %d", token, next.asked, wantAsked)
		}
	}
	check("good", true, 1)
	check("good", true, 1)
	check("bad", false, 2)
	check("bad", false, 2)
	clk.Step(2*time.Minute + time.Millisecond)
	check("good", true, 3)
	check("bad", false, 4)

	next.err = errors.New("API server unreachable")
	if _, _, _, err := c.AuthenticateToken(ctx, "other"); err == nil {
		t.Fatal("the reviewer's error was not returned")
	}
	next.err = nil
	check("other", false, 6)

	c = NewCachingAuthenticator(next, 0, clk)
	check("good", true, 7)
	check("good", true, 8)
}

// TestBearerTokens: without a client certificate, a bearer token the
// Authenticator knows is authorized as its user; an unknown token is 401,
// an error 500, no token 401; with no Authenticator a token is not looked
// at.
func TestBearerTokens(t *testing.T) {
	metrics := authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "metrics", Name: "n1"}
	sa := "system:serviceaccount:monitoring:prometheus"
	for _, tc := range []struct {
		name, header string
		authn        bool
		authnErr     error
		want         int
	}{
		{"known token", "Bearer good", true, nil, http.StatusTeapot},
		{"lower-case scheme", "bearer good", true, nil, http.StatusTeapot},
		{"unknown token", "Bearer bad", true, nil, http.StatusUnauthorized},
		{"the reviewer fails", "Bearer good", true, errors.New("API server unreachable"), http.StatusInternalServerError},
		{"no token", "", true, nil, http.StatusUnauthorized},
		{"basic auth", "Basic Z29vZA==", true, nil, http.StatusUnauthorized},
		{"no authenticator", "Bearer good", false, nil, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			authz := &fakeAuthorizer{user: sa, allow: map[authorizationv1.ResourceAttributes]bool{metrics: true}}
			o := Options{NodeName: "n1", Authorizer: authz}
			if tc.authn {
				o.Authenticator = &fakeAuthenticator{users: map[string]string{"good": sa}, err: tc.authnErr}
			}
			h := New(o).authorized(teapot("ok"))
			r := httptest.NewRequest(http.MethodGet, "/metrics/resource", nil)
			r.TLS = &tls.ConnectionState{}
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Errorf("code %d (%s), want %d", w.Code, w.Body.String(), tc.want)
			}
			if wantAsked := tc.want == http.StatusTeapot; (len(authz.asked) == 1) != wantAsked {
				t.Errorf("the authorizer was asked %v", authz.asked)
			}
		})
	}
}
