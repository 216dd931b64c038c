package server

import (
	"context"
	"crypto/sha256"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"
)

// tokenCacheSize is upstream's token cache's: the 8192 most recently
// used tokens.
const tokenCacheSize = 8192

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
	return &CachingAuthenticator{next: next, ttl: ttl, cache: cache.NewLRUExpireCacheWithClock(tokenCacheSize, clk)}
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
