package serviceaccount

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"testing"
	"time"
)

func TestTokens(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	const iss = "https://kubernetes.default.svc.cluster.local"
	kid, _ := keyID(&key.PublicKey)
	issuer := &Issuer{Key: key, Issuer: iss, keyID: kid}
	now := time.Now()
	live := func(uid string) Lookup {
		return func(context.Context, string, string) (string, error) { return uid, nil }
	}
	gone := func(context.Context, string, string) (string, error) { return "", errors.New("not found") }
	sa := Ref{Name: "robot", UID: "uid-1"}
	good, _, err := issuer.Issue("default", sa, nil, nil, nil, time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	otherAud, _, _ := issuer.Issue("default", sa, nil, nil, []string{"vault"}, time.Hour, now)
	expired, _, _ := issuer.Issue("default", sa, nil, nil, nil, time.Hour, now.Add(-2*time.Hour))
	foreign, _, _ := (&Issuer{Key: other, Issuer: iss, keyID: kid}).Issue("default", sa, nil, nil, nil, time.Hour, now)
	tests := []struct {
		name    string
		token   string
		sa      Lookup
		wantErr bool
		notOurs bool
	}{
		{name: "valid", token: good, sa: live("uid-1")},
		{name: "recreated account", token: good, sa: live("uid-2"), wantErr: true},
		{name: "deleted account", token: good, sa: gone, wantErr: true},
		{name: "other audience", token: otherAud, sa: live("uid-1"), wantErr: true},
		{name: "expired", token: expired, sa: live("uid-1"), wantErr: true},
		{name: "signed by another key", token: foreign, sa: live("uid-1"), wantErr: true},
		{name: "not a JWT", token: "static-token", sa: live("uid-1"), wantErr: true, notOurs: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &Authenticator{Keys: []*rsa.PublicKey{&key.PublicKey}, Issuer: iss, Audiences: []string{iss}, ServiceAccount: tc.sa, Pod: gone}
			u, err := a.AuthenticateToken(context.Background(), tc.token)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("accepted as %+v", u)
				}
				if errors.Is(err, ErrNotServiceAccountToken) != tc.notOurs {
					t.Errorf("not-ours = %v for %v", !tc.notOurs, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.Name != "system:serviceaccount:default:robot" || len(u.Groups) != 3 || u.Groups[1] != "system:serviceaccounts:default" {
				t.Errorf("user = %+v", u)
			}
		})
	}
}
