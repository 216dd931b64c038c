package integration

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/certs"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/test/integration/cmtest"
	ctlapp "skiff.dev/ctl/app"
	kubeletapp "skiff.dev/kubelet/app"
	kubeletcert "skiff.dev/kubelet/pkg/certificate"
)

// signingDuration is the controller manager's --cluster-signing-duration
// here: short, so the kubelet's certificate is rotated within the test.
const signingDuration = 12 * time.Second

// cluster is an API server that accepts bootstrap tokens and anonymous
// requests, and a controller manager with the CSR and bootstrap token
// controllers, signing with the cluster CA.
func cluster(t *testing.T) *testserver.TestServer {
	t.Helper()
	ts := testserver.Start(t, func(o *server.Options) { o.EnableBootstrapTokenAuth, o.AnonymousAuth = true, true })
	cmtest.Start(t, ts, func(o *cmapp.Options) {
		o.Controllers = []string{"csrapproving", "csrsigning", "csrcleaner", "bootstrapsigner", "tokencleaner"}
		o.Controller.ClusterSigningCertFile = certs.CertFile(ts.PKIDir, "ca")
		o.Controller.ClusterSigningKeyFile = certs.KeyFile(ts.PKIDir, "ca")
		o.Controller.ClusterSigningDuration = signingDuration
		o.Controller.ApproveKubeletServingCSRs = true
	})
	return ts
}

