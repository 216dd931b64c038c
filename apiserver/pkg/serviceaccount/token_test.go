package serviceaccount

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
		return func(context.Context, string, string) (metav1.Object, error) {
			return &metav1.ObjectMeta{UID: types.UID(uid)}, nil
		}
	}
	gone := func(context.Context, string, string) (metav1.Object, error) { return nil, errors.New("not found") }
	sa := Ref{Name: "robot", UID: "uid-1"}
	good, _, err := issuer.Issue("default", sa, Bound{}, nil, time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	otherAud, _, _ := issuer.Issue("default", sa, Bound{}, []string{"vault"}, time.Hour, now)
	expired, _, _ := issuer.Issue("default", sa, Bound{}, nil, time.Hour, now.Add(-2*time.Hour))
	foreign, _, _ := (&Issuer{Key: other, Issuer: iss, keyID: kid}).Issue("default", sa, Bound{}, nil, time.Hour, now)
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

// A bound token is accepted while its object exists with the UID it names,
// as upstream's validator: a secret's, a pod's, a node's (a node only when
// the token is bound to it, not when it is the node of the bound pod); a
// bound object without a lookup to verify it is refused.
func TestBoundTokens(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	const iss = "https://issuer.test"
	issuer := &Issuer{Key: key, Issuer: iss}
	now := time.Now()
	live := func(uid string) Lookup {
		return func(context.Context, string, string) (metav1.Object, error) {
			return &metav1.ObjectMeta{UID: types.UID(uid)}, nil
		}
	}
	gone := func(context.Context, string, string) (metav1.Object, error) { return nil, errors.New("not found") }
	// deleting: the object is being deleted since ago (a finalizer or a
	// pod's grace period keeps it).
	deleting := func(uid string, ago time.Duration) Lookup {
		return func(context.Context, string, string) (metav1.Object, error) {
			d := metav1.NewTime(now.Add(-ago))
			return &metav1.ObjectMeta{UID: types.UID(uid), DeletionTimestamp: &d}, nil
		}
	}
	issue := func(b Bound) string {
		tok, _, err := issuer.Issue("default", Ref{Name: "robot", UID: "sa-uid"}, b, nil, time.Hour, now)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	secret := issue(Bound{Secret: &Ref{Name: "s", UID: "secret-uid"}})
	node := issue(Bound{Node: &Ref{Name: "n1", UID: "node-uid"}})
	pod := issue(Bound{Pod: &Ref{Name: "p", UID: "pod-uid"}, Node: &Ref{Name: "n1", UID: "node-uid"}})
	tests := []struct {
		name                  string
		token                 string
		sa, pod, secret, node Lookup
		wantErr               string
		wantExtra             map[string][]string
	}{
		{name: "secret", token: secret, secret: live("secret-uid")},
		{name: "secret deleted", token: secret, secret: gone, wantErr: "service account token has been invalidated"},
		{name: "secret recreated", token: secret, secret: live("other"), wantErr: "secret UID (other) does not match service account secret ref claim (secret-uid)"},
		{name: "secret unverifiable", token: secret, wantErr: "service account token has been invalidated"},
		{name: "secret being deleted within the leeway", token: secret, secret: deleting("secret-uid", 30*time.Second)},
		{name: "secret being deleted past the leeway", token: secret, secret: deleting("secret-uid", 2*time.Minute), wantErr: "service account token has been invalidated"},
		{name: "node", token: node, node: live("node-uid"), wantExtra: map[string][]string{ExtraNodeName: {"n1"}, ExtraNodeUID: {"node-uid"}}},
		{name: "node deleted", token: node, node: gone, wantErr: "service account token has been invalidated"},
		{name: "node recreated", token: node, node: live("other"), wantErr: "node UID (other) does not match service account node ref claim (node-uid)"},
		{name: "pod's node not checked", token: pod, pod: live("pod-uid"), node: gone, wantExtra: map[string][]string{
			ExtraPodName: {"p"}, ExtraPodUID: {"pod-uid"}, ExtraNodeName: {"n1"}, ExtraNodeUID: {"node-uid"}}},
		{name: "pod deleted", token: pod, pod: gone, node: live("node-uid"), wantErr: "service account token has been invalidated"},
		{name: "pod being deleted past the leeway", token: pod, pod: deleting("pod-uid", 2*time.Minute), wantErr: "service account token has been invalidated"},
		{name: "node being deleted past the leeway", token: node, node: deleting("node-uid", 2*time.Minute), wantErr: "service account token has been invalidated"},
		{name: "account being deleted past the leeway", token: secret, sa: deleting("sa-uid", 2*time.Minute), secret: live("secret-uid"),
			wantErr: "service account default/robot has been deleted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &Authenticator{Keys: []*rsa.PublicKey{&key.PublicKey}, Issuer: iss, Audiences: []string{iss},
				ServiceAccount: tc.sa, Pod: tc.pod, Secret: tc.secret, Node: tc.node}
			if a.ServiceAccount == nil {
				a.ServiceAccount = live("sa-uid")
			}
			u, err := a.AuthenticateToken(context.Background(), tc.token)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v (user %+v), want %q", err, u, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.wantExtra {
				if got := u.Extra[k]; len(got) != 1 || got[0] != v[0] {
					t.Errorf("extra %s = %v, want %v", k, got, v)
				}
			}
			if len(u.Extra) != len(tc.wantExtra)+1 { // and the credential ID
				t.Errorf("extra = %v, want %v and the credential ID", u.Extra, tc.wantExtra)
			}
		})
	}
}
