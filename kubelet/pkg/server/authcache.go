package server

import (
	"context"
	"encoding/json"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"
)

// Upstream's kubelet defaults for its webhook authorizer's decision cache
// (--authorization-webhook-cache-authorized-ttl and
// --authorization-webhook-cache-unauthorized-ttl).
const (
	DefaultAuthorizedTTL   = 5 * time.Minute
	DefaultUnauthorizedTTL = 30 * time.Second
)

// authzCacheSize is upstream's webhook authorizer's: the 8192 most
// recently used decisions.
const authzCacheSize = 8192

// CachingAuthorizer remembers the decisions of another Authorizer, as
// upstream's webhook authorizer (k8s.io/apiserver/plugin/pkg/authorizer/
// webhook) does in front of its SubjectAccessReviews: an allowed decision
// for AuthorizedTTL, a denied one for UnauthorizedTTL, keyed by the whole
// review (user, groups and attributes); an error is never remembered. A
// TTL of zero or less: that kind of decision is asked every time.
type CachingAuthorizer struct {
	next                           Authorizer
	authorizedTTL, unauthorizedTTL time.Duration
	cache                          *cache.LRUExpireCache
}

type decision struct {
	allowed bool
	reason  string
}

// NewCachingAuthorizer caches next's decisions; clk is the cache's clock
// (nil: the real one).
func NewCachingAuthorizer(next Authorizer, authorizedTTL, unauthorizedTTL time.Duration, clk clock.PassiveClock) *CachingAuthorizer {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &CachingAuthorizer{next: next, authorizedTTL: authorizedTTL, unauthorizedTTL: unauthorizedTTL,
		cache: cache.NewLRUExpireCacheWithClock(authzCacheSize, clk)}
}

// Authorize answers from the cache, else asks the next Authorizer and
// remembers its decision.
func (c *CachingAuthorizer) Authorize(ctx context.Context, user string, groups []string, attrs authorizationv1.ResourceAttributes) (bool, string, error) {
	// The key is the review's spec in JSON, as upstream's.
	key, err := json.Marshal(authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &attrs})
	if err != nil {
		return c.next.Authorize(ctx, user, groups, attrs)
	}
	if d, ok := c.cache.Get(string(key)); ok {
		d := d.(decision)
		return d.allowed, d.reason, nil
	}
	allowed, reason, err := c.next.Authorize(ctx, user, groups, attrs)
	if err != nil {
		return false, "", err
	}
	ttl := c.unauthorizedTTL
	if allowed {
		ttl = c.authorizedTTL
	}
	if ttl > 0 {
		c.cache.Add(string(key), decision{allowed: allowed, reason: reason}, ttl)
	}
	return allowed, reason, nil
}
