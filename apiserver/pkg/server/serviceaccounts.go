package server

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/serviceaccount"
)

// setupServiceAccountTokens wires the token signer (serviceaccounts/token)
// and the token authenticator.
func (s *Server) setupServiceAccountTokens(o *Options) error {
	if o.ServiceAccountSigningKeyFile != "" {
		issuer, err := serviceaccount.NewIssuer(o.ServiceAccountSigningKeyFile, o.ServiceAccountIssuer)
		if err != nil {
			return fmt.Errorf("--service-account-signing-key-file: %w", err)
		}
		s.handler.Tokens = issuer
	}
	keyFiles := serviceAccountKeyFiles(o)
	if len(keyFiles) == 0 {
		return nil
	}
	keys, err := serviceaccount.LoadPublicKeys(keyFiles)
	if err != nil {
		return fmt.Errorf("--service-account-key-file: %w", err)
	}
	uidOf := func(group, resource string) serviceaccount.Lookup {
		return func(ctx context.Context, ns, name string) (metav1.Object, error) {
			obj, err := s.store(group, resource).Get(ctx, ns, name)
			if err != nil {
				return nil, err
			}
			return meta.Accessor(obj)
		}
	}
	sa := &serviceaccount.Authenticator{
		Keys: keys, Issuer: o.ServiceAccountIssuer, Audiences: []string{o.ServiceAccountIssuer},
		ServiceAccount: uidOf("", "serviceaccounts"), Pod: uidOf("", "pods"),
		Secret: uidOf("", "secrets"), Node: uidOf("", "nodes"),
	}
	s.authn.Tokens = append(s.authn.Tokens, func(ctx context.Context, token string) (*authn.User, error) {
		u, err := sa.AuthenticateToken(ctx, token)
		if errors.Is(err, serviceaccount.ErrNotServiceAccountToken) {
			return nil, authn.ErrTokenNotRecognized
		}
		return u, err
	})
	return nil
}
