package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"skiff.dev/apiserver/pkg/serviceaccount"
)

// TestServiceAccountIssuerDiscovery: the OIDC configuration and the JWKS
// are served to service accounts (the bootstrap binding), with upstream's
// fields, types and caching; a token from the TokenRequest API verifies
// with the served key of its kid; anonymous requests are refused 401 and a
// user without the role 403 until bound to it.
func TestServiceAccountIssuerDiscovery(t *testing.T) {
	ts := start(t, nil)
	c := ctx(t)
	admin := ts.Client
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "discoverer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(c, "discoverer", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := tr.Status.Token

	get := func(bearer string, anonymous bool, path string) (int, http.Header, []byte) {
		t.Helper()
		cfg := rest.AnonymousClientConfig(ts.AdminConfig)
		if !anonymous {
			cfg.BearerToken = bearer
		}
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hc.Timeout = 10 * time.Second
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, ts.URL+path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header, body
	}

	// The configuration.
	st, h, body := get(token, false, serviceaccount.OpenIDConfigPath)
	if st != http.StatusOK {
		t.Fatalf("GET %s as a service account: %d %s", serviceaccount.OpenIDConfigPath, st, body)
	}
	if h.Get("Content-Type") != "application/json" || h.Get("Cache-Control") != "public, max-age=3600" {
		t.Errorf("configuration headers: %v", h)
	}
	var cfg struct {
		Issuer        string   `json:"issuer"`
		JWKSURI       string   `json:"jwks_uri"`
		ResponseTypes []string `json:"response_types_supported"`
		SubjectTypes  []string `json:"subject_types_supported"`
		Algs          []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := json.Unmarshal(body, &cfg); err != nil {
		t.Fatalf("configuration %s: %v", body, err)
	}
	if cfg.Issuer != "https://kubernetes.default.svc.cluster.local" || len(cfg.ResponseTypes) != 1 || cfg.ResponseTypes[0] != "id_token" ||
		len(cfg.SubjectTypes) != 1 || cfg.SubjectTypes[0] != "public" || len(cfg.Algs) != 1 || cfg.Algs[0] != "RS256" {
		t.Errorf("configuration: %s", body)
	}
	// jwks_uri is this server's, at its advertised address (not fetched
	// there: the test's traffic stays on loopback).
	ju, err := url.Parse(cfg.JWKSURI)
	tsu, _ := url.Parse(ts.URL)
	if err != nil || ju.Scheme != "https" || ju.Path != serviceaccount.JWKSPath || ju.Port() != tsu.Port() {
		t.Errorf("jwks_uri %q, want https://<advertise>:%s%s", cfg.JWKSURI, tsu.Port(), serviceaccount.JWKSPath)
	}

	// The key set, and the token verified with it.
	st, h, body = get(token, false, ju.Path)
	if st != http.StatusOK {
		t.Fatalf("GET %s as a service account: %d %s", ju.Path, st, body)
	}
	if h.Get("Content-Type") != "application/jwk-set+json" || h.Get("Cache-Control") != "public, max-age=3600" {
		t.Errorf("jwks headers: %v", h)
	}
	var set serviceaccount.JWKS
	if err := json.Unmarshal(body, &set); err != nil || len(set.Keys) == 0 {
		t.Fatalf("jwks %s: %v", body, err)
	}
	var claims serviceaccount.Claims
	parsed, err := jwt.ParseWithClaims(token, &claims, func(tk *jwt.Token) (any, error) {
		for _, k := range set.Keys {
			if k.Kid == tk.Header["kid"] && k.Use == "sig" && k.Alg == "RS256" {
				return k.Key()
			}
		}
		t.Fatalf("no served key has the token's kid %v: %s", tk.Header["kid"], body)
		return nil, nil
	}, jwt.WithValidMethods(cfg.Algs))
	if err != nil || !parsed.Valid {
		t.Fatalf("the token does not verify with the served JWKS: %v", err)
	}
	if claims.Issuer != cfg.Issuer || claims.Subject != "system:serviceaccount:default:discoverer" {
		t.Errorf("token claims iss %q sub %q", claims.Issuer, claims.Subject)
	}

	// Anonymous: 401; a user without the role: 403, then 200 once bound.
	for _, p := range []string{serviceaccount.OpenIDConfigPath, serviceaccount.JWKSPath} {
		if st, _, body := get("", true, p); st != http.StatusUnauthorized {
			t.Errorf("anonymous GET %s: %d %s, want 401", p, st, body)
		}
		if st, _, body := get("test-user-token", false, p); st != http.StatusForbidden {
			t.Errorf("test-user GET %s: %d %s, want 403", p, st, body)
		}
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(c, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-user-discovery"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:service-account-issuer-discovery"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "test-user"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, func() error {
		if st, _, body := get("test-user-token", false, serviceaccount.JWKSPath); st != http.StatusOK {
			return fmt.Errorf("%d %s", st, body)
		}
		return nil
	}); err != nil {
		t.Fatalf("test-user bound to the role: %v", err)
	}
}
