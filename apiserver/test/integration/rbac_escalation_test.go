package integration

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TestRBACEscalationPrevention: as upstream's policybased RBAC storages, a
// user may create or update a Role or ClusterRole only with rules it holds
// (unless it may escalate), and a RoleBinding or ClusterRoleBinding only to
// a role whose rules it holds (unless it may bind that role); the refusal
// is upstream's 403 naming the rules not held. system:masters is not
// checked.
func TestRBACEscalationPrevention(t *testing.T) {
	ts := start(t, nil)
	c := ctx(t)
	admin := ts.Client
	const ns = "ns"
	if _, err := admin.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	user := func(name string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
	}
	binding := func(name, kind, role string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role}, Subjects: subjects}
	}
	role := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	}
	rule := func(group, resource string, verbs ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs}
	}
	// alice is admin in ns; binder may bind cluster-admin (and create
	// RoleBindings) in ns; escalator may create and escalate Roles in ns.
	if _, err := admin.RbacV1().ClusterRoles().Create(c, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "bind-cluster-admin"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"cluster-admin"}, Verbs: []string{"bind"}},
			rule(rbacv1.GroupName, "rolebindings", "create", "get"),
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []*rbacv1.RoleBinding{
		binding("alice-admin", "ClusterRole", "admin", user("alice")),
		binding("binder", "ClusterRole", "bind-cluster-admin", user("binder")),
	} {
		if _, err := admin.RbacV1().RoleBindings(ns).Create(c, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// system:masters writes what nobody else could: a Role of everything
	// and a ClusterRole that aggregates.
	if _, err := admin.RbacV1().Roles(ns).Create(c, role("escalator", rule(rbacv1.GroupName, "roles", "create", "escalate"),
		rule("", "nodes", "get")), metav1.CreateOptions{}); err != nil {
		t.Fatalf("system:masters creating a Role beyond its namespace's kinds: %v", err)
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(c, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "aggregating"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"to": "aggregating"}}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatalf("system:masters creating an aggregated ClusterRole: %v", err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(c, binding("escalator", "Role", "escalator", user("escalator")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, alice := configAs(ts, "alice")
	_, binder := configAs(ts, "binder")
	_, escalator := configAs(ts, "escalator")
	// Each may act once its binding has reached the authorizer.
	for name, cl := range map[string]kubernetes.Interface{"alice": alice, "binder": binder} {
		eventually(t, name+" reads RoleBindings", func() error {
			_, err := cl.RbacV1().RoleBindings(ns).Get(c, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
	}
	eventually(t, "escalator may create Roles", func() error {
		_, err := escalator.RbacV1().Roles(ns).Create(c, role("probe"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})

	// refused checks err is upstream's 403 for resource name, ending in
	// the rules not held.
	refused := func(what string, err error, resource, name string, missing ...string) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Fatalf("%s: %v, want Forbidden", what, err)
		}
		prefix := resource + `.rbac.authorization.k8s.io "` + name + `" is forbidden: user "`
		suffix := `is attempting to grant RBAC permissions not currently held:` + "\n" + strings.Join(missing, "\n")
		if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, suffix) {
			t.Errorf("%s: message\n%s\nwant\n%s...%s", what, msg, prefix, suffix)
		}
	}
	clusterAdminRules := []string{`{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`, `{NonResourceURLs:["*"], Verbs:["*"]}`}

	// alice (admin in ns): not cluster-admin, not even as a dry run.
	_, err := alice.RbacV1().RoleBindings(ns).Create(c, binding("x", "ClusterRole", "cluster-admin", user("bob")), metav1.CreateOptions{})
	refused("alice binding cluster-admin", err, "rolebindings", "x", clusterAdminRules...)
	_, err = alice.RbacV1().RoleBindings(ns).Create(c, binding("x", "ClusterRole", "cluster-admin", user("bob")), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	refused("alice binding cluster-admin, dry run", err, "rolebindings", "x", clusterAdminRules...)
	// Nor a Role with rules admin lacks.
	_, err = alice.RbacV1().Roles(ns).Create(c, role("nodes", rule("", "nodes", "get", "list")), metav1.CreateOptions{})
	refused("alice creating a Role on nodes", err, "roles", "nodes", `{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}`)
	_, err = alice.RbacV1().Roles(ns).Create(c, role("quota", rule("", "pods", "get"), rule("", "resourcequotas", "update")), metav1.CreateOptions{})
	refused("alice creating a Role updating quotas", err, "roles", "quota", `{APIGroups:[""], Resources:["resourcequotas"], Verbs:["update"]}`)
	// A Role with a subset of her rules, and its binding.
	if _, err := alice.RbacV1().Roles(ns).Create(c, role("pod-reader", rule("", "pods", "get", "list"), rule("", "secrets", "get")), metav1.CreateOptions{}); err != nil {
		t.Fatalf("alice creating a Role within admin: %v", err)
	}
	// At once: a Role not yet in the authorizer's index is read from storage.
	if _, err := alice.RbacV1().RoleBindings(ns).Create(c, binding("pod-reader", "Role", "pod-reader", user("bob")), metav1.CreateOptions{}); err != nil {
		t.Fatalf("alice binding her Role: %v", err)
	}
	_, err = alice.RbacV1().RoleBindings(ns).Create(c, binding("missing", "Role", "missing", user("bob")), metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("alice binding a missing Role: %v, want NotFound", err)
	}
	// admin holds what edit and view grant.
	for _, r := range []string{"edit", "view"} {
		if _, err := alice.RbacV1().RoleBindings(ns).Create(c, binding("bob-"+r, "ClusterRole", r, user("bob")), metav1.CreateOptions{}); err != nil {
			t.Errorf("alice binding %s: %v", r, err)
		}
	}
	// Updates, patches and applies are checked on the object they make.
	pr, err := alice.RbacV1().Roles(ns).Get(c, "pod-reader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pr.Rules = append(pr.Rules, rule("", "nodes", "get"))
	_, err = alice.RbacV1().Roles(ns).Update(c, pr, metav1.UpdateOptions{})
	refused("alice updating her Role to nodes", err, "roles", "pod-reader", `{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}`)
	_, err = alice.RbacV1().Roles(ns).Patch(c, "pod-reader", types.JSONPatchType,
		[]byte(`[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["persistentvolumes"],"verbs":["delete"]}}]`), metav1.PatchOptions{})
	refused("alice patching her Role", err, "roles", "pod-reader", `{APIGroups:[""], Resources:["persistentvolumes"], Verbs:["delete"]}`)
	_, err = alice.RbacV1().Roles(ns).Patch(c, "applied", types.ApplyPatchType,
		[]byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"applied"},"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`),
		metav1.PatchOptions{FieldManager: "alice"})
	refused("alice applying a Role of everything", err, "roles", "applied", `{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`)
	_, err = alice.RbacV1().Roles(ns).Patch(c, "applied", types.ApplyPatchType,
		[]byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"applied"},"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`),
		metav1.PatchOptions{FieldManager: "alice", DryRun: []string{metav1.DryRunAll}})
	refused("alice applying a Role of everything, dry run", err, "roles", "applied", `{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`)
	// A label is no escalation.
	if _, err := alice.RbacV1().Roles(ns).Patch(c, "pod-reader", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("alice labelling her Role: %v", err)
	}

	// binder holds no rule of cluster-admin's but may bind it; only it.
	if _, err := binder.RbacV1().RoleBindings(ns).Create(c, binding("by-binder", "ClusterRole", "cluster-admin", user("bob")), metav1.CreateOptions{}); err != nil {
		t.Errorf("binder binding cluster-admin: %v", err)
	}
	_, err = binder.RbacV1().RoleBindings(ns).Create(c, binding("view-by-binder", "ClusterRole", "view", user("bob")), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("binder binding view: %v, want Forbidden", err)
	}

	// escalator may create any Role in ns.
	if _, err := escalator.RbacV1().Roles(ns).Create(c, role("all", rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}),
		metav1.CreateOptions{}); err != nil {
		t.Errorf("escalator creating a Role of everything: %v", err)
	}

	// system:masters binds anything anywhere.
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(c, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bob-aggregating"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "aggregating"}, Subjects: []rbacv1.Subject{user("bob")}},
		metav1.CreateOptions{}); err != nil {
		t.Errorf("system:masters binding: %v", err)
	}

	// The real kubectl prints upstream's refusal.
	if _, err := os.Stat("/usr/bin/kubectl"); err != nil {
		t.Skip("no kubectl at /usr/bin/kubectl")
	}
	kctx, cancel := context.WithTimeout(c, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(kctx, "/usr/bin/kubectl", "--kubeconfig", ts.Kubeconfig, "--as", "alice",
		"create", "rolebinding", "x", "--clusterrole=cluster-admin", "--user=bob", "-n", ns).CombinedOutput()
	// (kubectl create rolebinding words a server's refusal so.)
	want := `error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "x" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` +
		"\n" + strings.Join(clusterAdminRules, "\n")
	if err == nil || strings.TrimSpace(string(out)) != want {
		t.Errorf("kubectl: %v\n%s\nwant\n%s", err, out, want)
	}
}
