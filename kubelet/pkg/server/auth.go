package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"skiff.dev/component-base/serving"
)

// Authorizer decides whether a user may do what attrs say, as the API
// server's authorizer would (upstream's kubelet --authorization-mode
// Webhook).
type Authorizer interface {
	Authorize(ctx context.Context, user string, groups []string, attrs authorizationv1.ResourceAttributes) (allowed bool, reason string, err error)
}

// Upstream's kubelet defaults for its webhook authorizer's decision cache
// (--authorization-webhook-cache-authorized-ttl and
// --authorization-webhook-cache-unauthorized-ttl).
const (
	DefaultAuthorizedTTL   = 5 * time.Minute
	DefaultUnauthorizedTTL = 30 * time.Second
)

// SubjectAccessReviewer asks the API server with SubjectAccessReviews
// through component-base's reviewer, which remembers an allowed decision
// for the authorized TTL and a denied one for the unauthorized TTL, as
// upstream's webhook authorizer does (the controller manager's and the
// scheduler's /metrics use the same one with their own TTLs).
type SubjectAccessReviewer struct {
	reviews *serving.SubjectAccessReviewer
}

// NewSubjectAccessReviewer asks client's API server; clk is the cache's
// clock (nil: the real one). A TTL of zero or less: that kind of decision
// is asked every time.
func NewSubjectAccessReviewer(client kubernetes.Interface, authorizedTTL, unauthorizedTTL time.Duration, clk clock.PassiveClock) SubjectAccessReviewer {
	return SubjectAccessReviewer{reviews: serving.NewSubjectAccessReviewer(client, authorizedTTL, unauthorizedTTL, clk)}
}

// Authorize reviews (user, groups, attrs).
func (a SubjectAccessReviewer) Authorize(ctx context.Context, user string, groups []string, attrs authorizationv1.ResourceAttributes) (bool, string, error) {
	st, err := a.reviews.Review(ctx, authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &attrs})
	if err != nil {
		return false, "", err
	}
	return st.Allowed && !st.Denied, st.Reason, nil
}

// Authenticator tells who a bearer token belongs to, as the API server
// would (upstream's kubelet --authentication-token-webhook).
type Authenticator interface {
	AuthenticateToken(ctx context.Context, token string) (user string, groups []string, ok bool, err error)
}

// TokenReviewer asks the API server with a TokenReview.
type TokenReviewer struct {
	Client kubernetes.Interface
}

// AuthenticateToken creates a TokenReview of token.
func (a TokenReviewer) AuthenticateToken(ctx context.Context, token string) (string, []string, bool, error) {
	review, err := a.Client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", nil, false, err
	}
	if !review.Status.Authenticated {
		return "", nil, false, nil
	}
	return review.Status.User.Username, review.Status.User.Groups, true, nil
}

// bearerToken is the request's "Authorization: Bearer" token, if any.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// requestAttributes are the attributes upstream's kubelet authorizes a
// request of its API with: verb from the HTTP method, resource nodes of
// this node, and the subresource by path (stats, metrics, log, else
// proxy).
func requestAttributes(node string, r *http.Request) authorizationv1.ResourceAttributes {
	verb := "get"
	switch r.Method {
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	}
	sub := "proxy"
	for prefix, s := range map[string]string{"/stats": "stats", "/metrics": "metrics", "/logs": "log", "/checkpoint": "checkpoint"} {
		if r.URL.Path == prefix || strings.HasPrefix(r.URL.Path, prefix+"/") {
			sub = s
		}
	}
	return authorizationv1.ResourceAttributes{Verb: verb, Version: "v1", Resource: "nodes", Subresource: sub, Name: node}
}
