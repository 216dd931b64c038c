package authz

import (
	"context"
	"fmt"
	"strings"

	"skiff.dev/apiserver/pkg/authn"
)

// Decision is an authorizer's answer.
type Decision int

const (
	// NoOpinion lets the next authorizer decide.
	NoOpinion Decision = iota
	Allow
	Deny
)

// Attributes describe a request.
type Attributes struct {
	User            *authn.User
	Verb            string
	ResourceRequest bool
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Namespace       string
	Name            string
	// Path is the URL path of a non-resource request (/healthz, /version).
	Path string
}

// String renders the request as upstream's forbidden messages do.
func (a Attributes) String() string {
	if !a.ResourceRequest {
		return fmt.Sprintf("%s path %q", a.Verb, a.Path)
	}
	res := a.Resource
	if a.APIGroup != "" {
		res += "." + a.APIGroup
	}
	return res
}

// Authorizer decides about one request.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (Decision, string, error)
}

// AuthorizerFunc is a function that is an Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (Decision, string, error)

// Authorize implements Authorizer.
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	return f(ctx, a)
}

// Union asks each authorizer in turn; the first that does not abstain decides.
type Union []Authorizer

// Authorize implements Authorizer.
func (u Union) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	var reasons []string
	for _, z := range u {
		d, reason, err := z.Authorize(ctx, a)
		if err != nil {
			return Deny, reason, err
		}
		if d != NoOpinion {
			return d, reason, nil
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
	}
	return NoOpinion, strings.Join(reasons, "; "), nil
}

// AlwaysAllow allows everything (--authorization-mode=AlwaysAllow).
type AlwaysAllow struct{}

// Authorize implements Authorizer.
func (AlwaysAllow) Authorize(context.Context, Attributes) (Decision, string, error) {
	return Allow, "", nil
}

// Privileged allows members of system:masters everything, as upstream's
// privileged-group authorizer in front of every mode.
type Privileged struct{}

// Authorize implements Authorizer.
func (Privileged) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if a.User != nil {
		for _, g := range a.User.Groups {
			if g == "system:masters" {
				return Allow, "", nil
			}
		}
	}
	return NoOpinion, "", nil
}
