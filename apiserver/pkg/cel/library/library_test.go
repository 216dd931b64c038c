package library

import (
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
)

// newEnv builds an environment with All, optional types, the variable
// self (dyn) and extra.
func newEnv(t *testing.T, extra ...cel.EnvOption) *cel.Env {
	t.Helper()
	opts := append([]cel.EnvOption{cel.OptionalTypes(), cel.Variable("self", cel.DynType)}, All()...)
	env, err := cel.NewEnv(append(opts, extra...)...)
	if err != nil {
		t.Fatalf("building the environment: %v", err)
	}
	return env
}

// evaluate compiles, plans (with opts) and runs expr with self bound to
// self. A failure at any step is an error.
func evaluate(env *cel.Env, expr string, self any, opts ...cel.ProgramOption) (ref.Val, error) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("compile: %w", iss.Err())
	}
	prg, err := env.Program(ast, opts...)
	if err != nil {
		return nil, fmt.Errorf("program: %w", err)
	}
	vars := map[string]any{}
	if self != nil {
		vars["self"] = self
	}
	out, _, err := prg.Eval(vars)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// evalCase is one expression and its expected outcome: a value (want) or an
// error whose message contains wantErr.
type evalCase struct {
	name    string
	expr    string
	self    any
	want    any
	wantErr string
}

// runCases evaluates every case in env, with plain and with optimised
// programs (cel.OptOptimize, as skiff's admission policies use).
func runCases(t *testing.T, env *cel.Env, cases []evalCase) {
	t.Helper()
	for _, tt := range cases {
		for mode, opts := range map[string][]cel.ProgramOption{
			"plain":     nil,
			"optimized": {cel.EvalOptions(cel.OptOptimize)},
		} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) { runCase(t, env, tt, opts) })
		}
	}
}

