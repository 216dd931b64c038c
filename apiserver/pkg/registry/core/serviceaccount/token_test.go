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
			Spec: corev1.PodSpec{NodeName: "n1"}}},
		Nodes:  fakeGetter{"n1": &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}},
		Issuer: &serviceaccount.Issuer{Key: key, Issuer: "https://issuer.test"},
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
	parts := strings.Split(out.Status.Token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", out.Status.Token)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims serviceaccount.Claims
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	k := claims.Kubernetes
	if k.Pod == nil || k.Pod.Name != "p" || k.Pod.UID != "pod-uid" || k.Node == nil || k.Node.UID != "node-uid" ||
		k.ServiceAccount.UID != "sa-uid" {
		t.Errorf("claims = %+v", k)
	}
}

// The refusals: a lifetime out of range (422), a bound kind other than Pod
// (422), a missing pod (404 of pods), a pod of another UID (409).
func TestTokenRequestRefusals(t *testing.T) {
	deps := tokenDeps(t)
	ref := func(kind, name, uid string) *authenticationv1.BoundObjectReference {
		return &authenticationv1.BoundObjectReference{Kind: kind, Name: name, UID: k8stypes.UID(uid)}
	}
	for _, tc := range []struct {
		name  string
		spec  authenticationv1.TokenRequestSpec
		check func(error) bool
	}{
		{"short", authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](599)}, apierrors.IsInvalid},
		{"secret", authenticationv1.TokenRequestSpec{BoundObjectRef: ref("Secret", "s", "")}, apierrors.IsInvalid},
		{"missing pod", authenticationv1.TokenRequestSpec{BoundObjectRef: ref("Pod", "q", "")}, func(err error) bool {
			return apierrors.IsNotFound(err) && apierrors.ReasonForError(err) == metav1.StatusReasonNotFound &&
				err.(apierrors.APIStatus).Status().Details.Kind == "pods"
		}},
		{"other uid", authenticationv1.TokenRequestSpec{BoundObjectRef: ref("Pod", "p", "other")}, apierrors.IsConflict},
	} {
		_, err := TokenRequest(context.Background(), deps, "ns", "sa", &authenticationv1.TokenRequest{Spec: tc.spec})
		if !tc.check(err) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}
