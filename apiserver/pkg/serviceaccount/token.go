// Package serviceaccount issues and verifies service account tokens: JWTs
// signed with the cluster's service-account key (RS256), with upstream's
// claims, so a pod can call the API as
// system:serviceaccount:<namespace>:<name>. A token is accepted only while
// its service account (same UID) still exists, and, when it is bound to a
// pod, a secret or a node, while that object does (same UID).
package serviceaccount

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/authn"
)

// Ref names an object a token is bound to.
type Ref struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// KubernetesClaims are upstream's private claims. Node is the node a token
// is bound to, or the node of the pod it is bound to (upstream's
// ServiceAccountTokenPodNodeInfo).
type KubernetesClaims struct {
	Namespace      string `json:"namespace"`
	ServiceAccount Ref    `json:"serviceaccount"`
	Pod            *Ref   `json:"pod,omitempty"`
	Secret         *Ref   `json:"secret,omitempty"`
	Node           *Ref   `json:"node,omitempty"`
}

// Bound is what a token is bound to: a pod (with its node, when it has
// one), a secret, or a node; none for an unbound token.
type Bound struct {
	Pod, Secret, Node *Ref
}

// The keys of the user's extra that a service account token gives, as
// upstream names them.
const (
	ExtraCredentialID = "authentication.kubernetes.io/credential-id"
	ExtraPodName      = "authentication.kubernetes.io/pod-name"
	ExtraPodUID       = "authentication.kubernetes.io/pod-uid"
	ExtraNodeName     = "authentication.kubernetes.io/node-name"
	ExtraNodeUID      = "authentication.kubernetes.io/node-uid"
)

// Claims of a service account token.
type Claims struct {
	jwt.RegisteredClaims
	Kubernetes KubernetesClaims `json:"kubernetes.io"`
}

// Issuer signs tokens.
type Issuer struct {
	Key    *rsa.PrivateKey
	Issuer string
	keyID  string
}

// NewIssuer reads a PEM RSA private key.
func NewIssuer(keyFile, issuer string) (*Issuer, error) {
	data, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	key, err := parsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	kid, err := keyID(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	return &Issuer{Key: key, Issuer: issuer, keyID: kid}, nil
}

func parsePrivateKey(data []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an RSA key")
	}
	return rk, nil
}

// keyID is upstream's: the base64url SHA-256 of the DER public key.
func keyID(pub *rsa.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// Issue signs a token for a service account, valid for ttl, bound to what
// bound names. Each token has its own ID (jti).
func (i *Issuer) Issue(namespace string, sa Ref, bound Bound, audiences []string, ttl time.Duration, now time.Time) (string, time.Time, error) {
	exp := now.Add(ttl)
	if len(audiences) == 0 {
		audiences = []string{i.Issuer}
	}
	claims := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: i.Issuer, Subject: "system:serviceaccount:" + namespace + ":" + sa.Name,
			Audience: jwt.ClaimStrings(audiences), ExpiresAt: jwt.NewNumericDate(exp),
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), ID: uuid.NewString(),
		},
		Kubernetes: KubernetesClaims{Namespace: namespace, ServiceAccount: sa, Pod: bound.Pod, Secret: bound.Secret, Node: bound.Node},
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = i.keyID
	s, err := t.SignedString(i.Key)
	return s, exp, err
}

// Lookup returns an object's metadata (its UID and deletionTimestamp), or an
// error when it is gone.
type Lookup func(ctx context.Context, namespace, name string) (metav1.Object, error)

// deletionLeeway is upstream's (jwt.DefaultLeeway): an object whose
// deletionTimestamp is more than this in the past no longer backs a token.
const deletionLeeway = time.Minute

func deletedBefore(m metav1.Object, t time.Time) bool {
	d := m.GetDeletionTimestamp()
	return d != nil && d.Time.Before(t)
}

// Authenticator verifies service account tokens.
type Authenticator struct {
	Keys      []*rsa.PublicKey
	Issuer    string
	Audiences []string
	// ServiceAccount, Pod, Secret and Node check that what a token names
	// still exists (a node only when the token is bound to the node, not
	// when it names the node of the pod it is bound to).
	ServiceAccount Lookup
	Pod            Lookup
	Secret         Lookup
	Node           Lookup
	Now            func() time.Time
}

// LoadPublicKeys reads PEM public keys (or private keys, whose public half is used).
func LoadPublicKeys(files []string) ([]*rsa.PublicKey, error) {
	var out []*rsa.PublicKey
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for {
			var block *pem.Block
			block, data = pem.Decode(data)
			if block == nil {
				break
			}
			switch block.Type {
			case "PUBLIC KEY":
				k, err := x509.ParsePKIXPublicKey(block.Bytes)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", f, err)
				}
				if rk, ok := k.(*rsa.PublicKey); ok {
					out = append(out, rk)
				}
			case "RSA PUBLIC KEY":
				k, err := x509.ParsePKCS1PublicKey(block.Bytes)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", f, err)
				}
				out = append(out, k)
			case "RSA PRIVATE KEY", "PRIVATE KEY":
				k, err := parsePrivateKey(pem.EncodeToMemory(block))
				if err != nil {
					return nil, fmt.Errorf("%s: %w", f, err)
				}
				out = append(out, &k.PublicKey)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no RSA public key in %v", files)
	}
	return out, nil
}

