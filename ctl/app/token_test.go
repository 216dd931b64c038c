package app

import (
	"strings"
	"testing"
	"time"
)

func TestTokenCreateSecret(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o := &TokenCreateOptions{TTL: time.Hour, Description: "d", Usages: []string{"signing", "authentication"}, Groups: []string{NodeBootstrapGroup}, Now: func() time.Time { return now }}
	if err := o.Validate("abcdef.0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	s, err := o.Secret("abcdef.0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"token-id": "abcdef", "token-secret": "0123456789abcdef", "description": "d", "expiration": "2026-01-02T04:04:05Z",
		"usage-bootstrap-signing": "true", "usage-bootstrap-authentication": "true", "auth-extra-groups": NodeBootstrapGroup,
	}
	if s.Name != "bootstrap-token-abcdef" || s.Namespace != "kube-system" || s.Type != "bootstrap.kubernetes.io/token" || len(s.Data) != len(want) {
		t.Fatalf("secret = %s/%s %s %v", s.Namespace, s.Name, s.Type, s.Data)
	}
	for k, v := range want {
		if string(s.Data[k]) != v {
			t.Errorf("%s = %q, want %q", k, s.Data[k], v)
		}
	}
	o.TTL = 0
	if s, _ := o.Secret("abcdef.0123456789abcdef"); s.Data["expiration"] != nil {
		t.Error("--ttl 0 still expires")
	}
}

func TestTokenCreateValidate(t *testing.T) {
	tests := []struct {
		name    string
		token   string
		change  func(*TokenCreateOptions)
		wantErr string
	}{
		{name: "bad token", token: "ABCDEF.0123456789abcdef", wantErr: "is not of the form"},
		{name: "negative ttl", change: func(o *TokenCreateOptions) { o.TTL = -time.Second }, wantErr: "--ttl"},
		{name: "unknown usage", change: func(o *TokenCreateOptions) { o.Usages = []string{"everything"} }, wantErr: "--usages"},
		{name: "group outside system:bootstrappers", change: func(o *TokenCreateOptions) { o.Groups = []string{"system:masters"} }, wantErr: "--groups"},
		{name: "http server", change: func(o *TokenCreateOptions) { o.Server = "http://x" }, wantErr: "--server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &TokenCreateOptions{TTL: time.Hour, Usages: []string{"authentication"}}
			if tt.change != nil {
				tt.change(o)
			}
			err := o.Validate(tt.token)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
