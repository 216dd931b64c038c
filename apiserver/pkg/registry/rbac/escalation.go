package rbac

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/component-helpers/auth/rbac/validation"

	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/authz"
	"skiff.dev/apiserver/pkg/storage"
)

// Privilege-escalation prevention, as upstream's policybased storages of the
// four RBAC kinds (pkg/registry/rbac/{role,clusterrole,rolebinding,
// clusterrolebinding}/policybased and pkg/registry/rbac/validation): a
// requester may write a Role or ClusterRole only with rules already held
// (in its namespace, or cluster-wide), unless allowed to escalate; and a
// RoleBinding or ClusterRoleBinding only to a role whose rules are held,
// unless allowed to bind that role. Requests without a user (the server's
// own bootstrap) and members of system:masters are not checked.

// Group is the RBAC API group.
const Group = rbacv1.GroupName

// systemMasters is upstream's user.SystemPrivilegedGroup.
const systemMasters = "system:masters"

// RuleResolver is what the checks read of the RBAC authorizer's index
// (authz.RBAC): the rules a user holds, and the rules of a binding's role.
type RuleResolver interface {
	RulesFor(u *authn.User, namespace string) []rbacv1.PolicyRule
	RoleRefRules(namespace string, ref rbacv1.RoleRef) ([]rbacv1.PolicyRule, bool)
}

// Escalation is what the checks need of the server. Both are functions as
// the server builds its authorizer after its stores.
type Escalation struct {
	// Authorizer asks about the escalate and bind verbs.
	Authorizer func() authz.Authorizer
	// Rules resolves rules; nil, or returning nil, when RBAC is off (then
	// nobody holds a rule, and only the authorizer lets a write through).
	Rules func() RuleResolver
	// Stored, when set, reads an RBAC object (roles, clusterroles) from
	// the server's storage: a binding's role the index has not seen yet
	// (created a moment ago) is read there, as upstream reads its storage.
	Stored func(resource string) Getter
}

// Getter reads one object of a resource (a registry.Store).
type Getter interface {
	GetCached(ctx context.Context, namespace, name string) (runtime.Object, error)
}

// storedRules reads the rules of a role the index lacks from storage.
func (e *Escalation) storedRules(ctx context.Context, resource, namespace, name string) ([]rbacv1.PolicyRule, bool, error) {
	if e == nil || e.Stored == nil {
		return nil, false, nil
	}
	g := e.Stored(resource)
	if isNil(g) {
		return nil, false, nil
	}
	obj, err := g.GetCached(ctx, namespace, name)
	if errors.Is(err, storage.ErrNotFound) || apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	switch o := obj.(type) {
	case *rbacv1.Role:
		return o.Rules, true, nil
	case *rbacv1.ClusterRole:
		return o.Rules, true, nil
	}
	return nil, false, fmt.Errorf("read a %T as %s %q", obj, resource, name)
}

func (e *Escalation) authorizer() authz.Authorizer {
	if e == nil || e.Authorizer == nil {
		return nil
	}
	return e.Authorizer()
}

func (e *Escalation) resolver() RuleResolver {
	if e == nil || e.Rules == nil {
		return nil
	}
	r := e.Rules()
	if isNil(r) {
		return nil
	}
	return r
}

// isNil reports whether v is nil or holds a nil pointer.
func isNil(v any) bool {
	return v == nil || (reflect.ValueOf(v).Kind() == reflect.Pointer && reflect.ValueOf(v).IsNil())
}

// fullAuthority is what setting an aggregationRule takes: everything.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}},
	{Verbs: []string{rbacv1.VerbAll}, NonResourceURLs: []string{rbacv1.NonResourceAll}},
}

// requester returns the request's user, and whether the checks apply to
// it: not without a user, nor to system:masters (upstream's
// EscalationAllowed).
func requester(ctx context.Context) (*authn.User, bool) {
	u, ok := authn.UserFrom(ctx)
	if !ok || u == nil {
		return nil, false
	}
	for _, g := range u.Groups {
		if g == systemMasters {
			return u, false
		}
	}
	return u, true
}

