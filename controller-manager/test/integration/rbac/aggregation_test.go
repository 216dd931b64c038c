package rbac

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

// poll waits up to a minute until cond returns nil, failing with its last
// error.
func poll(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = cond(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, last)
	}
}

// dynamicAs is a dynamic client of the admin impersonating user.
func dynamicAs(ts *testserver.TestServer, user string) dynamic.Interface {
	cfg := rest.CopyConfig(ts.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return dynamic.NewForConfigOrDie(cfg)
}

// holds reports whether the ClusterRole called name has every rule of want.
func holds(ctx context.Context, ts *testserver.TestServer, name string, want []rbacv1.PolicyRule) error {
	cr, err := ts.Client.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, w := range want {
		if !slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(r, w) }) {
			return fmt.Errorf("%s lacks %+v (has %d rules)", name, w, len(cr.Rules))
		}
	}
	return nil
}

func rulesOf(t *testing.T, ts *testserver.TestServer, names ...string) []rbacv1.PolicyRule {
	t.Helper()
	var out []rbacv1.PolicyRule
	for _, n := range names {
		cr, err := ts.Client.RbacV1().ClusterRoles().Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cr.Rules...)
	}
	return out
}

func TestClusterRoleAggregation(t *testing.T) {
	ts := testserver.Start(t, nil)
	cmtest.Start(t, ts, func(o *cmapp.Options) { o.Controllers = []string{"clusterrole-aggregation"} })
	ctx := context.Background()
	roles := ts.Client.RbacV1().ClusterRoles()

	// The bootstrap chain: view gets its parts, edit view's and its own,
	// admin edit's and its own.
	viewParts := rulesOf(t, ts, "system:aggregate-to-view", "system:aggregated-metrics-reader")
	editParts := append(rulesOf(t, ts, "system:aggregate-to-edit"), viewParts...)
	adminParts := append(rulesOf(t, ts, "system:aggregate-to-admin"), editParts...)
	for name, want := range map[string][]rbacv1.PolicyRule{"view": viewParts, "edit": editParts, "admin": adminParts} {
		poll(t, name+"'s aggregated rules", func(ctx context.Context) error { return holds(ctx, ts, name, want) })
	}
	view, err := roles.Get(ctx, "view", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(view.Rules) != len(viewParts) {
		t.Errorf("view has %d rules, want the %d of its parts", len(view.Rules), len(viewParts))
	}

	// A CRD and the ClusterRole its author labels aggregate-to-edit.
	dyn := dynamic.NewForConfigOrDie(ts.AdminConfig)
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "crontabs.stable.example.com"},
		"spec": map[string]any{
			"group": "stable.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "listKind": "CronTabList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crontabRule := rbacv1.PolicyRule{APIGroups: []string{"stable.example.com"}, Resources: []string{"crontabs"},
		Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}}
	crontabEditor := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "crontab-editor",
		Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-edit": "true"}}, Rules: []rbacv1.PolicyRule{crontabRule}}
	if _, err := roles.Create(ctx, crontabEditor, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the CRD's rule in edit and admin", func(ctx context.Context) error {
		if err := holds(ctx, ts, "edit", []rbacv1.PolicyRule{crontabRule}); err != nil {
			return err
		}
		return holds(ctx, ts, "admin", []rbacv1.PolicyRule{crontabRule})
	})
	if err := holds(ctx, ts, "view", []rbacv1.PolicyRule{crontabRule}); err == nil {
		t.Error("view got the aggregate-to-edit rule")
	}
	kubectl := func(args ...string) string {
		c, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		out, _ := exec.CommandContext(c, "/usr/bin/kubectl", append([]string{"--kubeconfig", ts.Kubeconfig}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	if out := kubectl("get", "clusterrole", "edit", "-o", "jsonpath={.rules[*].apiGroups}"); !strings.Contains(out, "stable.example.com") {
		t.Errorf("kubectl get clusterrole edit: apiGroups %s lack stable.example.com", out)
	}

	// alice, bound to edit in "default", may create a CronTab there; bob,
	// bound to view, may not.
	for user, role := range map[string]string{"alice": "edit", "bob": "view"} {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
		if _, err := ts.Client.RbacV1().RoleBindings("default").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	crontabs := schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}
	crontab := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "stable.example.com/v1", "kind": "CronTab",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"cronSpec": "* * * * */5"}}}
	}
	alice, bob := dynamicAs(ts, "alice"), dynamicAs(ts, "bob")
	poll(t, "alice creating a CronTab", func(ctx context.Context) error {
		_, err := alice.Resource(crontabs).Namespace("default").Create(ctx, crontab("by-alice"), metav1.CreateOptions{})
		return err
	})
	if _, err := bob.Resource(crontabs).Namespace("default").Create(ctx, crontab("by-bob"), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bob (view) creating a CronTab: %v, want Forbidden", err)
	}
	if out := kubectl("auth", "can-i", "create", "crontabs.stable.example.com", "-n", "default", "--as", "alice"); out != "yes" {
		t.Errorf("kubectl auth can-i create crontabs --as alice: %q", out)
	}

	// The label removed: the rule leaves edit, and alice may no longer.
	crontabEditor, err = roles.Get(ctx, "crontab-editor", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crontabEditor.Labels = nil
	if _, err := roles.Update(ctx, crontabEditor, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the rule gone from edit", func(ctx context.Context) error {
		if holds(ctx, ts, "edit", []rbacv1.PolicyRule{crontabRule}) == nil {
			return fmt.Errorf("edit still has %+v", crontabRule)
		}
		return holds(ctx, ts, "edit", editParts)
	})
	poll(t, "alice refused", func(ctx context.Context) error {
		_, err := alice.Resource(crontabs).Namespace("default").Create(ctx, crontab("by-alice-2"), metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("alice creating a CronTab: %v, want Forbidden", err)
		}
		return nil
	})
	if out := kubectl("auth", "can-i", "create", "crontabs.stable.example.com", "-n", "default", "--as", "alice"); out != "no" {
		t.Errorf("kubectl auth can-i create crontabs --as alice after the label went: %q", out)
	}
}