// runCase evaluates one case with the program options opts.
func runCase(t *testing.T, env *cel.Env, tt evalCase, opts []cel.ProgramOption) {
	t.Helper()
	got, err := evaluate(env, tt.expr, tt.self, opts...)
	if tt.wantErr != "" {
		if err == nil {
			t.Fatalf("%s = %v, want an error containing %q", tt.expr, got, tt.wantErr)
		}
		if !strings.Contains(err.Error(), tt.wantErr) {
			t.Fatalf("%s: error %q, want it to contain %q", tt.expr, err, tt.wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", tt.expr, err)
	}
	assertValue(t, tt.expr, got, tt.want)
}

// assertValue checks that got is want: a ref.Val compares with Equal, any
// other want with the native value of got.
func assertValue(t *testing.T, expr string, got ref.Val, want any) {
	t.Helper()
	if w, ok := want.(ref.Val); ok {
		if got.Equal(w) != types.True {
			t.Fatalf("%s = %v (%s), want %v (%s)", expr, got, got.Type().TypeName(), w, w.Type().TypeName())
		}
		return
	}
	native, err := got.ConvertToNative(reflect.TypeOf(want))
	if err != nil {
		t.Fatalf("%s = %v (%s), want %#v: %v", expr, got, got.Type().TypeName(), want, err)
	}
	if !reflect.DeepEqual(native, want) {
		t.Fatalf("%s = %#v, want %#v", expr, native, want)
	}
}

func TestURLs(t *testing.T) {
	runCases(t, newEnv(t), []evalCase{
		{name: "port", expr: `url("https://a.b:8080/p?x=1").getPort()`, want: "8080"},
		{name: "no port", expr: `url("https://example.com/").getPort()`, want: ""},
		{name: "scheme", expr: `url("https://example.com/").getScheme()`, want: "https"},
		{name: "absolute path has no scheme", expr: `url("/path").getScheme()`, want: ""},
		{name: "host with port", expr: `url("https://example.com:80/").getHost()`, want: "example.com:80"},
		{name: "ipv6 host keeps brackets", expr: `url("https://[::1]:80/").getHost()`, want: "[::1]:80"},
		{name: "ipv6 hostname drops brackets", expr: `url("https://[::1]:80/").getHostname()`, want: "::1"},
		{name: "hostname", expr: `url("https://127.0.0.1:80/").getHostname()`, want: "127.0.0.1"},
		{name: "no host", expr: `url("/path").getHost()`, want: ""},
		{name: "escaped path", expr: `url("https://example.com/path with spaces/").getEscapedPath()`, want: "/path%20with%20spaces/"},
		{name: "empty path", expr: `url("https://example.com").getEscapedPath()`, want: ""},
		{name: "query", expr: `url("https://example.com/path?k1=a&k2=b&k2=c").getQuery()`,
			want: map[string][]string{"k1": {"a"}, "k2": {"b", "c"}}},
		{name: "query unescaped", expr: `url("https://example.com/path?key with spaces=value with spaces").getQuery()`,
			want: map[string][]string{"key with spaces": {"value with spaces"}}},
		{name: "empty query", expr: `url("https://example.com/path?").getQuery()`, want: map[string][]string{}},
		{name: "fragment not in path", expr: `url("https://example.com/p#frag").getEscapedPath()`, want: "/p"},
		{name: "fragment not in query", expr: `url("https://example.com/p?a=b#frag").getQuery()`,
			want: map[string][]string{"a": {"b"}}},
		{name: "url of dyn", expr: `url(self).getHost()`, self: "https://example.com:8443/x", want: "example.com:8443"},
		{name: "equal urls", expr: `url("https://a/b") == url("https://a/b")`, want: true},
		{name: "type name", expr: `type(url("https://a/b")) == type(url("/c"))`, want: true},
		{name: "isURL valid", expr: `isURL("https://user:pass@example.com:80/path?query=val#fragment")`, want: true},
		{name: "isURL absolute path", expr: `isURL("/absolute-path")`, want: true},
		{name: "isURL not a url", expr: `isURL("not a url")`, want: false},
		{name: "isURL relative", expr: `isURL("../relative-path")`, want: false},
		{name: "isURL bad port", expr: `isURL("https://a:b:c/")`, want: false},
		{name: "isURL empty", expr: `isURL("")`, want: false},
		{name: "relative url is an error", expr: `url("../relative-path")`,
			wantErr: `URL parse error during conversion from string: parse "../relative-path": invalid URI for request`},
		{name: "bad port is an error", expr: `url("https://a:b:c/")`,
			wantErr: `URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host`},
		{name: "not a url is an error", expr: `url("not a url")`, wantErr: "URL parse error during conversion from string"},
		{name: "getPort on a string does not compile", expr: `"https://a".getPort()`, wantErr: "found no matching overload for 'getPort'"},
	})
}

func TestRegex(t *testing.T) {
	runCases(t, newEnv(t), []evalCase{
		{name: "find", expr: `"abc 123".find("[0-9]+")`, want: "123"},
		{name: "find no match", expr: `"abc 123".find("xyz")`, want: ""},
		{name: "findAll", expr: `"123 abc 456".findAll("[0-9]+")`, want: []string{"123", "456"}},
		{name: "findAll limit", expr: `"123 abc 456".findAll("[0-9]+", 1)`, want: []string{"123"}},
		{name: "findAll limit zero", expr: `"123 abc 456".findAll("[0-9]+", 0).size()`, want: int64(0)},
		{name: "findAll negative limit is all", expr: `"1 2 3".findAll("[0-9]", -1)`, want: []string{"1", "2", "3"}},
		{name: "findAll huge limit", expr: `"1 2 3".findAll("[0-9]", 9223372036854775807)`, want: []string{"1", "2", "3"}},
		{name: "findAll no match", expr: `"123 abc 456".findAll("xyz") == []`, want: true},
		{name: "dynamic pattern", expr: `"k=v".find(self)`, self: "[a-z]=", want: "k="},
		{name: "dynamic findAll", expr: `"a1b2".findAll(self, 1)`, self: "[0-9]", want: []string{"1"}},
		{name: "constant bad pattern fails the program", expr: `"abc".find("[")`,
			wantErr: "error parsing regexp: missing closing ]: `[`"},
		{name: "dynamic bad pattern fails evaluation", expr: `"abc".find(self)`, self: "(",
			wantErr: "Illegal regex: error parsing regexp: missing closing ): `(`"},
		{name: "dynamic bad pattern in findAll", expr: `"abc".findAll(self)`, self: "(",
			wantErr: "Illegal regex: error parsing regexp"},
	})
}

func TestLists(t *testing.T) {
	runCases(t, newEnv(t), []evalCase{
		{name: "isSorted ints", expr: `[1, 2, 3].isSorted()`, want: true},
		{name: "isSorted strings with repeats", expr: `["a", "b", "b", "c"].isSorted()`, want: true},
		{name: "isSorted doubles unsorted", expr: `[2.0, 1.0].isSorted()`, want: false},
		{name: "isSorted single", expr: `[1].isSorted()`, want: true},
		{name: "isSorted empty", expr: `[].isSorted()`, want: true},
		{name: "isSorted bytes", expr: `[b"a", b"b"].isSorted()`, want: true},
		{name: "isSorted bools", expr: `[true, false].isSorted()`, want: false},
		{name: "isSorted timestamps", expr: `[timestamp("2020-01-01T00:00:00Z"), timestamp("2021-01-01T00:00:00Z")].isSorted()`, want: true},
		{name: "sum ints", expr: `[1, 2, 3].sum()`, want: int64(6)},
		{name: "sum uints", expr: `[1u, 2u].sum()`, want: uint64(3)},
		{name: "sum doubles", expr: `[1.0, 3.5].sum()`, want: 4.5},
		{name: "sum durations", expr: `[duration("1m"), duration("1s")].sum()`, want: types.Duration{Duration: 61 * time.Second}},
		{name: "sum empty", expr: `[].sum()`, want: int64(0)},
		{name: "sum overflow", expr: `[9223372036854775807, 1].sum()`, wantErr: "integer overflow"},
		{name: "sum of dyn doubles", expr: `self.sum()`, self: []any{1.5, 3.0}, want: 4.5},
		{name: "min", expr: `[3, 1, 2].min()`, want: int64(1)},
		{name: "max", expr: `[1, 3, 2].max()`, want: int64(3)},
		{name: "max strings", expr: `["b", "c", "a"].max()`, want: "c"},
		{name: "min single", expr: `[1].min()`, want: int64(1)},
		{name: "min durations", expr: `[duration("2s"), duration("1s")].min()`, want: types.Duration{Duration: time.Second}},
		{name: "max timestamps", expr: `[timestamp("2020-01-01T00:00:00Z"), timestamp("2021-01-01T00:00:00Z")].max() == timestamp("2021-01-01T00:00:00Z")`, want: true},
		{name: "min of dyn", expr: `self.min()`, self: []any{"b", "a"}, want: "a"},
		{name: "min empty", expr: `[].min()`, wantErr: "min called on empty list"},
		{name: "max empty", expr: `[].max()`, wantErr: "max called on empty list"},
		{name: "max empty dyn", expr: `self.max()`, self: []any{}, wantErr: "max called on empty list"},
		{name: "indexOf", expr: `[1, 2, 2, 3].indexOf(2)`, want: int64(1)},
		{name: "lastIndexOf", expr: `["a", "b", "b", "c"].lastIndexOf("b")`, want: int64(2)},
		{name: "indexOf missing", expr: `[1.0].indexOf(1.1)`, want: int64(-1)},
		{name: "indexOf empty", expr: `[].indexOf("string")`, want: int64(-1)},
		{name: "lastIndexOf missing", expr: `[1, 2].lastIndexOf(5)`, want: int64(-1)},
		{name: "indexOf lists", expr: `[[1], [2]].indexOf([2])`, want: int64(1)},
		{name: "sum of strings does not compile", expr: `["a"].sum()`, wantErr: "found no matching overload for 'sum'"},
		{name: "min of maps does not compile", expr: `[{1: 2}].min()`, wantErr: "found no matching overload for 'min'"},
		{name: "min of mixed dyn is an error", expr: `self.min()`, self: []any{"a", int64(1)}, wantErr: "no such overload"},
	})
}

func TestQuantity(t *testing.T) {
	runCases(t, newEnv(t), []evalCase{
		{name: "isGreaterThan", expr: `quantity("1Gi").isGreaterThan(quantity("100Mi"))`, want: true},
		{name: "isGreaterThan false", expr: `quantity("50Mi").isGreaterThan(quantity("100Mi"))`, want: false},
		{name: "isLessThan", expr: `quantity("50M").isLessThan(quantity("100M"))`, want: true},
		{name: "isLessThan false", expr: `quantity("100M").isLessThan(quantity("50M"))`, want: false},
		{name: "compareTo equal", expr: `quantity("200M").compareTo(quantity("0.2G"))`, want: int64(0)},
		{name: "compareTo less", expr: `quantity("50M").compareTo(quantity("50Mi"))`, want: int64(-1)},
		{name: "compareTo greater", expr: `quantity("50Mi").compareTo(quantity("50M"))`, want: int64(1)},
		{name: "equal across suffixes", expr: `quantity("1Ki") == quantity("1024")`, want: true},
		{name: "isQuantity", expr: `isQuantity("1.3Gi")`, want: true},
		{name: "isQuantity decimal", expr: `isQuantity("10000k")`, want: true},
		{name: "isQuantity comma", expr: `isQuantity("1,3G")`, want: false},
		{name: "isQuantity bad suffix", expr: `isQuantity("200K")`, want: false},
		{name: "isQuantity word", expr: `isQuantity("Three")`, want: false},
		// resource.ParseQuantity accepts a bare suffix as zero, although
		// Kubernetes' documentation calls it an error; the library follows
		// ParseQuantity, as Kubernetes' code does.
		{name: "isQuantity suffix only", expr: `isQuantity("Mi")`, want: true},
		{name: "isQuantity empty", expr: `isQuantity("")`, want: false},
		{name: "isInteger", expr: `quantity("50k").isInteger()`, want: true},
		{name: "isInteger large", expr: `quantity("50000000G").isInteger()`, want: true},
		{name: "isInteger overflow", expr: `quantity("9999999999999999999999999999999999999G").isInteger()`, want: false},
		{name: "isInteger fraction", expr: `quantity("1.5").isInteger()`, want: false},
		{name: "asInteger", expr: `quantity("50k").asInteger()`, want: int64(50000)},
		{name: "asInteger overflow", expr: `quantity("9999999999999999999999999999999999999G").asInteger()`,
			wantErr: "cannot convert value to integer"},
		{name: "asInteger fraction", expr: `quantity("500m").asInteger()`, wantErr: "cannot convert value to integer"},
		{name: "asApproximateFloat", expr: `quantity("50k").sub(20000).asApproximateFloat()`, want: 30000.0},
		{name: "asApproximateFloat milli", expr: `quantity("1500m").asApproximateFloat()`, want: 1.5},
		{name: "sign positive", expr: `sign(quantity("5"))`, want: int64(1)},
		{name: "sign negative as method", expr: `quantity("-5Mi").sign()`, want: int64(-1)},
		{name: "sign zero", expr: `quantity("0").sign()`, want: int64(0)},
		{name: "add quantity", expr: `quantity("50k").add(quantity("20k")) == quantity("70k")`, want: true},
		{name: "add int", expr: `quantity("50k").add(20) == quantity("50020")`, want: true},
		{name: "sub quantity", expr: `quantity("50k").sub(quantity("20k")) == quantity("30k")`, want: true},
		{name: "sub int", expr: `quantity("50k").sub(20000) == quantity("30k")`, want: true},
		{name: "chain", expr: `quantity("50k").add(20).sub(quantity("100k")).sub(-50000) == quantity("20")`, want: true},
		{name: "add does not change the receiver", expr: `[quantity("1")].map(q, [q.add(1), q]).all(p, p[1] == quantity("1") && p[0] == quantity("2"))`, want: true},
		{name: "result compares both ways", expr: `quantity("2") == quantity("1").add(1)`, want: true},
		{name: "bad suffix", expr: `quantity("200K")`, wantErr: "unable to parse quantity's suffix"},
		{name: "not a number", expr: `quantity("Three")`, wantErr: "quantities must match the regular expression"},
		{name: "empty", expr: `quantity("")`, wantErr: "quantities must match the regular expression"},
		{name: "add a string does not compile", expr: `quantity("1").add("2")`, wantErr: "found no matching overload for 'add'"},
	})
}

func TestIP(t *testing.T) {
	runCases(t, newEnv(t), []evalCase{
		{name: "family 4", expr: `ip("10.0.0.1").family()`, want: int64(4)},
		{name: "family 6", expr: `ip("2001:db8::1").family()`, want: int64(6)},
		{name: "isIP", expr: `isIP("10.0.0.1")`, want: true},
		{name: "isIP v6", expr: `isIP("::1")`, want: true},
		{name: "isIP rejects garbage", expr: `isIP("1.2.3")`, want: false},
		{name: "isIP rejects mapped", expr: `isIP("::ffff:1.2.3.4")`, want: false},
		{name: "isIP rejects zone", expr: `isIP("fe80::1%eth0")`, want: false},
		{name: "isIP rejects cidr", expr: `isIP("10.0.0.0/8")`, want: false},
		{name: "isUnspecified v4", expr: `ip("0.0.0.0").isUnspecified()`, want: true},
		{name: "isUnspecified v6", expr: `ip("::").isUnspecified()`, want: true},
		{name: "isUnspecified false", expr: `ip("10.0.0.1").isUnspecified()`, want: false},
		{name: "isLoopback", expr: `ip("127.0.0.1").isLoopback()`, want: true},
		{name: "isLoopback v6", expr: `ip("::1").isLoopback()`, want: true},
		{name: "isLoopback false", expr: `ip("10.0.0.1").isLoopback()`, want: false},
		{name: "isLinkLocalMulticast", expr: `ip("224.0.0.1").isLinkLocalMulticast()`, want: true},
		{name: "isLinkLocalMulticast v6", expr: `ip("ff02::1").isLinkLocalMulticast()`, want: true},
		{name: "isLinkLocalMulticast false", expr: `ip("224.0.1.1").isLinkLocalMulticast()`, want: false},
		{name: "isLinkLocalUnicast", expr: `ip("169.254.169.254").isLinkLocalUnicast()`, want: true},
		{name: "isLinkLocalUnicast v6", expr: `ip("fe80::1").isLinkLocalUnicast()`, want: true},
		{name: "isLinkLocalUnicast false", expr: `ip("192.168.0.1").isLinkLocalUnicast()`, want: false},
		{name: "isGlobalUnicast", expr: `ip("192.168.0.1").isGlobalUnicast()`, want: true},
		{name: "isGlobalUnicast v6", expr: `ip("2001:db8::1").isGlobalUnicast()`, want: true},
		{name: "isGlobalUnicast broadcast", expr: `ip("255.255.255.255").isGlobalUnicast()`, want: false},
		{name: "string", expr: `string(ip("2001:DB8::0:1"))`, want: "2001:db8::1"},
		{name: "string v4", expr: `string(ip("10.0.0.1"))`, want: "10.0.0.1"},
		{name: "equal", expr: `ip("2001:db8::1") == ip("2001:DB8:0::1")`, want: true},
		{name: "not equal", expr: `ip("10.0.0.1") == ip("10.0.0.2")`, want: false},
		{name: "type name", expr: `type(ip("10.0.0.1")) == net.IP`, want: true},
		{name: "isCanonical", expr: `ip.isCanonical("2001:db8::1")`, want: true},
		{name: "isCanonical false", expr: `ip.isCanonical("2001:DB8::1")`, want: false},
		{name: "isCanonical error", expr: `ip.isCanonical("nope")`, wantErr: `IP Address "nope" parse error during conversion from string`},
		{name: "invalid", expr: `ip("1.2.3")`,
			wantErr: `IP Address "1.2.3" parse error during conversion from string: ParseAddr("1.2.3"): IPv4 address too short`},
		{name: "mapped", expr: `ip("::ffff:1.2.3.4")`, wantErr: `IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed`},
		{name: "zone", expr: `ip("fe80::1%eth0")`, wantErr: `IP address "fe80::1%eth0" with zone value is not allowed`},
		{name: "leading zeros", expr: `ip("010.0.0.1")`, wantErr: `parse error during conversion from string`},
		{name: "empty", expr: `ip("")`, wantErr: `IP Address "" parse error during conversion from string`},
	})
}

func TestCIDR(t *testing.T) {
	runCases(t, newEnv(t), []evalCase{
		{name: "containsIP string", expr: `cidr("10.0.0.0/8").containsIP("10.1.2.3")`, want: true},
		{name: "containsIP string outside", expr: `cidr("10.0.0.0/8").containsIP("11.1.2.3")`, want: false},
		{name: "containsIP ip", expr: `cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))`, want: true},
		{name: "containsIP other family", expr: `cidr("10.0.0.0/8").containsIP(ip("::1"))`, want: false},
		{name: "containsIP bad ip", expr: `cidr("10.0.0.0/8").containsIP("nope")`,
			wantErr: `IP Address "nope" parse error during conversion from string`},
		{name: "containsCIDR string", expr: `cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")`, want: true},
		{name: "containsCIDR itself", expr: `cidr("10.0.0.0/8").containsCIDR(cidr("10.0.0.0/8"))`, want: true},
		{name: "containsCIDR larger", expr: `cidr("10.1.0.0/16").containsCIDR("10.0.0.0/8")`, want: false},
		{name: "containsCIDR disjoint", expr: `cidr("10.0.0.0/8").containsCIDR("11.0.0.0/16")`, want: false},
		{name: "containsCIDR bad", expr: `cidr("10.0.0.0/8").containsCIDR("10.0.0.0/99")`,
			wantErr: "network address parse error during conversion from string"},
		{name: "ip keeps host bits", expr: `string(cidr("10.1.2.3/8").ip())`, want: "10.1.2.3"},
		{name: "ip is an IP", expr: `cidr("10.1.2.3/8").ip() == ip("10.1.2.3")`, want: true},
		{name: "ip family", expr: `cidr("2001:db8::/32").ip().family()`, want: int64(6)},
		{name: "masked", expr: `cidr("10.1.2.3/8").masked() == cidr("10.0.0.0/8")`, want: true},
		{name: "masked string", expr: `string(cidr("2001:db8::1/32").masked())`, want: "2001:db8::/32"},
		{name: "not masked differs", expr: `cidr("10.1.2.3/8") == cidr("10.0.0.0/8")`, want: false},
		{name: "prefixLength", expr: `cidr("10.0.0.0/8").prefixLength()`, want: int64(8)},
		{name: "prefixLength v6", expr: `cidr("::/0").prefixLength()`, want: int64(0)},
		{name: "string", expr: `string(cidr("10.0.0.0/8"))`, want: "10.0.0.0/8"},
		{name: "type name", expr: `type(cidr("10.0.0.0/8")) == net.CIDR`, want: true},
		{name: "isCIDR", expr: `isCIDR("10.0.0.0/8")`, want: true},
		{name: "isCIDR ip only", expr: `isCIDR("10.0.0.1")`, want: false},
		{name: "isCIDR mapped", expr: `isCIDR("::ffff:1.2.3.4/120")`, want: false},
		{name: "isCIDR bad length", expr: `isCIDR("10.0.0.0/33")`, want: false},
		{name: "invalid", expr: `cidr("10.0.0.0/33")`,
			wantErr: `network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.0/33"): prefix length out of range`},
		{name: "mapped", expr: `cidr("::ffff:1.2.3.4/120")`,
			wantErr: `network address parse error during conversion from string: IPv4-mapped IPv6 address "::ffff:1.2.3.4/120" is not allowed`},
		{name: "no bits", expr: `cidr("2001:db8::/")`,
			wantErr: `network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("2001:db8::/"): bad bits after slash: ""`},
		{name: "empty", expr: `cidr("")`, wantErr: "network address parse error during conversion from string"},
	})
}

func TestFormat(t *testing.T) {
	runCases(t, newEnv(t), []evalCase{
		{name: "valid label", expr: `format.dns1123Label().validate("my-label-name").hasValue()`, want: false},
		{name: "invalid label", expr: `format.dns1123Label().validate("My_Label").value()`,
			want: []string{"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"}},
		{name: "named", expr: `format.named("dns1123Subdomain").value().validate("apiextensions.k8s.io").hasValue()`, want: false},
		{name: "named unknown", expr: `format.named("nope").hasValue()`, want: false},
		{name: "named equal", expr: `format.named("dns1123Label").value() == format.dns1123Label()`, want: true},
		{name: "named differ", expr: `format.dns1123Label() == format.dns1035Label()`, want: false},
		{name: "dns1035Label rejects leading digit", expr: `format.dns1035Label().validate("1abc").hasValue()`, want: true},
		{name: "qualifiedName", expr: `format.qualifiedName().validate("apiextensions.k8s.io/v1beta1").hasValue()`, want: false},
		{name: "qualifiedName bad", expr: `format.qualifiedName().validate("a/b/c").hasValue()`, want: true},
		{name: "label prefix allows trailing dash", expr: `format.dns1123LabelPrefix().validate("my-label-prefix-").hasValue()`, want: false},
		{name: "label rejects trailing dash", expr: `format.dns1123Label().validate("my-label-prefix-").hasValue()`, want: true},
		{name: "subdomain prefix", expr: `format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-").hasValue()`, want: false},
		{name: "dns1035 prefix", expr: `format.dns1035LabelPrefix().validate("my-label-prefix-").hasValue()`, want: false},
		{name: "labelValue", expr: `format.labelValue().validate("").hasValue()`, want: false},
		{name: "labelValue bad", expr: `format.labelValue().validate("-a").hasValue()`, want: true},
		{name: "uri", expr: `format.uri().validate("http://example.com").hasValue()`, want: false},
		{name: "uri bad", expr: `format.uri().validate("../x").value()`, want: []string{`parse "../x": invalid URI for request`}},
		{name: "uuid", expr: `format.uuid().validate("123e4567-e89b-12d3-a456-426614174000").hasValue()`, want: false},
		{name: "uuid bad", expr: `format.uuid().validate("123").value()`, want: []string{"does not match the UUID format"}},
		{name: "byte", expr: `format.byte().validate("aGVsbG8=").hasValue()`, want: false},
		{name: "byte bad", expr: `format.byte().validate("!!").value()`, want: []string{"invalid base64"}},
		{name: "date", expr: `format.date().validate("2021-01-01").hasValue()`, want: false},
		{name: "date bad", expr: `format.date().validate("2021-13-01").value()`, want: []string{"invalid date"}},
		{name: "datetime", expr: `format.datetime().validate("2021-01-01T00:00:00Z").hasValue()`, want: false},
		{name: "datetime bad", expr: `format.datetime().validate("yesterday").value()`, want: []string{"invalid datetime"}},
		{name: "unknown format function does not compile", expr: `format.nope()`, wantErr: "undeclared reference to 'format'"},
	})
}

// TestEveryNamedFormat checks that format.named and format.<name>() know
// the same formats.
func TestEveryNamedFormat(t *testing.T) {
	env := newEnv(t)
	for name := range namedFormats() {
		t.Run(name, func(t *testing.T) {
			expr := fmt.Sprintf(`format.named(%q).value() == format.%s()`, name, name)
			got, err := evaluate(env, expr, nil)
			if err != nil {
				t.Fatalf("%s: %v", expr, err)
			}
			assertValue(t, expr, got, true)
		})
	}
}

// TestWithExtensions checks that every library, alone and all together,
// fits in an environment with cel-go's extensions (as skiff's CRD and
// admission policy environments use them) without a declaration clash, and
// that the functions both declare (indexOf, lastIndexOf on strings) keep
// working for both.
func TestWithExtensions(t *testing.T) {
	extensions := []cel.EnvOption{
		cel.OptionalTypes(),
		cel.HomogeneousAggregateLiterals(),
		cel.CrossTypeNumericComparisons(true),
		ext.Strings(ext.StringsVersion(2)),
		ext.Lists(),
		ext.Sets(),
		ext.Math(),
		ext.Encoders(),
		ext.Bindings(),
	}
	// crdEnv is the option list of apiextensions' celEnv.
	crdEnv := []cel.EnvOption{
		cel.Variable("self", cel.DynType),
		cel.Variable("oldSelf", cel.OptionalType(cel.DynType)),
		cel.OptionalTypes(),
		ext.Strings(), ext.Lists(), ext.Sets(), ext.Math(),
	}
	libs := map[string][]cel.EnvOption{
		"URLs": {URLs()}, "Regex": {Regex()}, "Lists": {Lists()}, "Quantity": {Quantity()},
		"IP": {IP()}, "CIDR": {IP(), CIDR()}, "Format": {Format()}, "All": All(),
		"All twice": append(All(), All()...),
		"Libraries": {Libraries()}, "Libraries and All": append(All(), Libraries()),
	}
	for name, opts := range libs {
		t.Run(name, func(t *testing.T) {
			for base, baseOpts := range map[string][]cel.EnvOption{"policy": extensions, "crd": crdEnv} {
				if _, err := cel.NewEnv(append(append([]cel.EnvOption{}, baseOpts...), opts...)...); err != nil {
					t.Fatalf("building the %s environment with %s: %v", base, name, err)
				}
			}
		})
	}
	env := newEnv(t, extensions[1:]...)
	combined, err := cel.NewEnv(append(append([]cel.EnvOption{}, extensions...), Libraries())...)
	if err != nil {
		t.Fatalf("building an environment with Libraries: %v", err)
	}
	runCases(t, combined, []evalCase{
		{name: "Libraries declares the functions", expr: `quantity("1Gi").isGreaterThan(quantity("100Mi")) && [1, 2].sum() == 3 && format.named("uri").hasValue()`, want: true},
	})
	runCases(t, env, []evalCase{
		{name: "string indexOf from ext.Strings", expr: `"abcb".indexOf("b")`, want: int64(1)},
		{name: "string lastIndexOf from ext.Strings", expr: `"abcb".lastIndexOf("b")`, want: int64(3)},
		{name: "list indexOf", expr: `[1, 2, 2].indexOf(2)`, want: int64(1)},
		{name: "list lastIndexOf", expr: `[1, 2, 2].lastIndexOf(2)`, want: int64(2)},
		{name: "ext sort then isSorted", expr: `[3, 1, 2].sort().isSorted()`, want: true},
		{name: "ext math with list max", expr: `math.greatest([1, 5, 3]) == [1, 5, 3].max()`, want: true},
		{name: "ext sets with cidr", expr: `sets.contains(["a", "b"], ["a"]) && cidr("10.0.0.0/8").containsIP("10.0.0.1")`, want: true},
		{name: "ext strings with regex", expr: `"A1".lowerAscii().find("[a-z]")`, want: "a"},
		{name: "cross numeric compare of sum", expr: `[1, 2].sum() < 3.5`, want: true},
	})
}

// TestBadInputsAreErrors evaluates functions with wrong runtime arguments
// (possible through dyn) and extreme inputs: each gives a value or an
// error, never a panic.
func TestBadInputsAreErrors(t *testing.T) {
	env := newEnv(t)
	exprs := []string{
		`url(self)`, `isURL(self)`, `quantity(self)`, `isQuantity(self)`, `ip(self)`, `isIP(self)`,
		`cidr(self)`, `isCIDR(self)`, `ip.isCanonical(self)`, `format.named(self)`,
		`self.sum()`, `self.min()`, `self.max()`, `self.isSorted()`, `self.indexOf(1)`, `self.lastIndexOf(1)`,
		`self.find("a")`, `self.findAll("a")`, `"a".find(self)`, `self.getHost()`, `self.asInteger()`,
		`self.family()`, `self.containsIP("1.2.3.4")`, `self.validate("a")`, `quantity("1").add(self)`,
		`cidr("10.0.0.0/8").containsIP(self)`, `cidr("10.0.0.0/8").containsCIDR(self)`,
	}
	inputs := []any{int64(1), "", "x", []any{}, []any{1.0, "a"}, map[string]any{"a": 1}, nil, math.Inf(1)}
	for _, expr := range exprs {
		for _, in := range inputs {
			t.Run(fmt.Sprintf("%s with %#v", expr, in), func(t *testing.T) {
				// cel-go turns a panic in a function into an
				// "internal error: ..." evaluation error.
				_, err := evaluate(env, expr, in)
				if err != nil && strings.HasPrefix(err.Error(), "internal error") {
					t.Fatalf("%s with self=%#v panicked: %v", expr, in, err)
				}
			})
		}
	}
	// Quantities at the edges of their range.
	runCases(t, env, []evalCase{
		{name: "huge quantity is no integer", expr: `quantity("1e300").isInteger()`, want: false},
		{name: "huge quantity as float", expr: `quantity("9e18").add(quantity("9e18")).asApproximateFloat() > 1e19`, want: true},
		{name: "add past int64", expr: `quantity("9223372036854775807").add(1).isInteger()`, want: false},
		{name: "asInteger past int64", expr: `quantity("9223372036854775807").add(1).asInteger()`,
			wantErr: "cannot convert value to integer"},
	})
}

// TestErrorsAreCELErrors checks that a library error reaches the caller of
// Eval as the error, with the library's message unchanged.
func TestErrorsAreCELErrors(t *testing.T) {
	_, err := evaluate(newEnv(t), `[].min()`, nil)
	if err == nil {
		t.Fatal("[].min() evaluated without error")
	}
	if err.Error() != "min called on empty list" {
		t.Fatalf("error %q, want %q", err, "min called on empty list")
	}
}

// costOf evaluates expr with self and returns its runtime cost, with the
// CostEstimator when withEstimator is set and cel-go's default call costs
// otherwise.
func costOf(t *testing.T, env *cel.Env, expr string, self any, withEstimator bool) uint64 {
	t.Helper()
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("compile %s: %v", expr, iss.Err())
	}
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptTrackCost)}
	if withEstimator {
		opts = append(opts, cel.CostTracking(CostEstimator{}))
	}
	prg, err := env.Program(ast, opts...)
	if err != nil {
		t.Fatalf("program %s: %v", expr, err)
	}
	_, det, err := prg.Eval(map[string]any{"self": self})
	if err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	return *det.ActualCost()
}

