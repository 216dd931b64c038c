package integration

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/apiserver/pkg/testserver/fakekubelet"
)

// configAs is a client config and client of the admin impersonating cn.
func configAs(ts *testserver.TestServer, cn string) (*rest.Config, kubernetes.Interface) {
	cfg := rest.CopyConfig(ts.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: cn}
	return cfg, kubernetes.NewForConfigOrDie(cfg)
}

// TestDefaultUserRoles: the server creates upstream's admin, edit and view
// and their system:aggregate-to-* parts, and a user bound to one of them in
// a namespace may do there what upstream's role allows, before any
// aggregation controller has written the aggregated roles' rules.
func TestDefaultUserRoles(t *testing.T) {
	ts := testserver.Start(t, func(o *server.Options) {
		// The bootstrap policy is reconciled at this period: short, to see
		// a pass leave the aggregated rules alone.
		o.EndpointReconcileInterval = 200 * time.Millisecond
	})
	c := ctx(t)
	admin := ts.Client
	roles := admin.RbacV1().ClusterRoles()

	for _, tc := range []struct{ name, labelledTo string }{{"admin", ""}, {"edit", "admin"}, {"view", "edit"}} {
		r, err := roles.Get(c, tc.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-" + tc.name: "true"}}}}
		if !equality.Semantic.DeepEqual(r.AggregationRule, want) || r.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" ||
			r.Annotations["rbac.authorization.kubernetes.io/autoupdate"] != "true" {
			t.Errorf("%s: %+v", tc.name, r)
		}
		if tc.labelledTo != "" && r.Labels["rbac.authorization.k8s.io/aggregate-to-"+tc.labelledTo] != "true" {
			t.Errorf("%s not labelled aggregate-to-%s: %v", tc.name, tc.labelledTo, r.Labels)
		}
	}
	// A few of upstream's rules, verbatim (v1.32 testdata/cluster-roles.yaml).
	for name, want := range map[string]rbacv1.PolicyRule{
		"system:aggregate-to-admin": {APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"rolebindings", "roles"},
			Verbs: []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}},
		"system:aggregate-to-edit": {APIGroups: []string{""}, Resources: []string{"pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"},
			Verbs: []string{"create", "delete", "deletecollection", "patch", "update"}},
		"system:aggregate-to-view": {APIGroups: []string{"batch"}, Resources: []string{"cronjobs", "cronjobs/status", "jobs", "jobs/status"},
			Verbs: []string{"get", "list", "watch"}},
	} {
		r, err := roles.Get(c, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, rule := range r.Rules {
			found = found || equality.Semantic.DeepEqual(rule, want)
		}
		if !found || r.Labels["rbac.authorization.k8s.io/aggregate-to-"+strings.TrimPrefix(name, "system:aggregate-to-")] != "true" {
			t.Errorf("%s lacks upstream's rule %+v or its label: %+v", name, want, r)
		}
	}

	// A node with a kubelet, and a pod on it, in the namespace "default".
	k := fakekubelet.Start(t, ts.PKIDir)
	if _, err := admin.CoreV1().Nodes().Create(c, k.Node("fake-node"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "one", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "fake-node", Containers: []corev1.Container{{Name: "c1", Image: "busybox"}}}}
	if _, err := admin.CoreV1().Pods("default").Create(c, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Secrets("default").Create(c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"admin", "edit", "view"} {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role + "-user-" + role},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: role + "-user"}}}
		if _, err := admin.RbacV1().RoleBindings("default").Create(c, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	editCfg, editor := configAs(ts, "edit-user")
	viewCfg, viewer := configAs(ts, "view-user")
	_, nsAdmin := configAs(ts, "admin-user")
	forbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", what, err)
		}
	}

	// edit: a Deployment, exec into the pod; not a RoleBinding.
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
	eventually(t, "edit creates a Deployment", func() error {
		_, err := editor.AppsV1().Deployments("default").Create(c, deploy, metav1.CreateOptions{})
		return err
	})
	out, err := execIn(t, editCfg, editor, "one", "edited\n", "cat")
	if err != nil || out != "edited\n" {
		t.Errorf("edit exec: %q %v", out, err)
	}
	if _, err := editor.CoreV1().Secrets("default").Get(c, "s", metav1.GetOptions{}); err != nil {
		t.Errorf("edit reading a secret: %v", err)
	}
	rb := func(name string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "someone"}}}
	}
	_, err = editor.RbacV1().RoleBindings("default").Create(c, rb("by-edit"), metav1.CreateOptions{})
	forbidden("edit creating a RoleBinding", err)
	_, err = editor.AppsV1().Deployments("kube-system").Create(c, deploy, metav1.CreateOptions{})
	forbidden("edit creating a Deployment in another namespace", err)

	// view: list pods; not secrets, exec or writes.
	eventually(t, "view lists pods", func() error {
		l, err := viewer.CoreV1().Pods("default").List(c, metav1.ListOptions{})
		if err == nil && len(l.Items) == 0 {
			return errors.New("no pods listed")
		}
		return err
	})
	_, err = viewer.CoreV1().Secrets("default").Get(c, "s", metav1.GetOptions{})
	forbidden("view reading a secret", err)
	_, err = viewer.CoreV1().Secrets("default").List(c, metav1.ListOptions{})
	forbidden("view listing secrets", err)
	// The refused upgrade is the streaming client's error, not a Status.
	if _, err = execIn(t, viewCfg, viewer, "one", "x\n", "cat"); err == nil || !strings.Contains(err.Error(), `User "view-user" cannot create resource "pods/exec"`) {
		t.Errorf("view exec: %v, want refused", err)
	}
	err = viewer.AppsV1().Deployments("default").Delete(c, "web", metav1.DeleteOptions{})
	forbidden("view deleting a Deployment", err)

	// admin: a RoleBinding.
	eventually(t, "admin creates a RoleBinding", func() error {
		_, err := nsAdmin.RbacV1().RoleBindings("default").Create(c, rb("by-admin"), metav1.CreateOptions{})
		return err
	})
	_, err = nsAdmin.RbacV1().ClusterRoleBindings().Create(c, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "by-admin"},
		RoleRef: rb("").RoleRef, Subjects: rb("").Subjects}, metav1.CreateOptions{})
	forbidden("admin creating a ClusterRoleBinding", err)

	// The real kubectl agrees (SelfSubjectAccessReview with --as).
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "deployments.apps", "--as", "edit-user"}, "yes"},
		{[]string{"create", "pods", "--subresource=exec", "--as", "edit-user"}, "yes"},
		{[]string{"create", "rolebindings.rbac.authorization.k8s.io", "--as", "edit-user"}, "no"},
		{[]string{"list", "pods", "--as", "view-user"}, "yes"},
		{[]string{"get", "secrets", "--as", "view-user"}, "no"},
		{[]string{"create", "rolebindings.rbac.authorization.k8s.io", "--as", "admin-user"}, "yes"},
		{[]string{"update", "resourcequotas", "--as", "admin-user"}, "no"},
	} {
		cctx, cancel := context.WithTimeout(c, 60*time.Second)
		b, _ := exec.CommandContext(cctx, "/usr/bin/kubectl", append([]string{"--kubeconfig", ts.Kubeconfig, "auth", "can-i", "-n", "default"}, tc.args...)...).CombinedOutput()
		cancel()
		if got := strings.TrimSpace(string(b)); got != tc.want {
			t.Errorf("kubectl auth can-i %s: %q, want %s", strings.Join(tc.args, " "), got, tc.want)
		}
	}

	// The bootstrap reconcile leaves the rules an aggregation controller
	// wrote into edit: with edit's rules set, deleting another bootstrap
	// role (after edit in the order) and seeing it come back proves a pass
	// has run.
	edit, err := roles.Get(c, "edit", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	written := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}
	edit.Rules = written
	if _, err := roles.Update(c, edit, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := roles.Delete(c, "system:aggregate-to-view", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "system:aggregate-to-view recreated", func() error {
		_, err := roles.Get(c, "system:aggregate-to-view", metav1.GetOptions{})
		return err
	})
	if edit, err = roles.Get(c, "edit", metav1.GetOptions{}); err != nil || !equality.Semantic.DeepEqual(edit.Rules, written) {
		t.Errorf("edit after a reconcile: %v %+v, want the written rules kept", err, edit.Rules)
	}
	// A removed selector is put back.
	edit.AggregationRule.ClusterRoleSelectors = []metav1.LabelSelector{{MatchLabels: map[string]string{"mine": "true"}}}
	if _, err := roles.Update(c, edit, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "edit's selector put back", func() error {
		e, err := roles.Get(c, "edit", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sel := e.AggregationRule.ClusterRoleSelectors; len(sel) != 1 || sel[0].MatchLabels["rbac.authorization.k8s.io/aggregate-to-edit"] != "true" {
			return fmt.Errorf("selectors %+v", sel)
		}
		return nil
	})
}