// allowed asks the authorizer whether u may verb the named RBAC resource.
func (e *Escalation) allowed(ctx context.Context, u *authn.User, verb, resource, namespace, name string) bool {
	a := e.authorizer()
	if a == nil {
		return false
	}
	d, _, err := a.Authorize(ctx, authz.Attributes{
		User: u, Verb: verb, ResourceRequest: true,
		APIGroup: Group, APIVersion: "*", Resource: resource, Namespace: namespace, Name: name,
	})
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("authorizing user %q to %s %s %q in namespace %q: %w", u.Name, verb, resource, name, namespace, err))
	}
	return d == authz.Allow
}

// ConfirmNoEscalation returns nil when owner (the requester's rules) covers
// rules, and otherwise upstream's error naming what u lacks.
func ConfirmNoEscalation(u *authn.User, owner, rules []rbacv1.PolicyRule) error {
	covers, missing := validation.Covers(owner, rules)
	if covers {
		return nil
	}
	seen := map[string]bool{}
	var lines []string
	for _, r := range CompactRules(missing) {
		if s := CompactString(r); !seen[s] {
			seen[s] = true
			lines = append(lines, s)
		}
	}
	sort.Strings(lines)
	groups := u.Groups
	if groups == nil {
		groups = []string{}
	}
	return fmt.Errorf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.Name, groups, strings.Join(lines, "\n"))
}

// CompactRules merges the rules that name one API group and one resource
// and nothing but verbs, as upstream's CompactRules does with the broken
// down rules Covers reports missing.
func CompactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	simple := map[schema.GroupResource]int{}
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && len(r.NonResourceURLs) == 0 && len(r.APIGroups) == 1 && len(r.Resources) == 1 {
			gr := schema.GroupResource{Group: r.APIGroups[0], Resource: r.Resources[0]}
			if i, ok := simple[gr]; ok {
				out[i].Verbs = append(out[i].Verbs, r.Verbs...)
				continue
			}
			simple[gr] = len(out)
			r = *r.DeepCopy()
		}
		out = append(out, r)
	}
	return out
}

// CompactString is upstream's compact rendering of a rule in the error:
// {APIGroups:[""], Resources:["secrets"], Verbs:["get"]}.
func CompactString(r rbacv1.PolicyRule) string {
	var parts []string
	add := func(name string, v []string) {
		if len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", name, v))
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}

// onlyGCFields reports whether obj differs from old in nothing but what
// the garbage collector changes (owner references, finalizers) and managed
// fields, as upstream's IsOnlyMutatingGCFields: such an update is not
// checked.
func onlyGCFields(obj, old runtime.Object) bool {
	if old == nil || reflect.ValueOf(old).IsNil() {
		return false
	}
	cp := obj.DeepCopyObject()
	cm, err1 := meta.Accessor(cp)
	om, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return false
	}
	cm.SetOwnerReferences(om.GetOwnerReferences())
	cm.SetFinalizers(om.GetFinalizers())
	cm.SetSelfLink(om.GetSelfLink())
	cm.SetManagedFields(om.GetManagedFields())
	return equality.Semantic.DeepEqual(cp, old)
}

