package authn

import (
	"crypto/x509"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseTokens(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []tokenEntry
		wantErr string
	}{
		{name: "user with groups", in: "tok,alice,uid1,\"g1,g2\"\n",
			want: []tokenEntry{{token: "tok", user: User{Name: "alice", UID: "uid1", Groups: []string{"g1", "g2"}}}}},
		{name: "no groups, comment", in: "# admins\ntok2,bob,uid2\n",
			want: []tokenEntry{{token: "tok2", user: User{Name: "bob", UID: "uid2"}}}},
		{name: "too few fields", in: "tok,alice\n", wantErr: "want token,user,uid"},
		{name: "empty user", in: "tok,,uid\n", wantErr: "must not be empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTokens(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBearerTokens(t *testing.T) {
	entries, err := parseTokens(strings.NewReader("secret,alice,1,\"devs\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := &Authenticator{tokens: entries}
	tests := []struct {
		name   string
		header string
		user   string
		groups []string
		err    bool
	}{
		{name: "none"},
		{name: "valid", header: "Bearer secret", user: "alice", groups: []string{"devs", "system:authenticated"}},
		{name: "lower-case scheme", header: "bearer secret", user: "alice", groups: []string{"devs", "system:authenticated"}},
		{name: "wrong token", header: "Bearer secreT", err: true},
		{name: "basic auth", header: "Basic YTpi", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodGet, "/", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			u, err := a.Authenticate(r)
			if tc.err {
				if err == nil {
					t.Fatalf("got user %+v, want an error", u)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.user == "" {
				if u != nil {
					t.Fatalf("got %+v, want no user", u)
				}
				return
			}
			if u.Name != tc.user || !reflect.DeepEqual(u.Groups, tc.groups) {
				t.Errorf("got %+v", u)
			}
		})
	}
}

func TestCertCacheKeysOnTheWholeCertificate(t *testing.T) {
	var c certCache
	now := time.Now()
	a := &x509.Certificate{Raw: []byte("cert-a"), Signature: []byte("sig"), NotAfter: now.Add(time.Hour)}
	b := &x509.Certificate{Raw: []byte("cert-b"), Signature: []byte("sig"), NotAfter: now.Add(time.Hour)}
	c.add(a, [][]*x509.Certificate{{a}}, now)
	if !c.ok(a, now) {
		t.Error("verified certificate not remembered")
	}
	if c.ok(b, now) {
		t.Error("a different certificate with the same signature hit the cache")
	}
	if c.ok(a, now.Add(6*time.Minute)) {
		t.Error("verification remembered for more than five minutes")
	}
	short := &x509.Certificate{Raw: []byte("short"), NotAfter: now.Add(time.Minute)}
	c.add(short, [][]*x509.Certificate{{short}}, now)
	if c.ok(short, now.Add(2*time.Minute)) {
		t.Error("verification remembered past the certificate's expiry")
	}
}

func TestAnonymous(t *testing.T) {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	for _, anonymous := range []bool{false, true} {
		a := &Authenticator{Anonymous: anonymous}
		u, err := a.Authenticate(r)
		if err != nil {
			t.Fatal(err)
		}
		if !anonymous && u != nil {
			t.Errorf("anonymous off: got %+v", u)
		}
		if anonymous && (u == nil || u.Name != "system:anonymous" || !reflect.DeepEqual(u.Groups, []string{"system:unauthenticated"})) {
			t.Errorf("anonymous on: got %+v", u)
		}
	}
	// Bad credentials stay refused.
	r.Header.Set("Authorization", "Bearer nope")
	if _, err := (&Authenticator{Anonymous: true}).Authenticate(r); err == nil {
		t.Error("a bad token was let through as anonymous")
	}
}
