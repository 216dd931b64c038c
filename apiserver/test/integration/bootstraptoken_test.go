package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"reflect"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
)

func bootstrapTokenSecret(id, secret string, expires time.Time, auth bool) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Type:       "bootstrap.kubernetes.io/token",
		StringData: map[string]string{
			"token-id": id, "token-secret": secret, "expiration": expires.UTC().Format(time.RFC3339),
			"auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token",
		},
	}
	if auth {
		s.StringData["usage-bootstrap-authentication"] = "true"
	}
	return s
}

// TestBootstrapTokenAuthentication: with --enable-bootstrap-token-auth a
// bootstrap token is system:bootstrap:<id> in system:bootstrappers and its
// extra groups, may ask for a node client certificate, and is refused once
// expired or when not marked for authentication; with --anonymous-auth a
// request without credentials is system:anonymous, for RBAC to decide.
func TestBootstrapTokenAuthentication(t *testing.T) {
	ts := start(t, func(o *server.Options) { o.EnableBootstrapTokenAuth, o.AnonymousAuth = true, true })
	c := ctx(t)
	secrets := ts.Client.CoreV1().Secrets("kube-system")
	for _, s := range []*corev1.Secret{
		bootstrapTokenSecret("abcdef", "0123456789abcdef", time.Now().Add(time.Hour), true),
		bootstrapTokenSecret("expird", "0123456789abcdef", time.Now().Add(-time.Minute), true),
		bootstrapTokenSecret("noauth", "0123456789abcdef", time.Now().Add(time.Hour), false),
	} {
		if _, err := secrets.Create(c, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The authenticator reads the Secrets from the watch cache.
	var who *authenticationv1.SelfSubjectReview
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		who, err = clientWithToken(t, ts, "abcdef.0123456789abcdef").AuthenticationV1().SelfSubjectReviews().Create(c, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsUnauthorized(err) || time.Now().After(deadline) {
			t.Fatalf("the valid token: %v", err)
		}
		select {
		case <-c.Done():
			t.Fatal(c.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	u := who.Status.UserInfo
	if want := []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated"}; u.Username != "system:bootstrap:abcdef" || !reflect.DeepEqual(u.Groups, want) {
		t.Errorf("user = %q %v, want system:bootstrap:abcdef %v", u.Username, u.Groups, want)
	}

	// system:node-bootstrapper (kubeadm:kubelet-bootstrap): the token may
	// ask for a certificate, and the CSR records who asked.
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "node-csr-test"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    nodeCSRPEM(t, "system:node:joiner"),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	got, err := clientWithToken(t, ts, "abcdef.0123456789abcdef").CertificatesV1().CertificateSigningRequests().Create(c, csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a CSR with the bootstrap token: %v", err)
	}
	if got.Spec.Username != "system:bootstrap:abcdef" {
		t.Errorf("CSR username = %q", got.Spec.Username)
	}
	// But nothing else.
	if _, err := clientWithToken(t, ts, "abcdef.0123456789abcdef").CoreV1().Secrets("kube-system").List(c, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing secrets with the bootstrap token: %v, want Forbidden", err)
	}

	for _, bad := range []string{"expird.0123456789abcdef", "noauth.0123456789abcdef", "abcdef.0123456789abcdee", "zzzzzz.0123456789abcdef"} {
		_, err := clientWithToken(t, ts, bad).AuthenticationV1().SelfSubjectReviews().Create(c, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("token %s: %v, want Unauthorized", bad, err)
		}
	}

	anonymous := anonymousClient(t, ts)
	if _, err := anonymous.CoreV1().ConfigMaps("kube-public").Get(c, "cluster-info", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("anonymous read without a role: %v, want Forbidden (not Unauthorized)", err)
	}
	if _, err := anonymous.Discovery().ServerVersion(); err != nil {
		t.Errorf("anonymous /version (system:public-info-viewer): %v", err)
	}
}

func anonymousClient(t *testing.T, ts *testserver.TestServer) kubernetes.Interface {
	t.Helper()
	cfg := rest.AnonymousClientConfig(ts.AdminConfig)
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func nodeCSRPEM(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	subject := pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}