// skiffctl runs skiffctl with args and returns what it printed.
func skiffctl(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	cmd := ctlapp.NewSkiffctlCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("skiffctl %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

func poll(t *testing.T, ctx context.Context, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func leaf(t *testing.T, pemPath string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(pemPath)
	if err != nil {
		t.Fatal(err)
	}
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			t.Fatalf("%s holds no certificate", pemPath)
		}
		if block.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
}

// testJoinWithToken: 'skiffctl token create' prints a join command; run on
// a new node it verifies the cluster and writes a bootstrap kubeconfig; a
// kubelet given only that gets a node client certificate (CSR approved and
// signed by the controller manager), registers its Node and keeps its
// Lease with it, and renews the short-lived certificate before it expires,
// going on working past the first certificate's end.
func TestTLSBootstrap(t *testing.T) {
	ts := cluster(t)
	t.Run("join with a token", func(t *testing.T) {
		t.Parallel()
		testJoinWithToken(t, ts)
	})
	t.Run("expired token", func(t *testing.T) {
		t.Parallel()
		testExpiredTokenIsRefusedAndDeleted(t, ts)
	})
}

func testJoinWithToken(t *testing.T, ts *testserver.TestServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ctx = klog.NewContext(ctx, klog.Background().WithName("test"))

	out := skiffctl(t, ctx, "--kubeconfig", ts.Kubeconfig, "token", "create", "--ttl", "10m", "--description", "integration test")
	fields := strings.Fields(out)
	if len(fields) != 7 || fields[0] != "skiffctl" || fields[1] != "join" || fields[2] != ts.URL || fields[3] != "--token" ||
		fields[5] != "--discovery-token-ca-cert-hash" || !strings.HasPrefix(fields[6], "sha256:") {
		t.Fatalf("token create printed %q, want 'skiffctl join %s --token T --discovery-token-ca-cert-hash sha256:H'", out, ts.URL)
	}
	token := fields[4]
	list := skiffctl(t, ctx, "--kubeconfig", ts.Kubeconfig, "token", "list")
	if !strings.Contains(list, token[:6]) || !strings.Contains(list, "integration test") || !strings.Contains(list, "authentication,signing") {
		t.Errorf("token list printed %q", list)
	}

	dir := t.TempDir()
	bootstrapPath := filepath.Join(dir, "bootstrap-kubelet.kubeconfig")
	// The node's side, exactly as printed.
	caPath := filepath.Join(dir, "pki", "ca.crt")
	joinOut := skiffctl(t, ctx, append(fields[1:], "--bootstrap-kubeconfig", bootstrapPath, "--ca-file", caPath, "--discovery-timeout", "30s")...)
	if !strings.Contains(joinOut, "verified") || !strings.Contains(joinOut, "--client-ca-file="+caPath) {
		t.Errorf("join printed %q", joinOut)
	}
	if got, want := leaf(t, caPath), leaf(t, certs.CertFile(ts.PKIDir, "ca")); !got.Equal(want) {
		t.Errorf("join wrote CA %s, want the cluster's %s", got.Subject, want.Subject)
	}

	// A wrong CA hash is refused, and so is a wrong token.
	bad := ctlapp.NewSkiffctlCommand()
	bad.SetOut(&bytes.Buffer{})
	bad.SetErr(&bytes.Buffer{})
	bad.SetArgs([]string{"join", ts.URL, "--token", token, "--discovery-token-ca-cert-hash", "sha256:" + strings.Repeat("ab", 32),
		"--bootstrap-kubeconfig", filepath.Join(dir, "bad.kubeconfig"), "--ca-file", "", "--discovery-timeout", "10s"})
	if err := bad.ExecuteContext(ctx); err == nil || !strings.Contains(err.Error(), "hash") {
		t.Errorf("join with a wrong CA hash: %v", err)
	}
	bad.SetArgs([]string{"join", ts.URL, "--token", token[:7] + strings.Repeat("z", 16), "--discovery-token-ca-cert-hash", fields[6],
		"--bootstrap-kubeconfig", filepath.Join(dir, "bad.kubeconfig"), "--ca-file", "", "--discovery-timeout", "10s"})
	if err := bad.ExecuteContext(ctx); err == nil || !strings.Contains(err.Error(), "signature") {
		t.Errorf("join with a wrong token secret: %v", err)
	}

	// The kubelet's client: TLS bootstrap, then rotation.
	const node = "joiner"
	o := kubeletapp.NewOptions()
	o.NodeName = node
	o.Kubeconfig = filepath.Join(dir, "kubelet.kubeconfig")
	o.BootstrapKubeconfig = bootstrapPath
	o.CertDir = filepath.Join(dir, "pki")
	o.RotateCertificates = true
	o.CertRotationCheckPeriod = 200 * time.Millisecond
	cfg, err := kubeletapp.ClientConfig(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	current := filepath.Join(o.CertDir, kubeletcert.ClientPairPrefix+"-current.pem")
	first := leaf(t, current)
	if first.Subject.CommonName != "system:node:"+node || len(first.Subject.Organization) != 1 || first.Subject.Organization[0] != "system:nodes" {
		t.Errorf("bootstrapped certificate subject = %s", first.Subject)
	}
	if life := first.NotAfter.Sub(first.NotBefore); life > 2*signingDuration {
		t.Errorf("certificate lasts %v, want about %v (--cluster-signing-duration)", life, signingDuration)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	who, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if who.Status.UserInfo.Username != "system:node:"+node {
		t.Errorf("the kubelet is %q", who.Status.UserInfo.Username)
	}
	// Registration and heartbeats under the node's own identity (the
	// Node authorizer's rules).
	if _, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("registering the node: %v", err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: corev1.NamespaceNodeLease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node), LeaseDurationSeconds: ptr.To[int32](40)}}
	if _, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the node's lease: %v", err)
	}
	heartbeat := func(ctx context.Context) error {
		l, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		_, err = client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{})
		return err
	}
	if err := heartbeat(ctx); err != nil {
		t.Fatal(err)
	}

	// A serving certificate (--rotate-server-certificates) for the node's
	// own address, approved by the opt-in --approve-kubelet-serving-csrs.
	n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: node}}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the node's addresses: %v", err)
	}
	serving, err := kubeletcert.NewServerManager(client, o.CertDir, node, func() []corev1.NodeAddress { return n.Status.Addresses })
	if err != nil {
		t.Fatal(err)
	}
	serving.Start()
	defer serving.Stop()
	poll(t, ctx, 20*time.Second, "the serving certificate", func(context.Context) (bool, error) { return serving.Current() != nil, nil })
	sc := serving.Current().Leaf
	if len(sc.ExtKeyUsage) != 1 || sc.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth || len(sc.IPAddresses) != 1 || !sc.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) ||
		len(sc.DNSNames) != 1 || sc.DNSNames[0] != node {
		t.Errorf("serving certificate: usages %v, IPs %v, DNS %v", sc.ExtKeyUsage, sc.IPAddresses, sc.DNSNames)
	}
	if err := sc.CheckSignatureFrom(leaf(t, certs.CertFile(ts.PKIDir, "ca"))); err != nil {
		t.Errorf("the serving certificate is not signed by the cluster CA: %v", err)
	}

	// Rotation: a new certificate (a CSR by the node itself, approved as
	// selfnodeclient) before the first one ends.
	var second *x509.Certificate
	poll(t, ctx, 2*signingDuration, "the client certificate to be rotated", func(context.Context) (bool, error) {
		second = leaf(t, current)
		return second.SerialNumber.Cmp(first.SerialNumber) != 0, nil
	})
	if !time.Now().Before(first.NotAfter) {
		t.Errorf("the certificate was renewed only after it expired (%s)", first.NotAfter)
	}
	// Past the first certificate's end, the kubelet still works.
	poll(t, ctx, 2*signingDuration, "the first certificate to expire", func(context.Context) (bool, error) {
		return time.Now().After(first.NotAfter.Add(time.Second)), nil
	})
	if err := heartbeat(ctx); err != nil {
		t.Fatalf("heartbeat after the first certificate expired: %v", err)
	}
	if _, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil {
		t.Fatalf("reading the node after rotation: %v", err)
	}

	// Once joined, the token can go; the node keeps working on its own
	// certificate.
	skiffctl(t, ctx, "--kubeconfig", ts.Kubeconfig, "token", "delete", token[:6])
	if _, err := ts.Client.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+token[:6], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after token delete: %v", err)
	}
	if err := heartbeat(ctx); err != nil {
		t.Errorf("heartbeat after the token was deleted: %v", err)
	}
}

// testExpiredTokenIsRefusedAndDeleted: a token past its expiration cannot
// authenticate, and the token cleaner deletes its Secret.
func testExpiredTokenIsRefusedAndDeleted(t *testing.T, ts *testserver.TestServer) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	token := strings.TrimSpace(skiffctl(t, ctx, "--kubeconfig", ts.Kubeconfig, "token", "create", "--ttl", "5s", "--print-join-command=false"))
	id := token[:6]
	cfg := rest.AnonymousClientConfig(ts.AdminConfig)
	cfg.BearerToken = token
	tokenClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, 10*time.Second, "the token to authenticate", func(ctx context.Context) (bool, error) {
		_, err := tokenClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err == nil, nil
	})
	poll(t, ctx, 20*time.Second, "the token cleaner to delete the expired token", func(ctx context.Context) (bool, error) {
		_, err := ts.Client.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+id, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := tokenClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("the expired token: %v, want Unauthorized", err)
	}
}