// TestCostEstimator checks the call costs the estimator charges, as the
// difference to cel-go's default cost of 1 per call.
func TestCostEstimator(t *testing.T) {
	env := newEnv(t, ext.Strings())
	long := strings.Repeat("a", 1000)
	ints := make([]any, 500)
	for i := range ints {
		ints[i] = int64(i)
	}
	strs := []any{strings.Repeat("x", 100), strings.Repeat("y", 100)}
	tests := []struct {
		name     string
		expr     string
		self     any
		callCost uint64
	}{
		{name: "isSorted of ints costs a traversal", expr: `self.isSorted()`, self: ints, callCost: 500},
		{name: "sum of ints", expr: `self.sum()`, self: ints, callCost: 500},
		{name: "max of strings counts their length", expr: `self.max()`, self: strs, callCost: 20},
		{name: "find: string times pattern", expr: `self.find("aaaaaaaa")`, self: long, callCost: 101 * 2},
		{name: "url parse", expr: `url("https://" + self).getHost()`, self: long, callCost: 101},
		{name: "quantity parse", expr: `quantity(self)`, self: "1000000Mi", callCost: 1},
		{name: "lowerAscii", expr: `self.lowerAscii()`, self: long, callCost: 100},
		{name: "containsIP string", expr: `cidr("10.0.0.0/8").containsIP(self)`, self: "10.0.0.1", callCost: 1 + 1},
		{name: "containsIP ip", expr: `cidr("10.0.0.0/8").containsIP(ip(self))`, self: "10.0.0.1", callCost: 1},
		{name: "containsCIDR string", expr: `cidr("10.0.0.0/8").containsCIDR(self)`, self: "10.0.0.0/16", callCost: 1 + 1 + 1 + 2},
		{name: "validate", expr: `format.dns1123Label().validate(self)`, self: long, callCost: 101 * 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			with := costOf(t, env, tt.expr, tt.self, true)
			without := costOf(t, env, tt.expr, tt.self, false)
			if with < without || with-without != tt.callCost-1 {
				t.Fatalf("%s costs %d with the estimator and %d without, want a difference of %d",
					tt.expr, with, without, tt.callCost-1)
			}
		})
	}
	t.Run("dispatched at runtime", func(t *testing.T) {
		// With dyn arguments cel-go passes no overload id: the cost
		// depends on the argument types.
		cidr := CIDRValue{Prefix: netip.MustParsePrefix("10.0.0.0/8")}
		for _, c := range []struct {
			function string
			args     []ref.Val
			want     uint64
		}{
			{"ip", []ref.Val{cidr}, 1},
			{"ip", []ref.Val{types.String(strings.Repeat("1", 30))}, 3},
			{"containsIP", []ref.Val{cidr, types.String(strings.Repeat("1", 30))}, 1 + 3},
			{"containsIP", []ref.Val{cidr, IPValue{Addr: netip.MustParseAddr("10.0.0.1")}}, 1},
			{"containsCIDR", []ref.Val{cidr, cidr}, 1 + 1 + 1},
		} {
			got := CostEstimator{}.CallCost(c.function, "", c.args, types.True)
			if got == nil || *got != c.want {
				t.Errorf("CallCost(%s, %v) = %v, want %d", c.function, c.args, got, c.want)
			}
		}
		if got := (CostEstimator{}).CallCost("size", "", []ref.Val{types.String("a")}, types.Int(1)); got != nil {
			t.Errorf("CallCost(size) = %d, want nil (cel-go's default)", *got)
		}
	})
	t.Run("limit", func(t *testing.T) {
		ast, iss := env.Compile(`self.isSorted()`)
		if iss.Err() != nil {
			t.Fatal(iss.Err())
		}
		prg, err := env.Program(ast, cel.CostTracking(CostEstimator{}), cel.CostLimit(100))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := prg.Eval(map[string]any{"self": ints}); err == nil || !strings.Contains(err.Error(), "cost limit exceeded") {
			t.Fatalf("isSorted of 500 ints with a limit of 100: error %v, want the cost limit exceeded", err)
		}
	})
}
