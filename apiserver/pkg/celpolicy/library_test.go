package celpolicy

import (
	"context"
	"strings"
	"testing"
)

// TestUpstreamLibraries: policy expressions may call the functions of
// k8s.io/apiserver/pkg/cel/library, and they evaluate as upstream's do.
func TestUpstreamLibraries(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"spec": map[string]any{
		"url": "https://example.com:8443/path?q=1", "memory": "1536Mi", "ip": "2001:db8::1", "cidr": "192.168.0.0/16",
		"name": "web-1", "ports": []any{int64(80), int64(443), int64(8080)}, "image": "registry.example.com/app:v1.2",
	}}
	for _, expr := range []string{
		"isURL(object.spec.url) && url(object.spec.url).getPort() == '8443' && url(object.spec.url).getQuery()['q'] == ['1']",
		"quantity(object.spec.memory).isGreaterThan(quantity('1Gi')) && quantity(object.spec.memory).asApproximateFloat() > 1e9",
		"isQuantity('1.5') && !isQuantity('1.5.1')",
		"ip(object.spec.ip).family() == 6 && ip.isCanonical(object.spec.ip) && !isIP('300.1.1.1')",
		"cidr(object.spec.cidr).containsIP('192.168.3.4') && cidr(object.spec.cidr).masked() == cidr('192.168.0.0/16') && cidr(object.spec.cidr).ip() == ip('192.168.0.0')",
		"!format.dns1123Label().validate(object.spec.name).hasValue() && format.named('dns1123Subdomain').value().validate('Bad_Name').hasValue()",
		"object.spec.ports.isSorted() && object.spec.ports.sum() == 8603 && object.spec.ports.max() == 8080 && object.spec.ports.indexOf(443) == 1",
		"object.spec.image.find('v[0-9.]+$') == 'v1.2' && object.spec.image.findAll('[a-z]+').size() == 5",
		"authorizer.group('').resource('pods').check('get').allowed()",
	} {
		t.Run(expr, func(t *testing.T) {
			p, err := env.Compile(expr, Validation)
			if err != nil {
				t.Fatal(err)
			}
			ok, err := p.EvalBool(context.Background(), &Activation{Object: obj, Authorize: func(context.Context, AuthzRequest) (bool, string, error) { return true, "", nil }})
			if err != nil || !ok {
				t.Errorf("= %v, %v; want true", ok, err)
			}
		})
	}
	// Upstream's per-call cost limit applies, with upstream's cost of a
	// library call: a regular expression over a long string costs its
	// length times the pattern's.
	p, err := env.Compile("object.spec.image.find('(a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p)+x') == ''", Validation)
	if err != nil {
		t.Fatal(err)
	}
	long := map[string]any{"spec": map[string]any{"image": strings.Repeat("a", 1<<22)}}
	if _, err := p.EvalBool(context.Background(), &Activation{Object: long}); err == nil || !strings.Contains(err.Error(), "operation cancelled: actual cost limit exceeded") {
		t.Errorf("a costly regular expression: %v", err)
	}
}
