package serviceaccount

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/serviceaccount"
	"skiff.dev/apiserver/pkg/storage"
)

type fakeGetter map[string]runtime.Object

func (f fakeGetter) Get(_ context.Context, _, name string) (runtime.Object, error) {
	if o, ok := f[name]; ok {
		return o, nil
	}
	return nil, storage.ErrNotFound
}

func tokenDeps(t *testing.T) rest.TokenDeps {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return rest.TokenDeps{
		ServiceAccounts: fakeGetter{"sa": &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", Namespace: "ns", UID: "sa-uid"}}},
		Pods: fakeGetter{"p": &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "pod-uid"},
			Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "sa"}},
			"other-sa": &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other-sa", Namespace: "ns", UID: "pod2-uid"},
				Spec: corev1.PodSpec{ServiceAccountName: "default"}}},
		Secrets: fakeGetter{"s": &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "secret-uid"}}},
		Nodes:   fakeGetter{"n1": &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}},
		Issuer:  &serviceaccount.Issuer{Key: key, Issuer: "https://issuer.test"},
	}
}

// A token bound to a pod names the pod and its node (with the Node's
// UID); the audiences default to the issuer and the lifetime to an hour.
func TestTokenRequestBoundToPod(t *testing.T) {
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: "pod-uid"}}}
	out, err := TokenRequest(context.Background(), tokenDeps(t), "ns", "sa", tr)
	if err != nil {
		t.Fatal(err)
	}
	if out.Name != "sa" || out.Namespace != "ns" || *out.Spec.ExpirationSeconds != 3600 ||
		len(out.Spec.Audiences) != 1 || out.Spec.Audiences[0] != "https://issuer.test" {
		t.Errorf("answer = %+v", out)
	}
	k := privateClaims(t, out.Status.Token)
	if k.Pod == nil || k.Pod.Name != "p" || k.Pod.UID != "pod-uid" || k.Node == nil || k.Node.Name != "n1" || k.Node.UID != "node-uid" ||
		k.Secret != nil || k.ServiceAccount.UID != "sa-uid" {
		t.Errorf("claims = %+v", k)
	}
}

// privateClaims decodes a token's kubernetes.io claims.
func privateClaims(t *testing.T, token string) serviceaccount.KubernetesClaims {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", token)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims serviceaccount.Claims
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims.Kubernetes
}

// A token bound to a secret names the secret (upstream's
// kubernetes.io.secret claim), one bound to a node the node; neither names
// a pod, and the UID may be left out of the reference.
func TestTokenRequestBoundToSecretAndNode(t *testing.T) {
	deps := tokenDeps(t)
	for _, tc := range []struct {
		ref  authenticationv1.BoundObjectReference
		want func(serviceaccount.KubernetesClaims) bool
	}{
		{authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "s", UID: "secret-uid"}, func(k serviceaccount.KubernetesClaims) bool {
			return k.Secret != nil && *k.Secret == serviceaccount.Ref{Name: "s", UID: "secret-uid"} && k.Pod == nil && k.Node == nil
		}},
		{authenticationv1.BoundObjectReference{Kind: "Secret", Name: "s"}, func(k serviceaccount.KubernetesClaims) bool {
			return k.Secret != nil && k.Secret.UID == "secret-uid"
		}},
		{authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: "n1", UID: "node-uid"}, func(k serviceaccount.KubernetesClaims) bool {
			return k.Node != nil && *k.Node == serviceaccount.Ref{Name: "n1", UID: "node-uid"} && k.Pod == nil && k.Secret == nil
		}},
	} {
		out, err := TokenRequest(context.Background(), deps, "ns", "sa", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &tc.ref}})
		if err != nil {
			t.Errorf("%s %s: %v", tc.ref.Kind, tc.ref.Name, err)
			continue
		}
		if k := privateClaims(t, out.Status.Token); !tc.want(k) || k.ServiceAccount.UID != "sa-uid" || k.Namespace != "ns" {
			t.Errorf("%s %s: claims = %+v", tc.ref.Kind, tc.ref.Name, k)
		}
	}
}

