package authn

import (
	"context"
	"crypto/subtle"
	"crypto/x509"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// User is who made a request.
type User struct {
	Name   string
	UID    string
	Groups []string
	// Extra is what the authenticator adds (a service account token's
	// credential ID and the pod and node it is bound to).
	Extra map[string][]string
}

type userKey struct{}

// WithUser stores u in ctx.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the request's user, if any.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey{}).(*User)
	return u, ok
}

// ErrUnauthorized: credentials were presented and rejected, or none were.
var ErrUnauthorized = errors.New("Unauthorized")

type tokenEntry struct {
	token string
	user  User
}

// ErrTokenNotRecognized: a token authenticator does not know this kind of
// token, and the next one may.
var ErrTokenNotRecognized = errors.New("token not recognized")

// TokenAuthenticator checks a bearer token (service account tokens).
type TokenAuthenticator func(ctx context.Context, token string) (*User, error)

// Authenticator checks client certificates and bearer tokens.
type Authenticator struct {
	// ClientCAs verify client certificates (the TLS layer asks for them).
	ClientCAs *x509.CertPool
	tokens    []tokenEntry
	// Tokens are asked, in order, about bearer tokens not in the token file.
	Tokens []TokenAuthenticator
	// RequestHeader, when set, accepts front-proxy requests.
	RequestHeader *RequestHeader
	// Anonymous makes a request without credentials the user
	// system:anonymous in system:unauthenticated (upstream's
	// --anonymous-auth), left to the authorizer; else it is refused.
	Anonymous bool
	// verified remembers certificates already verified, so a client's
	// every request does not pay for a signature check (upstream's
	// verify-options cache does the same).
	verified certCache
}

// certCache maps a certificate (all its bytes, not just the signature, so a
// forged certificate reusing a signature never hits) to the time its verification
// stops being valid. It is bounded; when full it starts over.
type certCache struct {
	mu      sync.Mutex
	entries map[string]time.Time
}

const certCacheSize = 4096

func (c *certCache) ok(cert *x509.Certificate, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, found := c.entries[string(cert.Raw)]
	return found && now.Before(until)
}

func (c *certCache) add(cert *x509.Certificate, chains [][]*x509.Certificate, now time.Time) {
	// Valid until the first certificate of the chain expires, and re-checked
	// at least every five minutes.
	until := now.Add(5 * time.Minute)
	for _, chain := range chains {
		for _, crt := range chain {
			if crt.NotAfter.Before(until) {
				until = crt.NotAfter
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= certCacheSize {
		c.entries = map[string]time.Time{}
	}
	c.entries[string(cert.Raw)] = until
}

// LoadTokenFile reads upstream's static token file format.
func LoadTokenFile(path string) ([]tokenEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseTokens(f)
}

func parseTokens(r io.Reader) ([]tokenEntry, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	var out []tokenEntry
	line := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		line++
		if err != nil {
			return nil, fmt.Errorf("token file: %w", err)
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("token file line %d: want token,user,uid[,\"groups\"], got %d fields", line, len(rec))
		}
		if rec[0] == "" || rec[1] == "" {
			return nil, fmt.Errorf("token file line %d: token and user must not be empty", line)
		}
		u := User{Name: rec[1], UID: rec[2]}
		if len(rec) >= 4 && rec[3] != "" {
			for _, g := range strings.Split(rec[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		out = append(out, tokenEntry{token: rec[0], user: u})
	}
}

// New builds an Authenticator. tokenFile may be empty.
func New(clientCAs *x509.CertPool, tokenFile string) (*Authenticator, error) {
	a := &Authenticator{ClientCAs: clientCAs}
	if tokenFile != "" {
		t, err := LoadTokenFile(tokenFile)
		if err != nil {
			return nil, err
		}
		a.tokens = t
	}
	return a, nil
}

// Authenticate returns the user of r, ErrUnauthorized when the credentials
// are bad, or (nil, nil) when there are none.
func (a *Authenticator) Authenticate(r *http.Request) (*User, error) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 && a.RequestHeader != nil {
		if proxy, err := a.RequestHeader.verify(r.TLS.PeerCertificates); err != nil {
			return nil, err
		} else if proxy {
			return a.RequestHeader.user(r.Header)
		}
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		cert := r.TLS.PeerCertificates[0]
		opts := x509.VerifyOptions{
			Roots:         a.ClientCAs,
			Intermediates: x509.NewCertPool(),
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		for _, c := range r.TLS.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		if a.ClientCAs == nil {
			return nil, fmt.Errorf("%w: client certificates are not accepted", ErrUnauthorized)
		}
		now := time.Now()
		if !a.verified.ok(cert, now) {
			opts.CurrentTime = now
			chains, err := cert.Verify(opts)
			if err != nil {
				return nil, fmt.Errorf("%w: verifying certificate: %v", ErrUnauthorized, err)
			}
			a.verified.add(cert, chains, now)
		}
		if cert.Subject.CommonName == "" {
			return nil, fmt.Errorf("%w: certificate has no common name", ErrUnauthorized)
		}
		return withAuthenticated(&User{Name: cert.Subject.CommonName, Groups: append([]string(nil), cert.Subject.Organization...)}), nil
	}
	if h := r.Header.Get("Authorization"); h != "" {
		parts := strings.SplitN(h, " ", 2)
		if len(parts) != 2 || !strings.EqualFold(parts[0], "bearer") {
			return nil, fmt.Errorf("%w: unsupported authorization scheme", ErrUnauthorized)
		}
		return a.AuthenticateToken(r.Context(), strings.TrimSpace(parts[1]))
	}
	if a.Anonymous {
		return &User{Name: AnonymousUser, Groups: []string{UnauthenticatedGroup}}, nil
	}
	return nil, nil
}

// The anonymous user and its group, as upstream names them.
const (
	AnonymousUser        = "system:anonymous"
	UnauthenticatedGroup = "system:unauthenticated"
)

// AuthenticateToken checks a bearer token against the token file and the
// token authenticators (TokenReview asks this too).
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*User, error) {
	for _, t := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(t.token), []byte(token)) == 1 {
			u := t.user
			u.Groups = append([]string(nil), u.Groups...)
			return withAuthenticated(&u), nil
		}
	}
	for _, ta := range a.Tokens {
		u, err := ta(ctx, token)
		if errors.Is(err, ErrTokenNotRecognized) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnauthorized, err)
		}
		return withAuthenticated(u), nil
	}
	return nil, fmt.Errorf("%w: invalid bearer token", ErrUnauthorized)
}

func withAuthenticated(u *User) *User {
	for _, g := range u.Groups {
		if g == "system:authenticated" {
			return u
		}
	}
	u.Groups = append(u.Groups, "system:authenticated")
	return u
}
