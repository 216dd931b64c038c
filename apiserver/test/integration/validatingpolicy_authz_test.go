package integration

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// testAuthorizer: a policy asks the authorizer library whether the user
// may scale Deployments before letting it create one with more than three
// replicas. alice may create Deployments but not update their scale; the
// admin may do both; serviceAccount() asks for another identity.
func (f *vapFixture) testAuthorizer(t *testing.T) {
	const ns = "vap-authz"
	f.namespace(t, ns)
	c := f.ts.Client
	if _, err := c.RbacV1().Roles(ns).Create(ctx(t), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create", "delete", "get"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().RoleBindings(ns).Create(ctx(t), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "alice"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.install(t, deploymentPolicy("scale-needs-permission", admissionregistrationv1.Validation{
		Expression: "object.spec.replicas <= 3 || authorizer.group('apps').resource('deployments').subresource('scale').namespace(object.metadata.namespace).check('update').allowed()",
		MessageExpression: "'more than 3 replicas needs update on deployments/scale; may delete this deployment: ' + " +
			"string(authorizer.requestResource.check('delete').allowed()) + '; the namespace default service account may: ' + " +
			"string(authorizer.serviceAccount(object.metadata.namespace, 'default').group('apps').resource('deployments').check('create').allowed())",
	}), binding("scale-needs-permission", "scale-needs-permission", ns, admissionregistrationv1.Deny))

	cfg := rest.CopyConfig(f.ts.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice"}
	alice, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// alice's RoleBinding reaches the authorizer through its watch.
	if err := waitFor(t, func() error {
		_, err := alice.AppsV1().Deployments(ns).Create(ctx(t), deployment("small", 2, nil), metav1.CreateOptions{})
		return err
	}); err != nil {
		t.Fatalf("alice, 2 replicas: %v", err)
	}
	denied := createUntilDenied(t, alice, ns, deployment("big", 5, nil))
	if denied.ErrStatus.Code != 422 || !strings.Contains(denied.ErrStatus.Message,
		"more than 3 replicas needs update on deployments/scale; may delete this deployment: true; the namespace default service account may: false") {
		t.Errorf("alice's denial: %d %s", denied.ErrStatus.Code, denied.ErrStatus.Message)
	}
	if _, err := c.AppsV1().Deployments(ns).Create(ctx(t), deployment("big", 5, nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("the admin, 5 replicas: %v", err)
	}
}
