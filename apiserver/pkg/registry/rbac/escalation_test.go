package rbac

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/authz"
	"skiff.dev/apiserver/pkg/storage"
)

func rule(groups, resources, verbs []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs}
}

var (
	core       = []string{""}
	getSecrets = rule(core, []string{"secrets"}, []string{"get"})
	podsAll    = rule(core, []string{"pods"}, []string{"*"})
	everything = rule([]string{"*"}, []string{"*"}, []string{"*"})
	urlsAll    = rbacv1.PolicyRule{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}}
)

func TestConfirmNoEscalation(t *testing.T) {
	alice := &authn.User{Name: "alice", Groups: []string{"system:authenticated"}}
	for _, tc := range []struct {
		name        string
		owner, want []rbacv1.PolicyRule
		// msg is the error's text; "" when the owner covers want.
		msg string
	}{
		{"exact", []rbacv1.PolicyRule{getSecrets}, []rbacv1.PolicyRule{getSecrets}, ""},
		{"subset of verbs", []rbacv1.PolicyRule{podsAll}, []rbacv1.PolicyRule{rule(core, []string{"pods"}, []string{"get", "list"})}, ""},
		{"star covers all", []rbacv1.PolicyRule{everything}, []rbacv1.PolicyRule{getSecrets, podsAll}, ""},
		{"nothing asked", nil, nil, ""},
		{"nothing held", nil, []rbacv1.PolicyRule{getSecrets},
			`user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
				`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`},
		{"verbs missing compacted", []rbacv1.PolicyRule{rule(core, []string{"pods"}, []string{"get"})},
			[]rbacv1.PolicyRule{rule(core, []string{"pods"}, []string{"get", "delete", "list"})},
			`user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
				`{APIGroups:[""], Resources:["pods"], Verbs:["delete" "list"]}`},
		{"resource name does not cover all names", []rbacv1.PolicyRule{{APIGroups: core, Resources: []string{"secrets"}, ResourceNames: []string{"a"}, Verbs: []string{"get"}}},
			[]rbacv1.PolicyRule{getSecrets},
			`user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
				`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`},
		{"cluster-admin's rules, sorted", []rbacv1.PolicyRule{podsAll}, []rbacv1.PolicyRule{everything, urlsAll},
			`user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
				`{APIGroups:["*"], Resources:["*"], Verbs:["*"]}` + "\n" + `{NonResourceURLs:["*"], Verbs:["*"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ConfirmNoEscalation(alice, tc.owner, tc.want)
			switch {
			case tc.msg == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.msg != "" && err == nil:
				t.Fatal("allowed")
			case tc.msg != "" && err.Error() != tc.msg:
				t.Fatalf("message\n%s\nwant\n%s", err, tc.msg)
			}
		})
	}
}

// fakeRules is a RuleResolver of fixed rules per user and namespace.
type fakeRules struct {
	// held["alice/ns"] are alice's rules in ns ("alice/" cluster-wide).
	held  map[string][]rbacv1.PolicyRule
	roles map[string][]rbacv1.PolicyRule // "Kind/namespace/name"
}

func (f fakeRules) RulesFor(u *authn.User, ns string) []rbacv1.PolicyRule {
	out := append([]rbacv1.PolicyRule(nil), f.held[u.Name+"/"]...)
	if ns != "" {
		out = append(out, f.held[u.Name+"/"+ns]...)
	}
	return out
}

func (f fakeRules) RoleRefRules(ns string, ref rbacv1.RoleRef) ([]rbacv1.PolicyRule, bool) {
	if ref.Kind == "ClusterRole" {
		ns = ""
	}
	r, ok := f.roles[ref.Kind+"/"+ns+"/"+ref.Name]
	return r, ok
}

// stored is the storage of the Roles the index has not seen: "fresh"
// (get secrets) and "fresh-nodes" in ns, and "broken", which fails.
type stored struct{ resource string }

func (s stored) GetCached(_ context.Context, ns, name string) (runtime.Object, error) {
	switch {
	case s.resource != "roles" || ns != "ns":
	case name == "fresh":
		return &rbacv1.Role{Rules: []rbacv1.PolicyRule{getSecrets}}, nil
	case name == "fresh-nodes":
		return &rbacv1.Role{Rules: []rbacv1.PolicyRule{rule(core, []string{"nodes"}, []string{"get"})}}, nil
	case name == "broken":
		return nil, apierrors.NewServiceUnavailable("etcd is away")
	}
	return nil, fmt.Errorf("%w: %s", storage.ErrNotFound, name)
}

// allowing is an authorizer allowing exactly the listed "verb resource
// namespace name" requests of the RBAC group.
func allowing(allowed ...string) func() authz.Authorizer {
	return func() authz.Authorizer {
		return authz.AuthorizerFunc(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
			for _, s := range allowed {
				if s == strings.Join([]string{a.User.Name, a.Verb, a.Resource, a.Namespace, a.Name}, " ") && a.APIGroup == Group {
					return authz.Allow, "", nil
				}
			}
			return authz.NoOpinion, "", nil
		})
	}
}

func TestEscalationChecks(t *testing.T) {
	rules := fakeRules{
		held: map[string][]rbacv1.PolicyRule{
			"alice/ns": {podsAll, getSecrets},
			"carol/":   {everything, urlsAll},
			"dave/":    {everything},
		},
		roles: map[string][]rbacv1.PolicyRule{
			"ClusterRole//cluster-admin": {everything, urlsAll},
			"ClusterRole//pod-reader":    {rule(core, []string{"pods"}, []string{"get"})},
			"Role/ns/secret-reader":      {getSecrets},
		},
	}
	e := &Escalation{
		Authorizer: allowing("bob bind clusterroles ns cluster-admin", "erin escalate roles ns ", "erin escalate roles ns r"),
		Rules:      func() RuleResolver { return rules },
		Stored:     func(resource string) Getter { return stored{resource} },
	}
	user := func(name string, groups ...string) context.Context {
		return authn.WithUser(context.Background(), &authn.User{Name: name, Groups: groups})
	}
	role := func(ns string, r ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns}, Rules: r}
	}
	clusterRole := func(agg bool, r ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cr"}, Rules: r}
		if agg {
			cr.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "b"}}}}
		}
		return cr
	}
	rb := func(kind, name string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}, RoleRef: rbacv1.RoleRef{APIGroup: Group, Kind: kind, Name: name}}
	}
	crb := func(name string) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, RoleRef: rbacv1.RoleRef{APIGroup: Group, Kind: "ClusterRole", Name: name}}
	}
	gcOnly := func(r *rbacv1.Role) *rbacv1.Role {
		r = r.DeepCopy()
		r.Finalizers = []string{"x"}
		return r
	}
	withSubject := func(b *rbacv1.RoleBinding) *rbacv1.RoleBinding {
		b.Subjects = []rbacv1.Subject{{Kind: "User", APIGroup: Group, Name: "mallory"}}
		return b
	}
	withOwner := func(b *rbacv1.RoleBinding) *rbacv1.RoleBinding {
		b.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "c", UID: "u"}}
		return b
	}
	const (
		ok        = ""
		forbidden = "Forbidden"
		notFound  = "NotFound"
	)
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		obj, old runtime.Object
		want     string
	}{
		{"no user: the server's own", context.Background(), role("ns", everything), nil, ok},
		{"system:masters", user("root", "system:masters"), clusterRole(true, everything), nil, ok},
		{"role within held rules", user("alice"), role("ns", getSecrets), nil, ok},
		{"role beyond held rules", user("alice"), role("ns", rule(core, []string{"nodes"}, []string{"get"})), nil, forbidden},
		{"role in another namespace", user("alice"), role("other", getSecrets), nil, forbidden},
		{"update to more rules", user("alice"), role("ns", everything), role("ns", getSecrets), forbidden},
		{"update of finalizers only", user("alice"), gcOnly(role("ns", everything)), role("ns", everything), ok},
		{"escalate on create (no name)", user("erin"), role("ns", everything), nil, ok},
		{"escalate on update (by name)", user("erin"), role("ns", everything), role("ns"), ok},
		{"escalate is per namespace", user("erin"), role("other", everything), nil, forbidden},
		{"cluster role needs cluster-wide rules", user("alice"), clusterRole(false, getSecrets), nil, forbidden},
		{"cluster role held cluster-wide", user("dave"), clusterRole(false, podsAll), nil, ok},
		{"aggregation needs full authority", user("dave"), clusterRole(true), nil, forbidden},
		{"aggregation removed needs full authority", user("dave"), clusterRole(false), clusterRole(true), forbidden},
		{"aggregation with full authority", user("carol"), clusterRole(true), nil, ok},
		{"bind a held role", user("alice"), rb("Role", "secret-reader"), nil, ok},
		{"bind a held cluster role", user("alice"), rb("ClusterRole", "pod-reader"), nil, ok},
		{"bind cluster-admin", user("alice"), rb("ClusterRole", "cluster-admin"), nil, forbidden},
		{"bind a missing role", user("alice"), rb("Role", "nope"), nil, notFound},
		{"bind a stored role the index lacks", user("alice"), rb("Role", "fresh"), nil, ok},
		{"bind a stored role beyond held rules", user("alice"), rb("Role", "fresh-nodes"), nil, forbidden},
		{"storage failing", user("alice"), rb("Role", "broken"), nil, "ServiceUnavailable"},
		{"bind verb on the role", user("bob"), rb("ClusterRole", "cluster-admin"), nil, ok},
		{"bind verb is per namespace", user("bob"), crb("cluster-admin"), nil, forbidden},
		{"cluster binding needs cluster-wide rules", user("alice"), crb("pod-reader"), nil, forbidden},
		{"cluster binding held", user("dave"), crb("pod-reader"), nil, ok},
		{"update of a binding's subjects", user("alice"), withSubject(rb("ClusterRole", "cluster-admin")), rb("ClusterRole", "cluster-admin"), forbidden},
		{"update of a binding's owners only", user("alice"), withOwner(rb("ClusterRole", "cluster-admin")), rb("ClusterRole", "cluster-admin"), ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := BindingHook(e)
			switch tc.obj.(type) {
			case *rbacv1.Role, *rbacv1.ClusterRole:
				h = RoleHook(e)
			}
			var err, dryErr error
			if tc.old == nil {
				_, err = h.BeforeCreate(tc.ctx, tc.obj)
				dryErr = h.DryRunCreate(tc.ctx, tc.obj)
			} else {
				_, err = h.BeforeUpdate(tc.ctx, tc.obj, tc.old)
				dryErr = h.DryRunUpdate(tc.ctx, tc.obj, tc.old)
			}
			if (dryErr == nil) != (err == nil) {
				t.Fatalf("dry run %v, write %v", dryErr, err)
			}
			switch tc.want {
			case ok:
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			case forbidden:
				if !apierrors.IsForbidden(err) {
					t.Fatalf("got %v, want Forbidden", err)
				}
			case notFound:
				if !apierrors.IsNotFound(err) {
					t.Fatalf("got %v, want NotFound", err)
				}
			default:
				if !apierrors.IsServiceUnavailable(err) {
					t.Fatalf("got %v, want %s", err, tc.want)
				}
			}
		})
	}
}

func TestEscalationWithoutRBAC(t *testing.T) {
	// RBAC off: nobody holds a rule; only the authorizer lets writes through.
	ctx := authn.WithUser(context.Background(), &authn.User{Name: "u"})
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Rules: []rbacv1.PolicyRule{getSecrets}}
	var none *authz.RBAC
	refused := &Escalation{Authorizer: allowing(), Rules: func() RuleResolver { return none }}
	if _, err := RoleHook(refused).BeforeCreate(ctx, role); !apierrors.IsForbidden(err) {
		t.Fatalf("got %v, want Forbidden", err)
	}
	always := &Escalation{Authorizer: func() authz.Authorizer { return authz.AlwaysAllow{} }, Rules: func() RuleResolver { return none }}
	if _, err := RoleHook(always).BeforeCreate(ctx, role); err != nil {
		t.Fatalf("AlwaysAllow: %v", err)
	}
}
