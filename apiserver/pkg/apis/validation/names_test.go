package validation

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// TestNameChecksMatchApimachinery: each fast check agrees with the
// apimachinery function it stands for, on edge cases and on random strings
// over the characters that matter.
func TestNameChecksMatchApimachinery(t *testing.T) {
	checks := []struct {
		name string
		fast func(string) bool
		want func(string) []string
	}{
		{"IsDNS1123Label", isDNS1123Label, validation.IsDNS1123Label},
		{"IsDNS1123Subdomain", isDNS1123Subdomain, validation.IsDNS1123Subdomain},
		{"IsQualifiedName", isQualifiedName, validation.IsQualifiedName},
		{"IsValidLabelValue", isLabelValue, validation.IsValidLabelValue},
	}
	edge := []string{"", "a", "A", "0", "-", ".", "_", "/", "a/", "/a", "a/b", "a/b/c", "a.b/c", "a..b", ".a", "a.", "a-", "-a",
		"a_b", "a.b", "A.b", "ab-c.d-e/F_g.H", "example.com/MyName", "kubernetes.io/hostname", "node.kubernetes.io/not-ready",
		"a b", "a\x00", "é", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253), strings.Repeat("a", 254),
		strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 127) + "a", strings.Repeat("a", 253) + "/b", strings.Repeat("a", 254) + "/b",
		"a/" + strings.Repeat("b", 63), "a/" + strings.Repeat("b", 64), strings.Repeat("a", 64) + ".b"}
	const alphabet = "aZ09-_./ A"
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := append([]string(nil), edge...)
	for range 200000 {
		n := rng.IntN(12)
		if rng.IntN(20) == 0 {
			n = 55 + rng.IntN(210) // around the length limits
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(3) > 0 {
				b[i] = "ab0"[rng.IntN(3)] // mostly valid characters
			}
		}
		inputs = append(inputs, string(b))
	}
	for _, c := range checks {
		valid := 0
		for _, s := range inputs {
			want := len(c.want(s)) == 0
			if got := c.fast(s); got != want {
				t.Fatalf("%s(%q): fast check says %v, apimachinery %v", c.name, s, got, want)
			}
			if want {
				valid++
			}
		}
		// Both answers were exercised.
		if valid == 0 || valid == len(inputs) {
			t.Errorf("%s: %d of %d inputs valid", c.name, valid, len(inputs))
		}
	}
}
