package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"slices"
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
// recently used decisions (and as many tokens).
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

// DefaultTokenTTL is upstream's kubelet default for its token webhook's
// cache (--authentication-token-webhook-cache-ttl).
const DefaultTokenTTL = 2 * time.Minute

// CachingAuthenticator remembers another Authenticator's answers for TTL,
// a token it knows and one it does not alike, as upstream's kubelet caches
// its TokenReviews (k8s.io/apiserver's token cache with the same TTL for
// both); an error is never remembered. The cache is keyed by the token's
// SHA-256, so that no token is kept. A TTL of zero or less: asked every
// time.
type CachingAuthenticator struct {
	next  Authenticator
	ttl   time.Duration
	cache *cache.LRUExpireCache
}

type identity struct {
	user   string
	groups []string
	ok     bool
}

// NewCachingAuthenticator caches next's answers; clk is the cache's clock
// (nil: the real one).
func NewCachingAuthenticator(next Authenticator, ttl time.Duration, clk clock.PassiveClock) *CachingAuthenticator {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &CachingAuthenticator{next: next, ttl: ttl, cache: cache.NewLRUExpireCacheWithClock(authzCacheSize, clk)}
}

// AuthenticateToken answers from the cache, else asks the next
// Authenticator and remembers its answer.
func (c *CachingAuthenticator) AuthenticateToken(ctx context.Context, token string) (string, []string, bool, error) {
	key := sha256.Sum256([]byte(token))
	if id, ok := c.cache.Get(key); ok {
		id := id.(identity)
		return id.user, slices.Clone(id.groups), id.ok, nil
	}
	user, groups, ok, err := c.next.AuthenticateToken(ctx, token)
	if err != nil {
		return "", nil, false, err
	}
	if c.ttl > 0 {
		c.cache.Add(key, identity{user: user, groups: slices.Clone(groups), ok: ok}, c.ttl)
	}
	return user, groups, ok, nil
}
