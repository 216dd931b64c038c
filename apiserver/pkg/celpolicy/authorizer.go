package celpolicy

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/library"
)

// AuthzRequest is what an expression asks the authorizer: a resource
// request (group, resource, subresource, namespace, name) or a path, with
// a verb.
type AuthzRequest struct {
	Verb            string
	ResourceRequest bool
	Group           string
	Resource        string
	Subresource     string
	Namespace       string
	Name            string
	Path            string
	// ServiceAccount, when set ("namespace/name"), asks for that service
	// account instead of the request's user.
	ServiceAccount string
}

// AuthorizeFunc answers an authorizer check of the request being
// admitted: whether it is allowed, the authorizer's reason, and an error
// when the decision could not be made.
type AuthorizeFunc func(ctx context.Context, r AuthzRequest) (allowed bool, reason string, err error)

// errNoAuthorizer is the error of every check when no authorizer is set.
var errNoAuthorizer = errors.New("no authorizer is configured")

// authorizerAdapter lets upstream's authorizer library
// (k8s.io/apiserver/pkg/cel/library.Authz) ask skiff's authorizer: it is
// the authorizer.Authorizer the library's values hold. requestUser is the
// user the library is given for the request; a check made after
// authorizer.serviceAccount(ns, name) carries that service account's user
// instead, which becomes AuthzRequest.ServiceAccount.
type authorizerAdapter struct {
	ctx         context.Context
	authorize   AuthorizeFunc
	requestUser user.Info
}

func (a *authorizerAdapter) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.authorize == nil {
		return authorizer.DecisionNoOpinion, "", errNoAuthorizer
	}
	r := AuthzRequest{
		Verb: attrs.GetVerb(), ResourceRequest: attrs.IsResourceRequest(), Group: attrs.GetAPIGroup(),
		Resource: attrs.GetResource(), Subresource: attrs.GetSubresource(), Namespace: attrs.GetNamespace(),
		Name: attrs.GetName(), Path: attrs.GetPath(),
	}
	if u := attrs.GetUser(); u != nil && u != a.requestUser {
		if ns, name, err := serviceaccount.SplitUsername(u.GetName()); err == nil {
			r.ServiceAccount = ns + "/" + name
		}
	}
	// The library calls with a context of its own; the request's is the
	// one to use.
	allowed, reason, err := a.authorize(a.ctx, r)
	switch {
	case err != nil:
		return authorizer.DecisionNoOpinion, reason, err
	case allowed:
		return authorizer.DecisionAllow, reason, nil
	}
	return authorizer.DecisionDeny, reason, nil
}

// requestResource is the request's own resource, as the library's
// authorizer.requestResource needs it.
type requestResource AuthzRequest

func (r requestResource) GetName() string      { return r.Name }
func (r requestResource) GetNamespace() string { return r.Namespace }
func (r requestResource) GetResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Resource: r.Resource}
}
func (r requestResource) GetSubresource() string { return r.Subresource }

// authorizerVars are the values of the variables authorizer and
// authorizer.requestResource for one evaluation.
func authorizerVars(ctx context.Context, authorize AuthorizeFunc, rr AuthzRequest) (any, any) {
	u := &user.DefaultInfo{}
	az := &authorizerAdapter{ctx: ctx, authorize: authorize, requestUser: u}
	return library.NewAuthorizerVal(u, az), library.NewResourceAuthorizerVal(u, az, requestResource(rr))
}
