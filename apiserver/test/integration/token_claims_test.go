package integration

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// jwtClaims decodes a token's payload (the test trusts the server's
// signature; the server checks it).
func jwtClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(data, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// A service account token carries its own ID (jti) and, bound to a pod, the
// pod's node; the user it authenticates as has upstream's extra: the
// credential ID "JTI=<jti>", the pod's and the node's name and UID, as
// SelfSubjectReview (kubectl auth whoami) and TokenReview show it.
func TestServiceAccountTokenIdentity(t *testing.T) {
	ts := start(t, nil)
	admin := ts.Client
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node, err := admin.CoreV1().Nodes().Create(ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder := testPod("holder", "node-1")
	holder.Spec.ServiceAccountName = "robot" // a token binds only to a pod of its account
	pod, err := admin.CoreV1().Pods("default").Create(ctx(t), holder, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	request := func(bound *authenticationv1.BoundObjectReference) string {
		t.Helper()
		tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx(t), "robot",
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: bound}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	bound := request(&authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "holder", UID: pod.UID})
	unbound := request(nil)

	claims := jwtClaims(t, bound)
	jti, _ := claims["jti"].(string)
	k8s, _ := claims["kubernetes.io"].(map[string]any)
	nodeClaim, _ := k8s["node"].(map[string]any)
	if jti == "" || nodeClaim["name"] != "node-1" || nodeClaim["uid"] != string(node.UID) {
		t.Fatalf("bound token claims: %v", claims)
	}
	unboundJTI, _ := jwtClaims(t, unbound)["jti"].(string)
	if unboundJTI == "" || unboundJTI == jti {
		t.Fatalf("jti of the unbound token %q (bound: %q)", unboundJTI, jti)
	}

	tests := []struct {
		name      string
		token     string
		wantExtra map[string]authenticationv1.ExtraValue
	}{
		{name: "bound to a pod", token: bound, wantExtra: map[string]authenticationv1.ExtraValue{
			"authentication.kubernetes.io/credential-id": {"JTI=" + jti},
			"authentication.kubernetes.io/pod-name":      {"holder"},
			"authentication.kubernetes.io/pod-uid":       {string(pod.UID)},
			"authentication.kubernetes.io/node-name":     {"node-1"},
			"authentication.kubernetes.io/node-uid":      {string(node.UID)},
		}},
		{name: "unbound", token: unbound, wantExtra: map[string]authenticationv1.ExtraValue{
			"authentication.kubernetes.io/credential-id": {"JTI=" + unboundJTI},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			who, err := clientWithToken(t, ts, tc.token).AuthenticationV1().SelfSubjectReviews().Create(ctx(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("self subject review: %v", err)
			}
			u := who.Status.UserInfo
			if u.Username != "system:serviceaccount:default:robot" || !reflect.DeepEqual(u.Extra, tc.wantExtra) ||
				strings.Join(u.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:default,system:authenticated" {
				t.Errorf("self subject review: %+v, want extra %v", u, tc.wantExtra)
			}
			review, err := admin.AuthenticationV1().TokenReviews().Create(ctx(t), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tc.token}}, metav1.CreateOptions{})
			if err != nil || !review.Status.Authenticated || !reflect.DeepEqual(review.Status.User.Extra, tc.wantExtra) {
				t.Errorf("token review: %v %+v, want extra %v", err, review.Status, tc.wantExtra)
			}
		})
	}

	// An impersonated user has the extra the impersonation names (the key
	// percent-encoded in the header), as upstream.
	cfg := rest.CopyConfig(ts.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "jane", Extra: map[string][]string{"example.com/scopes": {"view", "edit"}}}
	jane, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	who, err := jane.AuthenticationV1().SelfSubjectReviews().Create(ctx(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || who.Status.UserInfo.Username != "jane" ||
		!reflect.DeepEqual(who.Status.UserInfo.Extra, map[string]authenticationv1.ExtraValue{"example.com/scopes": {"view", "edit"}}) {
		t.Errorf("impersonated: %v %+v", err, who)
	}

	// The admin (a client certificate) has no extra.
	who, err = admin.AuthenticationV1().SelfSubjectReviews().Create(ctx(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || who.Status.UserInfo.Username == "" || len(who.Status.UserInfo.Extra) != 0 {
		t.Errorf("admin: %v %+v", err, who)
	}
}
