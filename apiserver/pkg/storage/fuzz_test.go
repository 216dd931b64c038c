package storage

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// Fuzz targets for the two things the storage layer parses from clients:
// continue tokens (the "continue" query parameter of a list) and
// resourceVersions. Run one with
//
//	go test -run='^$' -fuzz='^FuzzDecodeContinue$' -fuzztime=60s ./pkg/storage/
//
// or all of them with deploy/fuzz.sh. Plain `go test` runs the seed corpora
// under testdata/fuzz/<FuzzName>/ (regenerate them with
// SKIFF_WRITE_FUZZ_SEEDS=1 go test -run '^TestWriteFuzzSeeds$' ./pkg/storage/).

// fuzzKeyPrefixes are prefixes the generic store lists under: a whole
// resource, one namespace of it, and upstream's odd names (Nodes live under
// "minions", Services under "services/specs").
var fuzzKeyPrefixes = []string{
	"/registry/pods/",
	"/registry/pods/default/",
	"/registry/minions/",
	"/registry/services/specs/kube-system/",
	"/registry/configmaps/skiff-fuzz/",
}

func fuzzPrefix(sel uint8) string { return fuzzKeyPrefixes[int(sel)%len(fuzzKeyPrefixes)] }

// cleanRelative reports whether rest is a key suffix DecodeContinue must
// accept unchanged: relative (no leading slash) and free of "." and ".."
// segments and of doubled or trailing slashes (path.Clean leaves it alone).
func cleanRelative(rest string) bool {
	return rest != "" && !strings.HasPrefix(rest, "/") && path.Clean("/"+rest) == "/"+rest
}

// checkInsidePrefix is the safety property of DecodeContinue: whatever the
// token says, the list starts inside keyPrefix (at the prefix itself for a
// start of "/"), at a key with no "." or ".." segment, so a crafted token
// cannot read another namespace or resource.
func checkInsidePrefix(t *testing.T, token, keyPrefix, fromKey string, rev int64) {
	t.Helper()
	if !strings.HasPrefix(fromKey, keyPrefix) {
		t.Fatalf("DecodeContinue(%q, %q) escaped the prefix: start key %q", token, keyPrefix, fromKey)
	}
	if rest := fromKey[len(keyPrefix):]; rest != "" && !cleanRelative(rest) {
		t.Fatalf("DecodeContinue(%q, %q) returned an unclean start key %q", token, keyPrefix, fromKey)
	}
	if rev == 0 {
		t.Fatalf("DecodeContinue(%q, %q) returned revision 0 without an error", token, keyPrefix)
	}
}

// FuzzDecodeContinue feeds arbitrary tokens to DecodeContinue: it must not
// panic, must fail only with ErrInvalid (a 400, not a 500), and must never
// return a start key outside the prefix.
func FuzzDecodeContinue(f *testing.F) {
	f.Fuzz(func(t *testing.T, token string, prefixSel uint8) {
		keyPrefix := fuzzPrefix(prefixSel)
		fromKey, rev, err := DecodeContinue(token, keyPrefix)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("DecodeContinue(%q, %q): error %v is not ErrInvalid (it would be a 500)", token, keyPrefix, err)
			}
			return
		}
		checkInsidePrefix(t, token, keyPrefix, fromKey, rev)
		// A token that decodes is stable: encoding what it decoded to and
		// decoding that again gives the same start.
		again, err := EncodeContinue(fromKey, keyPrefix, rev)
		if err != nil {
			t.Fatalf("EncodeContinue(%q, %q, %d) after a successful decode: %v", fromKey, keyPrefix, rev, err)
		}
		fromKey2, rev2, err := DecodeContinue(again, keyPrefix)
		if err != nil || fromKey2 != fromKey || rev2 != rev {
			t.Fatalf("re-encoded token %q decodes to (%q, %d, %v), want (%q, %d)", again, fromKey2, rev2, err, fromKey, rev)
		}
	})
}