// The refusals, upstream's: a body naming another account or namespace
// (422); a lifetime out of range (422); a bound kind
// other than the core group's Pod, Secret and Node (400 "cannot bind token
// to object of type"); a missing object (404 of its resource); an object
// of another UID (409); a pod of another service account (400).
func TestTokenRequestRefusals(t *testing.T) {
	deps := tokenDeps(t)
	ref := func(kind, name, uid string) *authenticationv1.BoundObjectReference {
		return &authenticationv1.BoundObjectReference{Kind: kind, Name: name, UID: k8stypes.UID(uid)}
	}
	for _, tc := range []struct {
		name  string
		meta  metav1.ObjectMeta
		spec  authenticationv1.TokenRequestSpec
		check func(error) bool
	}{
		{name: "other name", meta: metav1.ObjectMeta{Name: "other"}, check: apierrors.IsInvalid},
		{name: "other namespace", meta: metav1.ObjectMeta{Name: "sa", Namespace: "other"}, check: apierrors.IsInvalid},
		{"short", metav1.ObjectMeta{}, authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](599)}, apierrors.IsInvalid},
		{"configmap", metav1.ObjectMeta{}, authenticationv1.TokenRequestSpec{BoundObjectRef: ref("ConfigMap", "s", "")}, badRequest("cannot bind token to object of type /, Kind=ConfigMap")},
		{"apps pod", metav1.ObjectMeta{}, authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "apps/v1", Name: "p"}},
			badRequest("cannot bind token to object of type apps/v1, Kind=Pod")},
		{"missing pod", metav1.ObjectMeta{}, authenticationv1.TokenRequestSpec{BoundObjectRef: ref("Pod", "q", "")}, notFoundOf("pods")},
		{"missing secret", metav1.ObjectMeta{}, authenticationv1.TokenRequestSpec{BoundObjectRef: ref("Secret", "q", "")}, notFoundOf("secrets")},
		{"missing node", metav1.ObjectMeta{}, authenticationv1.TokenRequestSpec{BoundObjectRef: ref("Node", "q", "")}, notFoundOf("nodes")},
		{"other pod uid", metav1.ObjectMeta{}, authenticationv1.TokenRequestSpec{BoundObjectRef: ref("Pod", "p", "other")}, conflict("Pod")},
		{"other secret uid", metav1.ObjectMeta{}, authenticationv1.TokenRequestSpec{BoundObjectRef: ref("Secret", "s", "other")}, conflict("Secret")},
		{"other node uid", metav1.ObjectMeta{}, authenticationv1.TokenRequestSpec{BoundObjectRef: ref("Node", "n1", "other")}, conflict("Node")},
		{"pod of another account", metav1.ObjectMeta{}, authenticationv1.TokenRequestSpec{BoundObjectRef: ref("Pod", "other-sa", "")},
			badRequest(`cannot bind token for serviceaccount "sa" to pod running with different serviceaccount name.`)},
	} {
		_, err := TokenRequest(context.Background(), deps, "ns", "sa", &authenticationv1.TokenRequest{ObjectMeta: tc.meta, Spec: tc.spec})
		if !tc.check(err) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}

func badRequest(msg string) func(error) bool {
	return func(err error) bool { return apierrors.IsBadRequest(err) && err.Error() == msg }
}

func notFoundOf(resource string) func(error) bool {
	return func(err error) bool {
		return apierrors.IsNotFound(err) && err.(apierrors.APIStatus).Status().Details.Kind == resource
	}
}

func conflict(kind string) func(error) bool {
	return func(err error) bool {
		return apierrors.IsConflict(err) && err.(apierrors.APIStatus).Status().Details.Kind == kind &&
			strings.Contains(err.Error(), "the UID in the bound object reference (other) does not match the UID in record")
	}
}
