package serving

import (
	"context"
	"encoding/json"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// Upstream's delegated authorization defaults (k8s.io/apiserver's
// DelegatingAuthorizationOptions, used by kube-controller-manager and
// kube-scheduler): --authorization-webhook-cache-authorized-ttl and
// --authorization-webhook-cache-unauthorized-ttl.
const (
	DefaultAuthorizedTTL   = 10 * time.Second
	DefaultUnauthorizedTTL = 10 * time.Second
)

// reviewCacheSize is upstream's webhook authorizer's: the 8192 most
// recently used decisions.
const reviewCacheSize = 8192

// SubjectAccessReviewer asks the API server whether a user may do
// something through SubjectAccessReviews and remembers the answers, as
// upstream's delegated authorization (its webhook authorizer,
// k8s.io/apiserver/plugin/pkg/authorizer/webhook) does: an allowed
// decision for the authorized TTL, a denied one for the unauthorized TTL,
// keyed by the whole review spec (user, UID, groups, extra and the
// resource or non-resource attributes); an error is never remembered. A
// TTL of zero or less: that kind of decision is asked every time.
type SubjectAccessReviewer struct {
	client                         kubernetes.Interface
	authorizedTTL, unauthorizedTTL time.Duration
	cache                          *cache.LRUExpireCache
}

// NewSubjectAccessReviewer asks client's API server; clk is the cache's
// clock (nil: the real one).
func NewSubjectAccessReviewer(client kubernetes.Interface, authorizedTTL, unauthorizedTTL time.Duration, clk clock.PassiveClock) *SubjectAccessReviewer {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &SubjectAccessReviewer{client: client, authorizedTTL: authorizedTTL, unauthorizedTTL: unauthorizedTTL,
		cache: cache.NewLRUExpireCacheWithClock(reviewCacheSize, clk)}
}

// Review returns the status of a SubjectAccessReview of spec, from the
// cache when an equal spec was reviewed within its TTL.
func (a *SubjectAccessReviewer) Review(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
	// The key is the spec in JSON, as upstream's.
	raw, err := json.Marshal(spec)
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	key := string(raw)
	if st, ok := a.cache.Get(key); ok {
		return st.(authorizationv1.SubjectAccessReviewStatus), nil
	}
	review, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx,
		&authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	ttl := a.unauthorizedTTL
	if review.Status.Allowed {
		ttl = a.authorizedTTL
	}
	if ttl > 0 {
		a.cache.Add(key, review.Status, ttl)
	}
	return review.Status, nil
}

// Authorize reviews (user, groups, get path).
func (a *SubjectAccessReviewer) Authorize(ctx context.Context, user string, groups []string, path string) (bool, string, error) {
	st, err := a.Review(ctx, authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: groups,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: "get"},
	})
	if err != nil {
		return false, "", err
	}
	return st.Allowed && !st.Denied, st.Reason, nil
}
