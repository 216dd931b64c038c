package authn

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBootstrapTokens(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	secret := func(mutate func(*corev1.Secret)) *corev1.Secret {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system"},
			Type:       "bootstrap.kubernetes.io/token",
			Data: map[string][]byte{
				"token-id": []byte("abcdef"), "token-secret": []byte("0123456789abcdef"),
				"usage-bootstrap-authentication": []byte("true"),
				"expiration":                     []byte(now.Add(time.Hour).Format(time.RFC3339)),
				"auth-extra-groups":              []byte("system:bootstrappers:kubeadm:default-node-token"),
			},
		}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	tests := []struct {
		name   string
		token  string
		secret *corev1.Secret
		getErr error
		want   *User
		err    error // nil: want a user
	}{
		{name: "valid", token: "abcdef.0123456789abcdef", secret: secret(nil),
			want: &User{Name: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token"}}},
		{name: "no expiration", token: "abcdef.0123456789abcdef", secret: secret(func(s *corev1.Secret) { delete(s.Data, "expiration") }),
			want: &User{Name: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token"}}},
		{name: "not a bootstrap token", token: "some-other-token", secret: secret(nil), err: ErrTokenNotRecognized},
		{name: "no secret", token: "abcdef.0123456789abcdef", err: ErrTokenNotRecognized},
		{name: "wrong secret", token: "abcdef.0123456789abcdee", secret: secret(nil), err: ErrTokenNotRecognized},
		{name: "expired", token: "abcdef.0123456789abcdef", secret: secret(func(s *corev1.Secret) {
			s.Data["expiration"] = []byte(now.Add(-time.Second).Format(time.RFC3339))
		}), err: ErrTokenNotRecognized},
		{name: "wrong type", token: "abcdef.0123456789abcdef", secret: secret(func(s *corev1.Secret) { s.Type = corev1.SecretTypeOpaque }), err: ErrTokenNotRecognized},
		{name: "not for authentication", token: "abcdef.0123456789abcdef", secret: secret(func(s *corev1.Secret) {
			s.Data["usage-bootstrap-authentication"] = []byte("false")
		}), err: ErrTokenNotRecognized},
		{name: "being deleted", token: "abcdef.0123456789abcdef", secret: secret(func(s *corev1.Secret) { s.DeletionTimestamp = &metav1.Time{Time: now} }), err: ErrTokenNotRecognized},
		{name: "bad extra group", token: "abcdef.0123456789abcdef", secret: secret(func(s *corev1.Secret) { s.Data["auth-extra-groups"] = []byte("admins") }), err: ErrTokenNotRecognized},
		{name: "id mismatch", token: "abcdef.0123456789abcdef", secret: secret(func(s *corev1.Secret) { s.Data["token-id"] = []byte("zzzzzz") }), err: ErrTokenNotRecognized},
		{name: "store error", token: "abcdef.0123456789abcdef", getErr: errors.New("etcd down")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked string
			auth := BootstrapTokens(func(_ context.Context, name string) (*corev1.Secret, error) {
				asked = name
				return tt.secret, tt.getErr
			}, func() time.Time { return now })
			u, err := auth(context.Background(), tt.token)
			switch {
			case tt.getErr != nil:
				if err == nil || errors.Is(err, ErrTokenNotRecognized) {
					t.Fatalf("err = %v, want the store's error", err)
				}
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(u, tt.want) {
					t.Errorf("user = %+v, want %+v", u, tt.want)
				}
				if asked != "bootstrap-token-abcdef" {
					t.Errorf("asked for Secret %q", asked)
				}
			}
		})
	}
}
