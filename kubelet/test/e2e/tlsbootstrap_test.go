package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/component-base/certs"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/test/integration/cmtest"
	ctlapp "skiff.dev/ctl/app"
	"skiff.dev/kubelet/app"
)

// TestTLSBootstrap: a kubelet given only the bootstrap kubeconfig that the
// printed join command writes gets its client certificate through a CSR
// the controller manager approves and signs, registers its Node, turns
// Ready and runs a pod.
func TestTLSBootstrap(t *testing.T) {
	e := setupWith(t, func(o *server.Options) { o.EnableBootstrapTokenAuth, o.AnonymousAuth = true, true })
	cmtest.Start(t, e.ts, func(o *cmapp.Options) {
		o.Controllers = []string{"csrapproving", "csrsigning", "bootstrapsigner"}
		o.Controller.ClusterSigningCertFile = certs.CertFile(e.ts.PKIDir, "ca")
		o.Controller.ClusterSigningKeyFile = certs.KeyFile(e.ts.PKIDir, "ca")
		o.Controller.ApproveKubeletServingCSRs = true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	skiffctl := func(args ...string) string {
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
	joinCmd := strings.Fields(skiffctl("--kubeconfig", e.ts.Kubeconfig, "token", "create", "--ttl", "10m"))
	if len(joinCmd) < 2 || joinCmd[1] != "join" {
		t.Fatalf("token create printed %q", joinCmd)
	}
	dir := t.TempDir()
	bootstrap := filepath.Join(dir, "bootstrap-kubelet.kubeconfig")
	skiffctl(append(joinCmd[1:], "--bootstrap-kubeconfig", bootstrap, "--ca-file", filepath.Join(dir, "ca.crt"), "--discovery-timeout", "30s")...)

	e.customize = func(o *app.Options) {
		o.Kubeconfig = filepath.Join(dir, "kubelet.kubeconfig")
		o.BootstrapKubeconfig = bootstrap
		o.CertDir = filepath.Join(dir, "pki")
		o.RotateCertificates = true
		// Its serving certificate from a kubelet-serving CSR too.
		o.RotateServerCertificates = true
		// The CA the join verified, for the kubelet's own API.
		o.ClientCAFile = filepath.Join(dir, "ca.crt")
	}
	start := time.Now()
	k := e.startKubelet(t)
	e.makeReady(t)
	// The serving certificate arrives once the Node reports its address:
	// the kubelet's HTTPS port then presents a certificate of the cluster
	// CA for 127.0.0.1 (before, the handshake fails).
	roots := x509.NewCertPool()
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil || !roots.AppendCertsFromPEM(ca) {
		t.Fatalf("the CA: %v", err)
	}
	poll(t, 60*time.Second, "the kubelet's serving certificate from the cluster CA", func() (bool, string) {
		conn, err := tls.Dial("tcp", k.cfg.Listener.Addr().String(), &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
		if err != nil {
			return false, err.Error()
		}
		conn.Close()
		return true, ""
	})
	t.Logf("serving certificate after %v from the kubelet's start", time.Since(start).Round(10*time.Millisecond))
	// The Node was registered by the node's own, bootstrapped identity.
	csrs, err := e.client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var bootstrapped bool
	for _, c := range csrs.Items {
		bootstrapped = bootstrapped || (strings.HasPrefix(c.Spec.Username, "system:bootstrap:") && len(c.Status.Certificate) > 0)
	}
	if !bootstrapped {
		t.Errorf("no CSR of a bootstrap token was signed: %+v", csrs.Items)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubelet.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	nodeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	who, err := nodeClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := who.Status.UserInfo.Username; u != "system:node:"+nodeName {
		t.Errorf("the written kubeconfig is %q", u)
	}

	e.createPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "joined"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers:                    []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "3600"}}},
		},
	})
	poll(t, 60*time.Second, "the pod to run on the joined node", func() (bool, string) {
		p := e.getPod(t, "joined")
		return p.Status.Phase == corev1.PodRunning, fmt.Sprintf("phase %s %+v", p.Status.Phase, p.Status.ContainerStatuses)
	})
}
