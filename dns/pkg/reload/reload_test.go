package reload

import (
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
)

// TestSetup: CoreDNS's syntax, defaults and limits; the interval, with
// its jitter, is kept on the instance.
func TestSetup(t *testing.T) {
	for _, tc := range []struct {
		corefile string
		min, max time.Duration // the interval with the jitter's range
		err      string
	}{
		{corefile: "reload", min: 30*time.Second - 7500*time.Millisecond, max: 30*time.Second + 7500*time.Millisecond},
		{corefile: "reload 10s", min: 7500 * time.Millisecond, max: 12500 * time.Millisecond},
		{corefile: "reload 2s 1s", min: 1500 * time.Millisecond, max: 2500 * time.Millisecond},
		{corefile: "reload 20s 4s", min: 18 * time.Second, max: 22 * time.Second},
		{corefile: "reload 1s", err: "interval value must be greater or equal to 2s"},
		{corefile: "reload 5s 500ms", err: "jitter value must be greater or equal to 1s"},
		{corefile: "reload soon", err: "invalid duration"},
		{corefile: "reload 5s 1s 1s", err: "Wrong argument count"},
	} {
		t.Run(tc.corefile, func(t *testing.T) {
			for range 20 {
				c := caddy.NewTestController("dns", tc.corefile)
				err := setup(c)
				if tc.err != "" {
					if err == nil || !strings.Contains(err.Error(), tc.err) {
						t.Fatalf("setup(%q) = %v, want an error with %q", tc.corefile, err, tc.err)
					}
					return
				}
				if err != nil {
					t.Fatalf("setup(%q): %v", tc.corefile, err)
				}
				i, ok := c.Get(intervalKey{}).(time.Duration)
				if !ok || i < tc.min || i > tc.max {
					t.Fatalf("setup(%q) kept %v (%v), want within [%v, %v]", tc.corefile, i, ok, tc.min, tc.max)
				}
			}
		})
	}
}

// TestHashIgnoresLayout: a Corefile that differs in comments and spaces
// within its lines only is not a change (the parsed tokens carry their
// line numbers, as CoreDNS's); one that differs in a directive is.
func TestHashIgnoresLayout(t *testing.T) {
	in := func(s string) caddy.Input {
		return caddy.CaddyfileInput{Contents: []byte(s), Filepath: "Corefile", ServerTypeName: "dns"}
	}
	a, err := hash(in(".:53 {\n    forward . 127.0.0.1\n    reload\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hash(in(".:53 {   # the same\n\tforward  .  127.0.0.1\n  reload # every 30 s\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := hash(in(".:53 {\n    forward . 127.0.0.2\n    reload\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("comments and spacing changed the hash")
	}
	if a == c {
		t.Error("another forward address did not change the hash")
	}
}