// checkRole refuses a Role's or ClusterRole's rules the requester does not
// hold, unless it may escalate (upstream's RoleEscalationAuthorized); a
// ClusterRole with an aggregationRule (now or before) takes full
// authority.
func (e *Escalation) checkRole(ctx context.Context, obj, old runtime.Object) error {
	u, check := requester(ctx)
	if !check {
		return nil
	}
	var (
		resource, namespace, name, escalateName string
		rules                                   []rbacv1.PolicyRule
		aggregation                             bool
	)
	switch o := obj.(type) {
	case *rbacv1.Role:
		resource, namespace, name, rules = "roles", o.Namespace, o.Name, o.Rules
	case *rbacv1.ClusterRole:
		resource, name, rules = "clusterroles", o.Name, o.Rules
		aggregation = o.AggregationRule != nil
		if p, ok := old.(*rbacv1.ClusterRole); ok && p != nil && p.AggregationRule != nil {
			aggregation = true
		}
	default:
		return nil
	}
	if old != nil {
		// Upstream asks with the request's name: none on a create.
		escalateName = name
		if onlyGCFields(obj, old) {
			return nil
		}
	}
	if e.allowed(ctx, u, "escalate", resource, namespace, escalateName) {
		return nil
	}
	gr := schema.GroupResource{Group: Group, Resource: resource}
	owner := e.resolver()
	var held []rbacv1.PolicyRule
	if owner != nil {
		held = owner.RulesFor(u, namespace)
	}
	if err := ConfirmNoEscalation(u, held, rules); err != nil {
		return apierrors.NewForbidden(gr, name, err)
	}
	if aggregation {
		if _, missing := validation.Covers(held, fullAuthority); len(missing) > 0 {
			return apierrors.NewForbidden(gr, name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
		}
	}
	return nil
}

// checkBinding refuses a RoleBinding or ClusterRoleBinding to a role whose
// rules the requester does not hold, unless it may bind that role
// (upstream's BindingAuthorized). A binding whose role does not exist is
// refused as not found, as upstream's GetRoleReferenceRules.
func (e *Escalation) checkBinding(ctx context.Context, obj, old runtime.Object) error {
	u, check := requester(ctx)
	if !check {
		return nil
	}
	var (
		resource, namespace, name string
		ref                       rbacv1.RoleRef
	)
	switch o := obj.(type) {
	case *rbacv1.RoleBinding:
		resource, namespace, name, ref = "rolebindings", o.Namespace, o.Name, o.RoleRef
	case *rbacv1.ClusterRoleBinding:
		resource, name, ref = "clusterrolebindings", o.Name, o.RoleRef
	default:
		return nil
	}
	if old != nil && onlyGCFields(obj, old) {
		return nil
	}
	var refResource string
	switch {
	case ref.Kind == "ClusterRole":
		refResource = "clusterroles"
	case ref.Kind == "Role" && namespace != "":
		refResource = "roles"
	default:
		// An invalid roleRef: validation refuses it.
		return nil
	}
	if e.allowed(ctx, u, "bind", refResource, namespace, ref.Name) {
		return nil
	}
	owner := e.resolver()
	var rules, held []rbacv1.PolicyRule
	found := false
	if owner != nil {
		rules, found = owner.RoleRefRules(namespace, ref)
		held = owner.RulesFor(u, namespace)
	}
	if !found {
		stored, ok, err := e.storedRules(ctx, refResource, namespace, ref.Name)
		if err != nil {
			return err
		}
		rules, found = stored, ok
	}
	if !found {
		return apierrors.NewNotFound(schema.GroupResource{Group: Group, Resource: refResource}, ref.Name)
	}
	if err := ConfirmNoEscalation(u, held, rules); err != nil {
		return apierrors.NewForbidden(schema.GroupResource{Group: Group, Resource: resource}, name, err)
	}
	return nil
}

// Hook is the store hook of an RBAC kind: its escalation check on every
// create and update (patch and apply included, on the object they
// produce), dry runs included, as upstream.
type Hook struct {
	check func(ctx context.Context, obj, old runtime.Object) error
}

// RoleHook is the hook of Roles and ClusterRoles.
func RoleHook(e *Escalation) Hook { return Hook{e.checkRole} }

// BindingHook is the hook of RoleBindings and ClusterRoleBindings.
func BindingHook(e *Escalation) Hook { return Hook{e.checkBinding} }

func noRollback() {}

func (h Hook) BeforeCreate(ctx context.Context, obj runtime.Object) (func(), error) {
	return noRollback, h.check(ctx, obj, nil)
}

func (h Hook) BeforeUpdate(ctx context.Context, obj, old runtime.Object) (func(), error) {
	return noRollback, h.check(ctx, obj, old)
}

func (h Hook) DryRunCreate(ctx context.Context, obj runtime.Object) error {
	return h.check(ctx, obj, nil)
}

func (h Hook) DryRunUpdate(ctx context.Context, obj, old runtime.Object) error {
	return h.check(ctx, obj, old)
}
