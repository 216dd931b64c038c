package integration

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/certs"
)

// clientAs returns a client authenticated by a fresh certificate for cn/orgs.
func clientAs(t *testing.T, ts *testserver.TestServer, cn string, orgs ...string) *kubernetes.Clientset {
	t.Helper()
	ca, err := certs.LoadCA(ts.PKIDir)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := certs.IssueClientCert(ca, cn, orgs)
	if err != nil {
		t.Fatal(err)
	}
	key, err := kp.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(ts.AdminConfig)
	cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile = "", ""
	cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = kp.CertPEM(), key
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// code turns a client error into the HTTP status it stands for.
func code(err error) int {
	if err == nil {
		return 200
	}
	if s, ok := err.(apierrors.APIStatus); ok {
		return int(s.Status().Code)
	}
	return -1
}

func TestAuthorization(t *testing.T) {
	ts := start(t, nil)
	admin := ts.Client
	c := context.Background()
	mustCreate := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// A pod on node-1 that uses secret "used" and config map "cfg".
	_, err := admin.CoreV1().Secrets("default").Create(c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "used"}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = admin.CoreV1().Secrets("default").Create(c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "unrelated"}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = admin.CoreV1().ConfigMaps("default").Create(c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}}, metav1.CreateOptions{})
	mustCreate(err)
	pod := testPod("on-node-1", "node-1")
	pod.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "used"}}}}
	pod.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}
	_, err = admin.CoreV1().Pods("default").Create(c, pod, metav1.CreateOptions{})
	mustCreate(err)
	for _, n := range []string{"node-1", "node-2"} {
		_, err = admin.CoreV1().Nodes().Create(c, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		mustCreate(err)
	}
	_, err = admin.CoreV1().Pods("default").Create(c, testPod("pending", ""), metav1.CreateOptions{})
	mustCreate(err)

	node1 := clientAs(t, ts, "system:node:node-1", "system:nodes")
	node2 := clientAs(t, ts, "system:node:node-2", "system:nodes")
	scheduler := clientAs(t, ts, "system:kube-scheduler")
	proxy := clientAs(t, ts, "system:kube-proxy")
	alice := clientAs(t, ts, "alice", "devs")

	// The Node authorizer learns of the pod through its watch: wait until it has.
	if err := waitFor(t, func() error {
		_, err := node1.CoreV1().Secrets("default").Get(c, "used", metav1.GetOptions{})
		return err
	}); err != nil {
		t.Fatalf("the node authorizer never saw the pod: %v", err)
	}
	statusUpdate := func(cs *kubernetes.Clientset, pod string) error {
		p, err := admin.CoreV1().Pods("default").Get(c, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.Phase = corev1.PodRunning
		_, err = cs.CoreV1().Pods("default").UpdateStatus(c, p, metav1.UpdateOptions{})
		return err
	}
	lease := func(cs *kubernetes.Clientset, name string) error {
		_, err := cs.CoordinationV1().Leases("kube-node-lease").Create(c, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			l, gerr := admin.CoordinationV1().Leases("kube-node-lease").Get(c, name, metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			_, err = cs.CoordinationV1().Leases("kube-node-lease").Update(c, l, metav1.UpdateOptions{})
		}
		return err
	}
	labelNode := func(cs *kubernetes.Clientset, name string) error {
		n, err := admin.CoreV1().Nodes().Get(c, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Labels = map[string]string{"touched": "yes"}
		_, err = cs.CoreV1().Nodes().Update(c, n, metav1.UpdateOptions{})
		return err
	}
	tests := []struct {
		name string
		do   func() error
		want int
	}{
		{"node reads a secret its pod uses", func() error {
			_, err := node1.CoreV1().Secrets("default").Get(c, "used", metav1.GetOptions{})
			return err
		}, 200},
		{"node reads a config map its pod uses", func() error {
			_, err := node1.CoreV1().ConfigMaps("default").Get(c, "cfg", metav1.GetOptions{})
			return err
		}, 200},
		{"node reads an unrelated secret", func() error {
			_, err := node1.CoreV1().Secrets("default").Get(c, "unrelated", metav1.GetOptions{})
			return err
		}, 403},
		{"node lists secrets", func() error { _, err := node1.CoreV1().Secrets("default").List(c, metav1.ListOptions{}); return err }, 403},
		{"other node reads the pod's secret", func() error {
			_, err := node2.CoreV1().Secrets("default").Get(c, "used", metav1.GetOptions{})
			return err
		}, 403},
		{"node updates its pod's status", func() error { return statusUpdate(node1, "on-node-1") }, 200},
		{"other node updates the pod's status", func() error { return statusUpdate(node2, "on-node-1") }, 403},
		{"node updates its own Node", func() error { return labelNode(node1, "node-1") }, 200},
		{"node updates another Node", func() error { return labelNode(node1, "node-2") }, 403},
		{"node takes its own lease", func() error { return lease(node1, "node-1") }, 201},
		{"node renews another node's lease", func() error { return lease(node2, "node-1") }, 403},
		{"node reads services", func() error { _, err := node1.CoreV1().Services("default").List(c, metav1.ListOptions{}); return err }, 200},
		{"node deletes a deployment", func() error { return node1.AppsV1().Deployments("default").Delete(c, "x", metav1.DeleteOptions{}) }, 403},
		{"scheduler lists pods", func() error { _, err := scheduler.CoreV1().Pods("").List(c, metav1.ListOptions{}); return err }, 200},
		{"scheduler binds a pod", func() error {
			return scheduler.CoreV1().Pods("default").Bind(c, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-2"}}, metav1.CreateOptions{})
		}, 201},
		{"scheduler reads secrets", func() error {
			_, err := scheduler.CoreV1().Secrets("default").Get(c, "used", metav1.GetOptions{})
			return err
		}, 403},
		{"proxy lists endpointslices", func() error {
			_, err := proxy.DiscoveryV1().EndpointSlices("").List(c, metav1.ListOptions{})
			return err
		}, 200},
		{"proxy creates a pod", func() error {
			_, err := proxy.CoreV1().Pods("default").Create(c, testPod("p", ""), metav1.CreateOptions{})
			return err
		}, 403},
		{"user without roles lists pods", func() error { _, err := alice.CoreV1().Pods("default").List(c, metav1.ListOptions{}); return err }, 403},
		{"user reads discovery", func() error { _, err := alice.Discovery().ServerVersion(); return err }, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			got := code(err)
			if got == 200 && tc.want == 201 {
				got = 201
			}
			if got != tc.want {
				t.Errorf("got %d (%v), want %d", got, err, tc.want)
			}
			if got == 403 {
				if !strings.Contains(err.Error(), "is forbidden: User \"") || !strings.Contains(err.Error(), "cannot ") {
					t.Errorf("403 message does not name the user and verb: %v", err)
				}
			}
		})
	}

	// The Node authorizer watches only bound pods: a pod bound after its
	// creation (the binding above) reaches it then, and a deleted one
	// leaves it.
	eventually(t, "node-2 updates the status of the pod bound to it", func() error {
		return statusUpdate(node2, "pending")
	})
	if err := admin.CoreV1().Pods("default").Delete(c, "on-node-1", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "node-1 loses the secret of its deleted pod", func() error {
		_, err := node1.CoreV1().Secrets("default").Get(c, "used", metav1.GetOptions{})
		if code(err) != 403 {
			return fmt.Errorf("got %d (%v), want 403", code(err), err)
		}
		return nil
	})

	// A RoleBinding lets alice read pods in default only, once RBAC sees it.
	_, err = admin.RbacV1().Roles("default").Create(c, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = admin.RbacV1().RoleBindings("default").Create(c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "devs-read"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "devs"}}}, metav1.CreateOptions{})
	mustCreate(err)
	if err := waitFor(t, func() error { _, err := alice.CoreV1().Pods("default").List(c, metav1.ListOptions{}); return err }); err != nil {
		t.Fatalf("alice after the RoleBinding: %v", err)
	}
	if _, err := alice.CoreV1().Pods("kube-system").List(c, metav1.ListOptions{}); code(err) != 403 {
		t.Errorf("alice in kube-system: %v, want 403", err)
	}
	if _, err := alice.CoreV1().Pods("default").Create(c, testPod("x", ""), metav1.CreateOptions{}); code(err) != 403 {
		t.Errorf("alice creates a pod: %v, want 403", err)
	}

	// SelfSubjectAccessReview answers for the caller.
	ssar, err := alice.AuthorizationV1().SelfSubjectAccessReviews().Create(c, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: "default"}}}, metav1.CreateOptions{})
	if err != nil || !ssar.Status.Allowed {
		t.Errorf("SSAR list pods in default: %v %+v", err, ssar)
	}
	// SubjectAccessReview asks about someone else; alice may not.
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "system:kube-scheduler",
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "default"}}}
	got, err := admin.AuthorizationV1().SubjectAccessReviews().Create(c, sar, metav1.CreateOptions{})
	if err != nil || got.Status.Allowed {
		t.Errorf("SAR for the scheduler reading secrets: %v %+v", err, got)
	}
	if _, err := alice.AuthorizationV1().SubjectAccessReviews().Create(c, sar, metav1.CreateOptions{}); code(err) != 403 {
		t.Errorf("alice creating a SubjectAccessReview: %v, want 403", err)
	}

	// Impersonation needs the impersonate verb.
	cfg := rest.CopyConfig(ts.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Groups: []string{"devs"}}
	asAlice, _ := kubernetes.NewForConfig(cfg)
	if _, err := asAlice.CoreV1().Pods("default").List(c, metav1.ListOptions{}); err != nil {
		t.Errorf("admin impersonating alice: %v", err)
	}
	if _, err := asAlice.CoreV1().Secrets("default").List(c, metav1.ListOptions{}); code(err) != 403 {
		t.Errorf("impersonated alice reading secrets: %v, want 403", err)
	}
}

