package integration

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"skiff.dev/apiserver/pkg/testserver"
)

func clientWithToken(t *testing.T, ts *testserver.TestServer, token string) *kubernetes.Clientset {
	t.Helper()
	cfg := rest.CopyConfig(ts.AdminConfig)
	cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile = "", ""
	cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = nil, nil
	cfg.BearerToken = token
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestServiceAccountTokens(t *testing.T) {
	ts := start(t, nil)
	admin := ts.Client
	c := context.Background()
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(c, "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status.Token == "" || tr.Status.ExpirationTimestamp.Time.Before(time.Now().Add(50*time.Minute)) {
		t.Fatalf("token request: %+v", tr.Status)
	}
	robot := clientWithToken(t, ts, tr.Status.Token)
	_, err = robot.CoreV1().Pods("default").List(c, metav1.ListOptions{})
	if code(err) != 403 || !strings.Contains(err.Error(), `User "system:serviceaccount:default:robot"`) {
		t.Fatalf("robot without a role: %v, want 403 naming the service account", err)
	}
	// Bound to the service accounts group of its namespace.
	if _, err := admin.RbacV1().RoleBindings("default").Create(c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "sa-view"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts:default"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, func() error { _, err := robot.CoreV1().Pods("default").List(c, metav1.ListOptions{}); return err }); err != nil {
		t.Fatalf("robot with a role: %v", err)
	}

	// A forged token (signature changed) and a token of a deleted account are 401.
	forged := tr.Status.Token[:len(tr.Status.Token)-4] + "AAAA"
	if _, err := clientWithToken(t, ts, forged).CoreV1().Pods("default").List(c, metav1.ListOptions{}); code(err) != 401 {
		t.Errorf("forged token: %v, want 401", err)
	}
	// Bound to a pod: valid while the pod lives.
	holder := testPod("holder", "")
	holder.Spec.ServiceAccountName = "robot" // a token binds only to a pod of its account
	if _, err := admin.CoreV1().Pods("default").Create(c, holder, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, _ := admin.CoreV1().Pods("default").Get(c, "holder", metav1.GetOptions{})
	bound, err := admin.CoreV1().ServiceAccounts("default").CreateToken(c, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "holder", UID: pod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	boundClient := clientWithToken(t, ts, bound.Status.Token)
	if _, err := boundClient.CoreV1().Pods("default").List(c, metav1.ListOptions{}); err != nil {
		t.Fatalf("pod-bound token: %v", err)
	}
	if err := admin.CoreV1().Pods("default").Delete(c, "holder", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := boundClient.CoreV1().Pods("default").List(c, metav1.ListOptions{}); code(err) != 401 {
		t.Errorf("token bound to a deleted pod: %v, want 401", err)
	}
	if err := admin.CoreV1().ServiceAccounts("default").Delete(c, "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := robot.CoreV1().Pods("default").List(c, metav1.ListOptions{}); code(err) != 401 {
		t.Errorf("token of a deleted service account: %v, want 401", err)
	}

	// kubectl create token.
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "cli"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/usr/bin/kubectl", "--kubeconfig", ts.Kubeconfig, "create", "token", "cli", "--duration=20m").CombinedOutput()
	if err != nil || strings.Count(strings.TrimSpace(string(out)), ".") != 2 {
		t.Fatalf("kubectl create token: %v %s", err, out)
	}
	if _, err := clientWithToken(t, ts, strings.TrimSpace(string(out))).Discovery().ServerVersion(); err != nil {
		t.Errorf("kubectl's token: %v", err)
	}
}
