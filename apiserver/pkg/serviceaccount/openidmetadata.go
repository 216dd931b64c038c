package serviceaccount

import (
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
)

// The paths of service account issuer discovery, as upstream serves them
// (https://openid.net/specs/openid-connect-discovery-1_0.html).
const (
	OpenIDConfigPath = "/.well-known/openid-configuration"
	JWKSPath         = "/openid/v1/jwks"
)

// JWK is one RSA public key of a JSON Web Key Set (RFC 7517), with the
// fields upstream serves, in go-jose's order.
type JWK struct {
	Use string `json:"use"`
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// JWKS is a JSON Web Key Set.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// openIDMetadata is upstream's subset of OIDC provider metadata.
type openIDMetadata struct {
	Issuer        string   `json:"issuer"`
	JWKSURI       string   `json:"jwks_uri"`
	ResponseTypes []string `json:"response_types_supported"`
	SubjectTypes  []string `json:"subject_types_supported"`
	SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
}

// OpenIDMetadata holds the two rendered discovery documents.
type OpenIDMetadata struct {
	ConfigJSON []byte
	KeysetJSON []byte
}

// NewOpenIDMetadata renders the discovery documents for issuer and the keys
// that verify its tokens. jwksURI defaults, as upstream's, to
// https://<externalAddress>/openid/v1/jwks. As upstream, it refuses an
// issuer that OIDC does not allow (not https, or with a query or fragment).
func NewOpenIDMetadata(issuer, jwksURI, externalAddress string, keys []*rsa.PublicKey) (*OpenIDMetadata, error) {
	if issuer == "" {
		return nil, errors.New("empty issuer URL")
	}
	if len(keys) == 0 {
		return nil, errors.New("no keys provided for validating keyset")
	}
	iss, err := url.Parse(issuer)
	if err != nil {
		return nil, err
	}
	switch {
	case iss.Scheme != "https":
		return nil, fmt.Errorf("issuer URL must use https scheme, got: %s", issuer)
	case iss.RawQuery != "":
		return nil, fmt.Errorf("issuer URL may not include a query, got: %s", issuer)
	case iss.Fragment != "":
		return nil, fmt.Errorf("issuer URL may not include a fragment, got: %s", issuer)
	}
	if jwksURI == "" {
		if externalAddress == "" {
			return nil, errors.New("either the JWKS URI or the external address must be set")
		}
		u := &url.URL{Scheme: "https", Host: externalAddress, Path: JWKSPath}
		parsed, err := url.Parse(u.String())
		if err != nil || parsed.Host != u.Host || parsed.Path != u.Path {
			return nil, fmt.Errorf("attempted to build jwks_uri from external address %s, but could not construct a valid URL", externalAddress)
		}
		jwksURI = u.String()
	} else if u, err := url.Parse(jwksURI); err != nil {
		return nil, err
	} else if u.Scheme != "https" {
		return nil, fmt.Errorf("jwksURI requires https scheme, parsed as: %v", u.String())
	}
	set := JWKS{Keys: []JWK{}}
	for i, k := range keys {
		jwk, err := PublicJWK(k)
		if err != nil {
			return nil, fmt.Errorf("error constructing JWK for key #%d: %w", i, err)
		}
		set.Keys = append(set.Keys, jwk)
	}
	config, err := json.Marshal(openIDMetadata{
		Issuer: issuer, JWKSURI: jwksURI,
		ResponseTypes: []string{"id_token"}, // Kubernetes only produces ID tokens
		SubjectTypes:  []string{"public"},
		SigningAlgs:   []string{"RS256"}, // every key is RSA, signing RS256
	})
	if err != nil {
		return nil, err
	}
	keyset, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	return &OpenIDMetadata{ConfigJSON: config, KeysetJSON: keyset}, nil
}

// PublicJWK is pub as a signing JWK, its kid the one tokens signed by its
// private key carry.
func PublicJWK(pub *rsa.PublicKey) (JWK, error) {
	if pub == nil || pub.N == nil || pub.E <= 0 {
		return JWK{}, errors.New("not a valid RSA public key")
	}
	kid, err := keyID(pub)
	if err != nil {
		return JWK{}, err
	}
	return JWK{
		Use: "sig", Kty: "RSA", Kid: kid, Alg: "RS256",
		N: base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}, nil
}

// Key is the RSA public key of a JWK: how a relying party reads the set.
func (j JWK) Key() (*rsa.PublicKey, error) {
	if j.Kty != "RSA" {
		return nil, fmt.Errorf("kty %q, want RSA", j.Kty)
	}
	n, err := base64.RawURLEncoding.DecodeString(j.N)
	if err != nil {
		return nil, fmt.Errorf("n: %w", err)
	}
	e, err := base64.RawURLEncoding.DecodeString(j.E)
	if err != nil {
		return nil, fmt.Errorf("e: %w", err)
	}
	exp := new(big.Int).SetBytes(e)
	if len(n) == 0 || !exp.IsInt64() || exp.Int64() <= 0 || exp.Int64() > 1<<31-1 {
		return nil, errors.New("invalid modulus or exponent")
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(exp.Int64())}, nil
}