// FuzzContinueRoundTrip encodes the token for a key under a prefix and
// decodes it: a key the store can produce (a clean relative suffix, as
// "<namespace>/<name>\x00", valid UTF-8) at a non-zero revision comes back
// unchanged; anything else is rejected with ErrInvalid or still lands inside
// the prefix.
func FuzzContinueRoundTrip(f *testing.F) {
	f.Fuzz(func(t *testing.T, prefixSel uint8, rest string, rev int64) {
		keyPrefix := fuzzPrefix(prefixSel)
		key := keyPrefix + rest
		token, err := EncodeContinue(key, keyPrefix, rev)
		if err != nil {
			t.Fatalf("EncodeContinue(%q, %q, %d): %v", key, keyPrefix, rev, err)
		}
		if _, err := base64.RawURLEncoding.DecodeString(token); err != nil {
			t.Fatalf("EncodeContinue(%q) = %q is not unpadded base64url: %v", key, token, err)
		}
		fromKey, gotRev, err := DecodeContinue(token, keyPrefix)
		switch {
		case rev == 0 || rest == "":
			if err == nil || !errors.Is(err, ErrInvalid) {
				t.Fatalf("DecodeContinue(EncodeContinue(%q, %d)) = (%q, %d, %v), want ErrInvalid", key, rev, fromKey, gotRev, err)
			}
		case cleanRelative(rest) && utf8.ValidString(rest):
			if err != nil || fromKey != key || gotRev != rev {
				t.Fatalf("round trip of (%q, %d) = (%q, %d, %v)", key, rev, fromKey, gotRev, err)
			}
		case err != nil:
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("DecodeContinue(EncodeContinue(%q)): error %v is not ErrInvalid", key, err)
			}
		default:
			// Upstream's format drops a leading slash of the suffix, and JSON
			// turns invalid UTF-8 into U+FFFD; neither comes out of the store
			// for valid names (prefixes end in "/", names are not empty and
			// are DNS labels), but the start must still stay inside.
			checkInsidePrefix(t, token, keyPrefix, fromKey, gotRev)
			if gotRev != rev {
				t.Fatalf("round trip of (%q, %d): revision %d", key, rev, gotRev)
			}
		}
	})
}

