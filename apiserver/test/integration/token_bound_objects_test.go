package integration

import (
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A service account token bound to a Secret or a Node, as upstream's
// TokenRequest and token authenticator: the token names the object
// (kubernetes.io secret{name,uid} or node{name,uid}), authenticates while
// the object exists with that UID, and stops once it is deleted (a Secret
// recreated under the same name does not revive it). kubectl create token
// --bound-object-kind Secret gets one too; other kinds, missing objects
// and another UID are refused with upstream's statuses.
func TestServiceAccountTokenBoundToSecretAndNode(t *testing.T) {
	ts := start(t, nil)
	admin := ts.Client
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret, err := admin.CoreV1().Secrets("default").Create(ctx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "holder"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := admin.CoreV1().Nodes().Create(ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bound-node"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	request := func(ref *authenticationv1.BoundObjectReference) (string, error) {
		tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx(t), "robot",
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref}}, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return tr.Status.Token, nil
	}
	// whoami answers the token's user, or the status code it is refused with.
	whoami := func(token string) (*authenticationv1.UserInfo, error) {
		who, err := clientWithToken(t, ts, token).AuthenticationV1().SelfSubjectReviews().Create(ctx(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			return nil, err
		}
		return &who.Status.UserInfo, nil
	}
	refused := func(token string) func() error {
		return func() error {
			if u, err := whoami(token); code(err) != 401 {
				return fmt.Errorf("still %d (user %+v, err %v), want 401", code(err), u, err)
			}
			return nil
		}
	}

	secretToken, err := request(&authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "holder", UID: secret.UID})
	if err != nil {
		t.Fatalf("secret-bound token: %v", err)
	}
	k8s, _ := jwtClaims(t, secretToken)["kubernetes.io"].(map[string]any)
	if !reflect.DeepEqual(k8s["secret"], map[string]any{"name": "holder", "uid": string(secret.UID)}) || k8s["pod"] != nil || k8s["node"] != nil {
		t.Errorf("secret-bound token's claims: %v", k8s)
	}
	out, err := exec.Command("/usr/bin/kubectl", "--kubeconfig", ts.Kubeconfig, "create", "token", "robot",
		"--bound-object-kind", "Secret", "--bound-object-name", "holder").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl create token --bound-object-kind Secret: %v %s", err, out)
	}
	kubectlToken := strings.TrimSpace(string(out))
	for name, token := range map[string]string{"TokenRequest": secretToken, "kubectl": kubectlToken} {
		u, err := whoami(token)
		if err != nil || u.Username != "system:serviceaccount:default:robot" || len(u.Extra) != 1 || len(u.Extra["authentication.kubernetes.io/credential-id"]) != 1 {
			t.Errorf("%s's secret-bound token while the secret exists: %v %+v", name, err, u)
		}
	}

	nodeToken, err := request(&authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: "bound-node"})
	if err != nil {
		t.Fatalf("node-bound token: %v", err)
	}
	if u, err := whoami(nodeToken); err != nil || !reflect.DeepEqual(u.Extra["authentication.kubernetes.io/node-name"], authenticationv1.ExtraValue{"bound-node"}) ||
		!reflect.DeepEqual(u.Extra["authentication.kubernetes.io/node-uid"], authenticationv1.ExtraValue{string(node.UID)}) || u.Extra["authentication.kubernetes.io/pod-name"] != nil {
		t.Errorf("node-bound token while the node exists: %v %+v", err, u)
	}

	// The refusals, upstream's: another kind 400, a missing object 404 of
	// its resource, another UID 409.
	for _, tc := range []struct {
		ref  authenticationv1.BoundObjectReference
		want int
	}{
		{authenticationv1.BoundObjectReference{Kind: "ConfigMap", APIVersion: "v1", Name: "holder"}, 400},
		{authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "missing"}, 404},
		{authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "holder", UID: "0d4691ed-659b-4935-a832-355f77ee47cc"}, 409},
		{authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: "missing"}, 404},
	} {
		if _, err := request(&tc.ref); code(err) != tc.want {
			t.Errorf("bound to %s %s (uid %q): %v, want %d", tc.ref.Kind, tc.ref.Name, tc.ref.UID, err, tc.want)
		} else if tc.want == 400 && !strings.Contains(err.Error(), "cannot bind token to object of type /v1, Kind=ConfigMap") {
			t.Errorf("bound to a ConfigMap: %v", err)
		} else if tc.want == 404 && !apierrors.IsNotFound(err) {
			t.Errorf("bound to a missing %s: %v", tc.ref.Kind, err)
		}
	}

	// Deleted: the tokens stop; a secret of the same name does not revive them.
	if err := admin.CoreV1().Secrets("default").Delete(ctx(t), "holder", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, token := range []string{secretToken, kubectlToken} {
		if err := waitFor(t, refused(token)); err != nil {
			t.Errorf("secret-bound token after the secret's deletion: %v", err)
		}
	}
	if _, err := admin.CoreV1().Secrets("default").Create(ctx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "holder"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := refused(secretToken)(); err != nil {
		t.Errorf("secret-bound token after the secret is recreated: %v", err)
	}
	if err := admin.CoreV1().Nodes().Delete(ctx(t), "bound-node", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, refused(nodeToken)); err != nil {
		t.Errorf("node-bound token after the node's deletion: %v", err)
	}
}
