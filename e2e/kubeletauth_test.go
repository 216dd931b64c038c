package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"skiff.dev/component-base/certs"
)

// TestKubeletAPIAuth: Prometheus in a pod scrapes the kubelet with its
// service account's token: the kubelet asks the API server who it is
// (TokenReview) and whether it may (SubjectAccessReview of nodes/metrics),
// once for five scrapes, as upstream's kubelet caches both answers; a
// token the API server does not know is 401, a service account without
// the binding 403.
func TestKubeletAPIAuth(t *testing.T) {
	c := startCluster(t)
	c.kubectl(t, "apply", "-f", filepath.Join("..", "deploy", "prometheus", "rbac.yaml"))
	token := serviceAccountToken(t, c, "prometheus", true)
	url := kubeletURL(t, c) + "/metrics/resource"
	client := prometheusClient(t, c, true)
	get := func(token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	sar0, tr0 := reviewCounts(t, c)
	for i := 0; i < 5; i++ {
		if code, body := get(token); code != http.StatusOK || !strings.Contains(body, "node_cpu_usage_seconds_total") {
			t.Fatalf("scrape %d with the service account's token: %d %.300s", i, code, body)
		}
	}
	// The API server counts a review as it ends: wait for the first.
	var sar1, tr1 int
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		sar1, tr1 = reviewCounts(t, c)
		return sar1 > sar0 && tr1 > tr0, nil
	}); err != nil {
		t.Fatalf("no review seen: %d SubjectAccessReviews, %d TokenReviews", sar1-sar0, tr1-tr0)
	}
	if sar1-sar0 != 1 || tr1-tr0 != 1 {
		t.Errorf("five scrapes made %d SubjectAccessReviews and %d TokenReviews, want 1 and 1", sar1-sar0, tr1-tr0)
	}

	if code, body := get("not-a-token"); code != http.StatusUnauthorized {
		t.Errorf("an unknown token: %d %.200s, want 401", code, body)
	}
	other := serviceAccountToken(t, c, "nobody", false)
	if code, body := get(other); code != http.StatusForbidden || !strings.Contains(body, "system:serviceaccount:default:nobody") {
		t.Errorf("a service account without the binding: %d %.200s, want 403", code, body)
	}
}

// serviceAccountToken makes the service account default/name and returns
// a token of it; bound: the ClusterRole prometheus is bound to it.
func serviceAccountToken(t *testing.T, c *cluster, name string, bound bool) string {
	t.Helper()
	ctx := context.Background()
	if _, err := c.client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if bound {
		if _, err := c.client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "prometheus-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "prometheus"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: name}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var tr *authenticationv1.TokenRequest
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		tr, err = c.client.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("a token for default/%s: %v", name, err)
	}
	return tr.Status.Token
}

// prometheusClient is an HTTPS client with a client certificate for the
// user prometheus (none with noCert), trusting the cluster CA, keeping its connection alive
// as Prometheus does.
func prometheusClient(t *testing.T, c *cluster, noCert bool) *http.Client {
	t.Helper()
	ca, err := certs.LoadCA(c.ts.PKIDir)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := certs.IssueClientCert(ca, "prometheus", nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	cfg := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}}}
	if noCert {
		cfg.Certificates = nil
	}
	tr := &http.Transport{TLSClientConfig: cfg}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// kubeletURL is the kubelet API's address as its Node reports it.
func kubeletURL(t *testing.T, c *cluster) string {
	t.Helper()
	var port int32
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := c.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		port = n.Status.DaemonEndpoints.KubeletEndpoint.Port
		return port != 0, nil
	}); err != nil {
		t.Fatalf("node %s reports no kubelet port: %v", nodeName, err)
	}
	return fmt.Sprintf("https://%s:%d", nodeIP, port)
}

// reviewCounts are how many SubjectAccessReviews and TokenReviews the API
// server has answered.
func reviewCounts(t *testing.T, c *cluster) (sars, tokenReviews int) {
	t.Helper()
	body, err := c.client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("the API server's /metrics: %v", err)
	}
	families, err := new(expfmt.TextParser).TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("the API server's /metrics: %v", err)
	}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() != "resource" {
				continue
			}
			switch l.GetValue() {
			case "subjectaccessreviews":
				sars += int(m.GetCounter().GetValue())
			case "tokenreviews":
				tokenReviews += int(m.GetCounter().GetValue())
			}
		}
	}
	return sars, tokenReviews
}