// FuzzParseResourceVersion: never panics; "" is 0; anything else is a
// non-negative decimal revision or an ErrInvalid (a 400); what is accepted
// survives SetResourceVersion / ObjectRevision.
func FuzzParseResourceVersion(f *testing.F) {
	f.Fuzz(func(t *testing.T, rv string) {
		v, err := ParseResourceVersion(rv)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseResourceVersion(%q): error %v is not ErrInvalid", rv, err)
			}
			if allDigits(rv) && len(strings.TrimLeft(rv, "0")) <= 18 {
				t.Fatalf("ParseResourceVersion(%q) rejected a decimal revision: %v", rv, err)
			}
			return
		}
		if rv == "" {
			if v != 0 {
				t.Fatalf(`ParseResourceVersion("") = %d, want 0`, v)
			}
			return
		}
		if v < 0 {
			t.Fatalf("ParseResourceVersion(%q) = %d: negative revision accepted", rv, v)
		}
		if want, perr := strconv.ParseInt(rv, 10, 64); perr != nil || want != v {
			t.Fatalf("ParseResourceVersion(%q) = %d, strconv says (%d, %v)", rv, v, want, perr)
		}
		obj := &corev1.Pod{}
		if err := SetResourceVersion(obj, v); err != nil {
			t.Fatal(err)
		}
		back, err := ObjectRevision(obj)
		if err != nil || back != v {
			t.Fatalf("SetResourceVersion(%d) then ObjectRevision = (%d, %v) (rv string %q)", v, back, err, obj.ResourceVersion)
		}
	})
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// TestWriteFuzzSeeds regenerates the seed corpora under testdata/fuzz when
// SKIFF_WRITE_FUZZ_SEEDS=1; otherwise it is skipped. Only files named
// seed-* are replaced, so inputs the fuzzer saved stay.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("SKIFF_WRITE_FUZZ_SEEDS") != "1" {
		t.Skip("set SKIFF_WRITE_FUZZ_SEEDS=1 to regenerate testdata/fuzz")
	}
	tok := func(v, start string, rv int64) string {
		return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"v":%q,"rv":%d,"start":%q}`, v, rv, start)))
	}
	raw := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	const v1 = "meta.k8s.io/v1"
	decode := map[string][]any{
		"valid":             {tok(v1, "default/nginx\x00", 42), uint8(0)},
		"valid-namespaced":  {tok(v1, "web-0\x00", 7), uint8(1)},
		"dotdot":            {tok(v1, "../secrets/kube-system/token\x00", 5), uint8(1)},
		"dotdot-middle":     {tok(v1, "a/../../../secrets\x00", 5), uint8(0)},
		"leading-slash":     {tok(v1, "/default/x\x00", 5), uint8(0)},
		"leading-dotdot":    {tok(v1, "/../x", 5), uint8(2)},
		"dot":               {tok(v1, ".", 5), uint8(3)},
		"trailing-slash":    {tok(v1, "default/", 5), uint8(0)},
		"double-slash":      {tok(v1, "default//x", 5), uint8(0)},
		"encoded-dots":      {tok(v1, "%2e%2e/x", 5), uint8(0)},
		"backslash":         {tok(v1, `..\..\x`, 5), uint8(0)},
		"nul":               {tok(v1, "\x00", 5), uint8(4)},
		"rv-zero":           {tok(v1, "default/x\x00", 0), uint8(0)},
		"rv-negative":       {tok(v1, "default/x\x00", -3), uint8(0)},
		"rv-max":            {tok(v1, "default/x\x00", 1<<63-1), uint8(0)},
		"rv-string":         {raw(`{"v":"meta.k8s.io/v1","rv":"5","start":"x"}`), uint8(0)},
		"rv-float":          {raw(`{"v":"meta.k8s.io/v1","rv":5.5,"start":"x"}`), uint8(0)},
		"rv-huge":           {raw(`{"v":"meta.k8s.io/v1","rv":99999999999999999999999,"start":"x"}`), uint8(0)},
		"start-empty":       {tok(v1, "", 5), uint8(0)},
		"start-null":        {raw(`{"v":"meta.k8s.io/v1","rv":5,"start":null}`), uint8(0)},
		"start-number":      {raw(`{"v":"meta.k8s.io/v1","rv":5,"start":12}`), uint8(0)},
		"wrong-version":     {tok("meta.k8s.io/v2", "x", 5), uint8(0)},
		"no-version":        {raw(`{"rv":5,"start":"x"}`), uint8(0)},
		"duplicate-fields":  {raw(`{"v":"meta.k8s.io/v1","rv":5,"start":"x","start":"../../y"}`), uint8(0)},
		"json-array":        {raw(`[1,2,3]`), uint8(0)},
		"json-null":         {raw(`null`), uint8(0)},
		"not-json":          {raw("not-json"), uint8(0)},
		"invalid-utf8":      {tok(v1, "default/\xff\xfe\x00", 5), uint8(0)},
		"padded-std-base64": {base64.StdEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":5,"start":"x"}`)), uint8(0)},
		"not-base64":        {"%%%not base64%%%", uint8(0)},
		"empty":             {"", uint8(0)},
		"deep-json":         {raw(strings.Repeat("[", 5000) + strings.Repeat("]", 5000)), uint8(0)},
		"unicode-dots":      {tok(v1, "\u2025/x", 5), uint8(0)},
	}
	roundTrip := map[string][]any{
		"namespace-name": {uint8(0), "default/nginx\x00", int64(42)},
		"name":           {uint8(1), "web-0\x00", int64(1)},
		"node":           {uint8(2), "node-1\x00", int64(99)},
		"dotdot":         {uint8(0), "../x", int64(5)},
		"leading-slash":  {uint8(0), "/x\x00", int64(5)},
		"rv-zero":        {uint8(0), "a\x00", int64(0)},
		"rv-negative":    {uint8(0), "a\x00", int64(-1)},
		"empty":          {uint8(3), "", int64(5)},
		"slash-only":     {uint8(0), "/", int64(5)},
		"invalid-utf8":   {uint8(4), "\xff\x00", int64(5)},
		"unicode":        {uint8(4), "名前\x00", int64(5)},
	}
	parseRV := map[string][]any{
		"empty": {""}, "zero": {"0"}, "one": {"1"}, "typical": {"123456"},
		"max": {"9223372036854775807"}, "overflow": {"9223372036854775808"},
		"negative": {"-1"}, "minus-zero": {"-0"}, "plus": {"+5"}, "leading-zeros": {"007"},
		"hex": {"0x10"}, "float": {"1.5"}, "exponent": {"1e3"}, "space": {" 5"},
		"letters": {"abc"}, "unicode-digits": {"١٢٣"}, "invalid-utf8": {"\xff"},
		"underscore": {"1_000"}, "long-zeros": {strings.Repeat("0", 40) + "1"},
	}
	for name, seeds := range map[string]map[string][]any{
		"FuzzDecodeContinue": decode, "FuzzContinueRoundTrip": roundTrip, "FuzzParseResourceVersion": parseRV,
	} {
		writeSeeds(t, name, seeds)
	}
}

// writeSeeds writes one corpus file per seed, in the "go test fuzz v1"
// format the fuzzing engine reads.
func writeSeeds(t *testing.T, fuzzName string, seeds map[string][]any) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", fuzzName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "seed-*"))
	for _, f := range old {
		_ = os.Remove(f)
	}
	for label, vals := range seeds {
		var b strings.Builder
		b.WriteString("go test fuzz v1\n")
		for _, v := range vals {
			switch v := v.(type) {
			case string:
				fmt.Fprintf(&b, "string(%q)\n", v)
			case []byte:
				fmt.Fprintf(&b, "[]byte(%q)\n", v)
			case uint8:
				fmt.Fprintf(&b, "byte(%q)\n", v)
			case int64:
				fmt.Fprintf(&b, "int64(%d)\n", v)
			case bool:
				fmt.Fprintf(&b, "bool(%v)\n", v)
			default:
				t.Fatalf("seed %s/%s: unsupported type %T", fuzzName, label, v)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "seed-"+label), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
