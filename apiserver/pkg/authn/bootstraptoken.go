package authn

import (
	"context"
	"crypto/subtle"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstrapsecretutil "k8s.io/cluster-bootstrap/util/secrets"
	"k8s.io/cluster-bootstrap/util/tokens"
	"k8s.io/klog/v2"
)

// BootstrapSecretGetter reads a Secret of kube-system by name; it returns
// (nil, nil) when there is none.
type BootstrapSecretGetter func(ctx context.Context, name string) (*corev1.Secret, error)

// BootstrapTokens authenticates bootstrap tokens (upstream's
// --enable-bootstrap-token-auth): a bearer token "<id>.<secret>" matches the
// Secret bootstrap-token-<id> of kube-system, of type
// bootstrap.kubernetes.io/token, with the same token-id and token-secret,
// usage-bootstrap-authentication "true" and an expiration not passed. The
// user is system:bootstrap:<id> in system:bootstrappers and the Secret's
// auth-extra-groups. A token that is not of that form, or does not match,
// is left to the next authenticator (so, in the end, refused), as
// upstream's authenticator does.
func BootstrapTokens(get BootstrapSecretGetter, now func() time.Time) TokenAuthenticator {
	return func(ctx context.Context, token string) (*User, error) {
		id, secret, err := tokens.ParseToken(token)
		if err != nil {
			return nil, ErrTokenNotRecognized
		}
		name := bootstrapapi.BootstrapTokenSecretPrefix + id
		s, err := get(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("reading the bootstrap token's Secret kube-system/%s: %w", name, err)
		}
		logger := klog.FromContext(ctx).V(3)
		if s == nil {
			logger.Info("No Secret matches the bootstrap token", "secret", klog.KRef(metav1NamespaceSystem, name))
			return nil, ErrTokenNotRecognized
		}
		reject := func(why string) (*User, error) {
			logger.Info("Bootstrap token refused", "secret", klog.KObj(s), "reason", why)
			return nil, ErrTokenNotRecognized
		}
		if s.DeletionTimestamp != nil {
			return reject("the Secret is being deleted")
		}
		if s.Type != corev1.SecretType(bootstrapapi.SecretTypeBootstrapToken) || s.Data == nil {
			return reject("the Secret is not of type " + string(bootstrapapi.SecretTypeBootstrapToken))
		}
		got := bootstrapsecretutil.GetData(s, bootstrapapi.BootstrapTokenSecretKey)
		if subtle.ConstantTimeCompare([]byte(got), []byte(secret)) != 1 {
			return reject("wrong " + bootstrapapi.BootstrapTokenSecretKey)
		}
		if bootstrapsecretutil.GetData(s, bootstrapapi.BootstrapTokenIDKey) != id {
			return reject("wrong " + bootstrapapi.BootstrapTokenIDKey)
		}
		if bootstrapsecretutil.HasExpired(s, now()) {
			return reject("expired")
		}
		if bootstrapsecretutil.GetData(s, bootstrapapi.BootstrapTokenUsageAuthentication) != "true" {
			return reject("not marked " + bootstrapapi.BootstrapTokenUsageAuthentication + "=true")
		}
		groups, err := bootstrapsecretutil.GetGroups(s)
		if err != nil {
			return reject(err.Error())
		}
		return &User{Name: bootstrapapi.BootstrapUserPrefix + id, Groups: groups}, nil
	}
}

const metav1NamespaceSystem = "kube-system"
