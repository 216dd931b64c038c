package serviceaccount

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
)

func TestOpenIDMetadata(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewOpenIDMetadata("https://issuer.example", "", "10.0.0.1:6443", []*rsa.PublicKey{&key.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(m.ConfigJSON, &cfg); err != nil {
		t.Fatal(err)
	}
	want := `{"issuer":"https://issuer.example","jwks_uri":"https://10.0.0.1:6443/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}`
	if string(m.ConfigJSON) != want {
		t.Errorf("config %s, want %s", m.ConfigJSON, want)
	}
	m2, err := NewOpenIDMetadata("https://issuer.example", "https://keys.example/jwks", "", []*rsa.PublicKey{&key.PublicKey})
	if err != nil || !strings.Contains(string(m2.ConfigJSON), `"jwks_uri":"https://keys.example/jwks"`) {
		t.Errorf("explicit jwks_uri: %s, %v", m2.ConfigJSON, err)
	}

	// A token the issuer signs verifies with the served key of its kid.
	iss := &Issuer{Key: key, Issuer: "https://issuer.example"}
	iss.keyID, _ = keyID(&key.PublicKey)
	tok, _, err := iss.Issue("ns", Ref{Name: "sa", UID: "u"}, Bound{}, nil, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var set JWKS
	if err := json.Unmarshal(m.KeysetJSON, &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("keyset %s: %v", m.KeysetJSON, err)
	}
	jwk := set.Keys[0]
	if jwk.Use != "sig" || jwk.Alg != "RS256" || jwk.Kty != "RSA" {
		t.Errorf("jwk %+v", jwk)
	}
	parsed, err := jwt.Parse(tok, func(tk *jwt.Token) (any, error) {
		if tk.Header["kid"] != jwk.Kid {
			t.Errorf("token kid %v, jwk kid %s", tk.Header["kid"], jwk.Kid)
		}
		return jwk.Key()
	}, jwt.WithValidMethods([]string{"RS256"}))
	if err != nil || !parsed.Valid {
		t.Fatalf("token does not verify with the served key: %v", err)
	}

	for _, tc := range []struct{ issuer, jwks, ext string }{
		{"http://issuer.example", "", "h:1"},
		{"https://issuer.example?x=1", "", "h:1"},
		{"https://issuer.example#f", "", "h:1"},
		{"https://issuer.example", "http://keys", ""},
		{"https://issuer.example", "", ""},
		{"", "", "h:1"},
	} {
		if _, err := NewOpenIDMetadata(tc.issuer, tc.jwks, tc.ext, []*rsa.PublicKey{&key.PublicKey}); err == nil {
			t.Errorf("%+v: accepted", tc)
		}
	}
	if _, err := NewOpenIDMetadata("https://i", "", "h:1", nil); err == nil {
		t.Error("no keys: accepted")
	}
}
