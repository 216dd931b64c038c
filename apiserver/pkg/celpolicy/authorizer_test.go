package celpolicy

import (
	"context"
	"errors"
	"testing"
)

// TestAuthorizerLibrary: the authorizer library's checks reach the
// AuthorizeFunc with what the expression asked, and its decisions read as
// upstream's.
func TestAuthorizerLibrary(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	var asked []AuthzRequest
	authorize := func(_ context.Context, r AuthzRequest) (bool, string, error) {
		asked = append(asked, r)
		switch {
		case r.Resource == "broken":
			return false, "", errors.New("the authorizer is down")
		case r.ServiceAccount != "":
			return false, "no RBAC policy matched", nil
		case r.Path == "/healthz" || (r.Resource == "pods" && r.Verb == "get"):
			return true, "allowed by the test", nil
		}
		return false, "", nil
	}
	act := &Activation{Authorize: authorize, RequestResource: AuthzRequest{ResourceRequest: true, Group: "apps", Resource: "deployments", Namespace: "ns", Name: "web"}}
	tests := []struct {
		expr string
		want any
		last AuthzRequest
	}{
		{"authorizer.group('').resource('pods').namespace('ns').name('p').check('get').allowed()", true,
			AuthzRequest{Verb: "get", ResourceRequest: true, Resource: "pods", Namespace: "ns", Name: "p"}},
		{"authorizer.group('').resource('pods').subresource('log').check('create').allowed()", false,
			AuthzRequest{Verb: "create", ResourceRequest: true, Resource: "pods", Subresource: "log"}},
		{"authorizer.path('/healthz').check('get').reason()", "allowed by the test", AuthzRequest{Verb: "get", Path: "/healthz"}},
		{"authorizer.requestResource.check('delete').allowed()", false,
			AuthzRequest{Verb: "delete", ResourceRequest: true, Group: "apps", Resource: "deployments", Namespace: "ns", Name: "web"}},
		{"authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('get').reason()", "no RBAC policy matched",
			AuthzRequest{Verb: "get", ResourceRequest: true, Resource: "pods", ServiceAccount: "ns/sa"}},
		{"authorizer.group('').resource('broken').check('get').errored()", true, AuthzRequest{Verb: "get", ResourceRequest: true, Resource: "broken"}},
		{"authorizer.group('').resource('broken').check('get').error()", "the authorizer is down", AuthzRequest{Verb: "get", ResourceRequest: true, Resource: "broken"}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			p, err := env.Compile(tt.expr, Variable)
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Eval(context.Background(), act)
			if err != nil {
				t.Fatal(err)
			}
			if out.Value() != tt.want {
				t.Errorf("= %v, want %v", out.Value(), tt.want)
			}
			if got := asked[len(asked)-1]; got != tt.last {
				t.Errorf("asked %+v, want %+v", got, tt.last)
			}
		})
	}
	// Without an authorizer every decision is errored, not allowed.
	p, err := env.Compile("authorizer.path('/x').check('get').errored() && !authorizer.path('/x').check('get').allowed()", Validation)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := p.EvalBool(context.Background(), &Activation{}); err != nil || !ok {
		t.Errorf("without an authorizer: %v %v", ok, err)
	}
	if _, err := env.Compile("authorizer.group('').check('get')", Validation); err == nil {
		t.Error("check on a group compiled")
	}
}
