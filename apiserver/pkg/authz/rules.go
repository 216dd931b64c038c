package authz

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"skiff.dev/apiserver/pkg/authn"
)

// Rules are what an authorizer allows a user in a namespace, as a
// SelfSubjectRulesReview reports them (`kubectl auth can-i --list`).
type Rules struct {
	Resource    []authorizationv1.ResourceRule
	NonResource []authorizationv1.NonResourceRule
	// Incomplete says the authorizer allows more than it can list.
	Incomplete bool
}

// RuleResolver lists the rules an authorizer grants, as upstream's
// authorizer.RuleResolver. An error leaves the rules that could be
// resolved: rules only ever add permissions, so the partial list is still
// true.
type RuleResolver interface {
	ResolveRules(ctx context.Context, u *authn.User, namespace string) (Rules, error)
}

// ResolveRules implements RuleResolver: the rules of every member that
// resolves rules, in chain order, incomplete if any member's are, with
// their errors together (upstream's union of rule resolvers). Privileged,
// as upstream's privileged-group authorizer, lists nothing: system:masters
// holds its rules through the cluster-admin ClusterRoleBinding.
func (u Union) ResolveRules(ctx context.Context, user *authn.User, namespace string) (Rules, error) {
	var (
		out  Rules
		errs []error
	)
	for _, z := range u {
		r, ok := z.(RuleResolver)
		if !ok {
			continue
		}
		rules, err := r.ResolveRules(ctx, user, namespace)
		if err != nil {
			errs = append(errs, err)
		}
		out.Resource = append(out.Resource, rules.Resource...)
		out.NonResource = append(out.NonResource, rules.NonResource...)
		out.Incomplete = out.Incomplete || rules.Incomplete
	}
	return out, utilerrors.NewAggregate(errs)
}

// ResolveRules implements RuleResolver: everything.
func (AlwaysAllow) ResolveRules(context.Context, *authn.User, string) (Rules, error) {
	return Rules{
		Resource:    []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		NonResource: []authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}, nil
}

// ResolveRules implements RuleResolver. What a node may reach follows from
// the pods bound to it, not from rules, so a node's list is incomplete (as
// upstream's node authorizer says); anyone else gets nothing from it.
func (n *Node) ResolveRules(_ context.Context, u *authn.User, _ string) (Rules, error) {
	if _, ok := NodeName(Attributes{User: u}); ok {
		return Rules{Incomplete: true}, fmt.Errorf("node authorizer does not support user rule resolution")
	}
	return Rules{}, nil
}

// ResolveRules implements RuleResolver: the rules of the roles bound to u
// cluster-wide and in namespace (RulesFor), a rule with resources as a
// resource rule and one with URLs as a non-resource rule. A binding whose
// role has not reached the authorizer is an error, worded as upstream's
// lister's.
func (r *RBAC) ResolveRules(_ context.Context, u *authn.User, namespace string) (Rules, error) {
	if u == nil {
		return Rules{}, nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	var (
		out  Rules
		errs []error
	)
	for _, b := range r.bindingsOf(u, namespace) {
		rules, ok := r.roleRules(b.namespace, b.roleKind, b.roleName)
		if !ok {
			resource := "clusterrole"
			if b.roleKind == "Role" {
				resource = "role"
			}
			errs = append(errs, apierrors.NewNotFound(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: resource}, b.roleName))
			continue
		}
		for _, rule := range rules {
			if len(rule.Resources) > 0 {
				out.Resource = append(out.Resource, authorizationv1.ResourceRule{
					Verbs: rule.Verbs, APIGroups: rule.APIGroups, Resources: rule.Resources, ResourceNames: rule.ResourceNames,
				})
			}
			if len(rule.NonResourceURLs) > 0 {
				out.NonResource = append(out.NonResource, authorizationv1.NonResourceRule{
					Verbs: rule.Verbs, NonResourceURLs: rule.NonResourceURLs,
				})
			}
		}
	}
	return out, utilerrors.NewAggregate(errs)
}