// TestKubectlAuthCanI uses the real kubectl's auth can-i, with --as.
func TestKubectlAuthCanI(t *testing.T) {
	ts := start(t, nil)
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "/usr/bin/kubectl", append([]string{"--kubeconfig", ts.Kubeconfig}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := run("auth", "can-i", "create", "pods"); out != "yes" || err != nil {
		t.Errorf("admin can-i create pods: %q %v", out, err)
	}
	if out, _ := run("auth", "can-i", "get", "secrets", "--as", "system:kube-scheduler"); out != "no" {
		t.Errorf("scheduler can-i get secrets: %q", out)
	}
	if out, _ := run("auth", "can-i", "create", "pods", "--subresource=binding", "--as", "system:kube-scheduler"); out != "yes" {
		t.Errorf("scheduler can-i create pods --subresource=binding: %q", out)
	}
	if out, _ := run("auth", "can-i", "list", "pods", "--as", "bob", "--as-group", "system:masters"); out != "yes" {
		t.Errorf("bob in system:masters can-i list pods: %q", out)
	}
	if out, _ := run("auth", "can-i", "list", "pods", "--as", "bob"); out != "no" {
		t.Errorf("bob can-i list pods: %q", out)
	}
}

// TestKubectlAuthCanIList lists what a user may do with the real kubectl's
// auth can-i --list (a SelfSubjectRulesReview): the admin everything; a
// user the bootstrap rules everyone has plus what a RoleBinding gives in
// its namespace only; a node with the warning that its list is
// incomplete. A review without a namespace is a 400, as upstream's.
func TestKubectlAuthCanIList(t *testing.T) {
	ts := start(t, nil)
	c := context.Background()
	run := func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(c, 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "/usr/bin/kubectl", append([]string{"--kubeconfig", ts.Kubeconfig, "auth", "can-i", "--list"}, args...)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	// row returns the output's row for a resource (or URL), its columns
	// joined by single spaces, or "".
	row := func(out, first string) string {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == first {
				return strings.Join(f, " ")
			}
		}
		return ""
	}

	out, stderr, err := run()
	if err != nil {
		t.Fatalf("admin: %v\n%s%s", err, out, stderr)
	}
	if got := row(out, "*.*"); got != "*.* [] [] [*]" {
		t.Errorf("admin's *.* row: %q\n%s", got, out)
	}
	if got := row(out, "[*]"); got != "[*] [] [*]" {
		t.Errorf("admin's non-resource row: %q\n%s", got, out)
	}

	admin := ts.Client
	_, err = admin.RbacV1().Roles("default").Create(c, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}},
			{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"settings"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = admin.RbacV1().RoleBindings("default").Create(c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "devs-read"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "devs"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asAlice := []string{"--as", "alice", "--as-group", "devs"}
	if err := waitFor(t, func() error {
		out, stderr, err := run(append(asAlice, "-n", "default")...)
		if err != nil {
			return fmt.Errorf("%v: %s", err, stderr)
		}
		if got := row(out, "pods"); got != "pods [] [] [get list watch]" {
			return fmt.Errorf("pods row %q in\n%s", got, out)
		}
		if got := row(out, "configmaps"); got != "configmaps [] [settings] [update]" {
			return fmt.Errorf("configmaps row %q in\n%s", got, out)
		}
		// system:basic-user's and system:discovery's, bound to every
		// authenticated user.
		if got := row(out, "selfsubjectrulesreviews.authorization.k8s.io"); got != "selfsubjectrulesreviews.authorization.k8s.io [] [] [create]" {
			return fmt.Errorf("selfsubjectrulesreviews row %q in\n%s", got, out)
		}
		if got := row(out, "[/version]"); got != "[/version] [] [get]" {
			return fmt.Errorf("/version row %q in\n%s", got, out)
		}
		if stderr != "" {
			return fmt.Errorf("stderr %q", stderr)
		}
		return nil
	}); err != nil {
		t.Fatalf("alice in default: %v", err)
	}
	out, _, err = run(append(asAlice, "-n", "kube-system")...)
	if err != nil || row(out, "pods") != "" || row(out, "selfsubjectrulesreviews.authorization.k8s.io") == "" {
		t.Errorf("alice in kube-system (%v): the RoleBinding of default reached it, or the bootstrap rules are missing:\n%s", err, out)
	}

	// A node: what it may reach follows from its pods, so the list says it
	// is incomplete.
	out, stderr, err = run("--as", "system:node:vm", "--as-group", "system:nodes", "-n", "default")
	if err != nil || !strings.Contains(stderr, "the list may be incomplete: node authorizer does not support user rule resolution") {
		t.Errorf("node (%v): stderr %q\n%s", err, stderr, out)
	}

	// Without a namespace: 400, and the reason.
	_, err = admin.AuthorizationV1().SelfSubjectRulesReviews().Create(c, &authorizationv1.SelfSubjectRulesReview{}, metav1.CreateOptions{})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "no namespace on request") {
		t.Errorf("a review without a namespace: %v, want 400 no namespace on request", err)
	}
	// The API's own answer, as upstream's: the status alone, the spec not
	// echoed.
	body, err := admin.AuthorizationV1().RESTClient().Post().Resource("selfsubjectrulesreviews").
		Body([]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"default"}}`)).
		SetHeader("Impersonate-User", "nobody").DoRaw(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"spec":{},"status":{"resourceRules":[{`) || !strings.Contains(string(body), `"incomplete":false}`) {
		t.Errorf("the review's body: %s", body)
	}
}
