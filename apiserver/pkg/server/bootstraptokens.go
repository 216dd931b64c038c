package server

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/storage"
)

// bootstrapTokenSecret reads a kube-system Secret for the bootstrap token
// authenticator, from the watch cache as upstream's authenticator reads
// its Secret lister.
func (s *Server) bootstrapTokenSecret(ctx context.Context, name string) (*corev1.Secret, error) {
	obj, err := s.store("", "secrets").GetCached(ctx, metav1.NamespaceSystem, name)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		return nil, fmt.Errorf("expected a Secret, got %T", obj)
	}
	return secret, nil
}