// errInvalidated is upstream's answer for a token whose bound object is gone.
var errInvalidated = errors.New("service account token has been invalidated")

// checkBound verifies that the object ref names (when it names one) exists
// with ref's UID; without a lookup the token cannot be verified.
func checkBound(ctx context.Context, lookup Lookup, kind, namespace string, ref *Ref, invalidIfDeletedBefore time.Time) error {
	if ref == nil {
		return nil
	}
	if lookup == nil {
		return errInvalidated
	}
	m, err := lookup(ctx, namespace, ref.Name)
	if err != nil {
		return errInvalidated
	}
	if string(m.GetUID()) != ref.UID {
		return fmt.Errorf("%s UID (%s) does not match service account %s ref claim (%s)", kind, m.GetUID(), kind, ref.UID)
	}
	if deletedBefore(m, invalidIfDeletedBefore) {
		return errInvalidated
	}
	return nil
}

// ErrNotServiceAccountToken: the token is not a JWT of this issuer; other
// authenticators may still accept it.
var ErrNotServiceAccountToken = errors.New("not a service account token")

// AuthenticateToken verifies a bearer token.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*authn.User, error) {
	var claims Claims
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"RS256"}), jwt.WithoutClaimsValidation())
	var lastErr error
	var parsed *jwt.Token
	for _, k := range a.Keys {
		key := k
		t, err := parser.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return key, nil })
		if err == nil && t.Valid {
			parsed = t
			break
		}
		lastErr = err
	}
	if parsed == nil {
		var ve *jwt.ValidationError
		if errors.As(lastErr, &ve) && ve.Errors&jwt.ValidationErrorMalformed != 0 {
			return nil, ErrNotServiceAccountToken
		}
		return nil, fmt.Errorf("invalid service account token: %v", lastErr)
	}
	if claims.Issuer != a.Issuer {
		return nil, ErrNotServiceAccountToken
	}
	now := time.Now()
	if a.Now != nil {
		now = a.Now()
	}
	if claims.ExpiresAt == nil || now.After(claims.ExpiresAt.Time) {
		return nil, errors.New("service account token has expired")
	}
	if claims.NotBefore != nil && now.Add(time.Minute).Before(claims.NotBefore.Time) {
		return nil, errors.New("service account token is not valid yet")
	}
	audOK := false
	for _, want := range a.Audiences {
		if claims.VerifyAudience(want, true) {
			audOK = true
		}
	}
	if !audOK {
		return nil, errors.New("service account token has the wrong audience")
	}
	k := claims.Kubernetes
	if k.Namespace == "" || k.ServiceAccount.Name == "" || claims.Subject != "system:serviceaccount:"+k.Namespace+":"+k.ServiceAccount.Name {
		return nil, errors.New("service account token claims are inconsistent")
	}
	// What is being deleted for more than the leeway no longer backs a
	// token, as upstream's validator.
	invalidIfDeletedBefore := now.Add(-deletionLeeway)
	sa, err := a.ServiceAccount(ctx, k.Namespace, k.ServiceAccount.Name)
	if err != nil || string(sa.GetUID()) != k.ServiceAccount.UID || deletedBefore(sa, invalidIfDeletedBefore) {
		return nil, fmt.Errorf("service account %s/%s has been deleted", k.Namespace, k.ServiceAccount.Name)
	}
	// The bound object, as upstream's validator: gone is "invalidated",
	// another UID a mismatch.
	if err := checkBound(ctx, a.Secret, "secret", k.Namespace, k.Secret, invalidIfDeletedBefore); err != nil {
		return nil, err
	}
	if err := checkBound(ctx, a.Pod, "pod", k.Namespace, k.Pod, invalidIfDeletedBefore); err != nil {
		return nil, err
	}
	if k.Pod == nil {
		if err := checkBound(ctx, a.Node, "node", "", k.Node, invalidIfDeletedBefore); err != nil {
			return nil, err
		}
	}
	u := &authn.User{
		Name:   claims.Subject,
		UID:    k.ServiceAccount.UID,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + k.Namespace, "system:authenticated"},
	}
	// Upstream's ServiceAccountInfo.UserInfo: the token's ID, and the pod
	// and node it is bound to.
	extra := map[string][]string{}
	if k.Pod != nil && k.Pod.Name != "" && k.Pod.UID != "" {
		extra[ExtraPodName], extra[ExtraPodUID] = []string{k.Pod.Name}, []string{k.Pod.UID}
	}
	if claims.ID != "" {
		extra[ExtraCredentialID] = []string{"JTI=" + claims.ID}
	}
	if k.Node != nil && k.Node.Name != "" {
		extra[ExtraNodeName] = []string{k.Node.Name}
		if k.Node.UID != "" {
			extra[ExtraNodeUID] = []string{k.Node.UID}
		}
	}
	if len(extra) > 0 {
		u.Extra = extra
	}
	return u, nil
}
