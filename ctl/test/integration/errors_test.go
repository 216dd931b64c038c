package integration

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/certs"
)

// writeKubeconfig writes a kubeconfig for server with the test CA and the
// given credentials.
func writeKubeconfig(t *testing.T, ts *testserver.TestServer, server string, auth *clientcmdapi.AuthInfo) string {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(ts.PKIDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["u"] = auth
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "ctx"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// expiredClientCert signs a client certificate that expired yesterday.
func expiredClientCert(t *testing.T, ts *testserver.TestServer) (certPEM, keyPEM []byte) {
	t.Helper()
	ca, err := certs.LoadCA(ts.PKIDir)
	if err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(4242),
		Subject:      pkix.Name{CommonName: "old-admin", Organization: []string{"system:masters"}},
		NotBefore:    time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

func TestErrors(t *testing.T) {
	ts := testserver.Start(t, nil)

	t.Run("unknown kind", func(t *testing.T) {
		f := writeFile(t, "foo.yaml", "apiVersion: v1\nkind: Podd\nmetadata:\n  name: x\n")
		r := skiffctl(t, ts, "", "apply", "-f", f)
		if r.err == nil {
			t.Fatal("apply of an unknown kind succeeded")
		}
		wantContains(t, "unknown kind error", r.err.Error(), "foo.yaml:1", `kind "Podd"`, "did you mean pods")
		r = skiffctl(t, ts, "", "get", "deploymnets")
		if r.err == nil {
			t.Fatal("get of an unknown resource type succeeded")
		}
		wantContains(t, "unknown resource error", r.err.Error(), `resource type "deploymnets"`, "did you mean deployments")
	})

	t.Run("bad yaml line", func(t *testing.T) {
		f := writeFile(t, "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n   labels: x\n")
		r := skiffctl(t, ts, "", "create", "-f", f)
		if r.err == nil {
			t.Fatal("create of bad YAML succeeded")
		}
		wantContains(t, "YAML error", r.err.Error(), "bad.yaml:10:", "mapping values are not allowed")
	})

	t.Run("unreachable server", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		kc := writeKubeconfig(t, ts, "https://"+addr, &clientcmdapi.AuthInfo{Token: "x"})
		r := skiffctlWith(t, kc, "", "get", "pods")
		if r.err == nil {
			t.Fatal("get against a closed port succeeded")
		}
		wantContains(t, "connection error", r.err.Error(), "cannot reach the API server at https://"+addr, "connection refused")
	})

	t.Run("expired client certificate", func(t *testing.T) {
		certPEM, keyPEM := expiredClientCert(t, ts)
		kc := writeKubeconfig(t, ts, ts.URL, &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM})
		r := skiffctlWith(t, kc, "", "get", "pods")
		if r.err == nil {
			t.Fatal("get with an expired certificate succeeded")
		}
		wantContains(t, "expired certificate error", r.err.Error(), "client certificate", "CN=old-admin", "expired at")
	})

	t.Run("403", func(t *testing.T) {
		kc := writeKubeconfig(t, ts, ts.URL, &clientcmdapi.AuthInfo{Token: "test-user-token"})
		r := skiffctlWith(t, kc, "", "get", "secrets", "-n", "kube-system")
		if r.err == nil {
			t.Fatal("an unprivileged user listed secrets")
		}
		wantContains(t, "403 error", r.err.Error(), "Error from server (Forbidden)", "who: test-user", "what: list resource \"secrets\"")
	})

	t.Run("422", func(t *testing.T) {
		f := writeFile(t, "invalid.yaml", strings.Replace(replicaSetManifest, "replicas: 2", "replicas: -1", 1))
		r := skiffctl(t, ts, "", "create", "-f", f)
		if r.err == nil {
			t.Fatal("create of an invalid object succeeded")
		}
		wantContains(t, "422 error", r.err.Error(), "invalid.yaml:1", "Error from server (Invalid)", "spec.replicas")
	})

	t.Run("namespace mismatch", func(t *testing.T) {
		f := writeFile(t, "ns.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: prod\n")
		r := skiffctl(t, ts, "", "apply", "-f", f, "-n", "dev")
		if r.err == nil {
			t.Fatal("apply into another namespace than the manifest's succeeded")
		}
		wantContains(t, "namespace mismatch error", r.err.Error(), "ns.yaml:1", `is "prod"`, "--namespace=dev")
		r = skiffctl(t, ts, "", "get", "pods", "x", "-A")
		if r.err == nil || !strings.Contains(r.err.Error(), "across all namespaces") {
			t.Errorf("get NAME -A: %v", r.err)
		}
	})

	t.Run("server-side apply", func(t *testing.T) {
		f := writeFile(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: \"1\"\n")
		r := skiffctl(t, ts, "", "apply", "--server-side", "-f", f)
		if r.err != nil || strings.TrimSpace(r.out) != "configmap/ssa serverside-applied" {
			t.Fatalf("apply --server-side: %v %q", r.err, r.out)
		}
		other := writeFile(t, "other.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: \"2\"\n")
		r = skiffctl(t, ts, "", "apply", "--server-side", "--field-manager", "other", "-f", other)
		if r.err == nil {
			t.Fatal("a conflicting apply succeeded")
		}
		wantContains(t, "conflict error", r.err.Error(), "other.yaml", `conflict with "kubectl": .data.a`, "--force-conflicts")
		r = skiffctl(t, ts, "", "apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", other)
		if r.err != nil {
			t.Fatalf("forced apply: %v", r.err)
		}
		r = skiffctl(t, ts, "", "get", "configmap", "ssa", "-o", "jsonpath={.data.a}")
		if r.err != nil || r.out != "2" {
			t.Errorf("after the forced apply: %v %q", r.err, r.out)
		}
	})
}

// skiffctlWith runs skiffctl with another kubeconfig.
func skiffctlWith(t *testing.T, kubeconfig, stdin string, args ...string) result {
	t.Helper()
	return skiffctl(t, &testserver.TestServer{Kubeconfig: kubeconfig}, stdin, args...)
}

// TestVerbosity checks -v 6, 8 and 10, and runs the curl command that
// -v 10 prints.
func TestVerbosity(t *testing.T) {
	ts := testserver.Start(t, nil)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	f := writeFile(t, "replicaset.yaml", replicaSetManifest)

	r := skiffctl(t, ts, "", "get", "pods", "-v", "6")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !regexp.MustCompile(`GET https://127\.0\.0\.1:\d+/api/v1/namespaces/default/pods 200 OK in \d+ milliseconds`).MatchString(r.errOut) {
		t.Errorf("-v 6 does not show the request line:\n%s", r.errOut)
	}
	if strings.Contains(r.errOut, "Response Body") {
		t.Error("-v 6 prints bodies")
	}
	wantContains(t, "-v 6", r.errOut, "Config loaded from file:  "+ts.Kubeconfig)

	r = skiffctl(t, ts, "", "create", "-f", f, "-v", "8")
	if r.err != nil {
		t.Fatal(r.err)
	}
	wantContains(t, "-v 8", r.errOut,
		`Request Body: {"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"my-replicaset","namespace":"default"}`,
		"POST https://", "/apis/apps/v1/namespaces/default/replicasets?fieldManager=kubectl-create&fieldValidation=Strict 201 Created",
		`Response Body: {"kind":"ReplicaSet","apiVersion":"apps/v1"`)
	if strings.Contains(r.errOut, "curl ") {
		t.Error("-v 8 prints curl commands")
	}

	r = skiffctl(t, ts, "", "get", "rs", "my-replicaset", "-o", "name", "-v", "10")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var curl string
	for _, line := range strings.Split(r.errOut, "\n") {
		if strings.HasPrefix(line, "curl ") && strings.Contains(line, "/replicasets/my-replicaset") {
			curl = line
		}
	}
	if curl == "" {
		t.Fatalf("-v 10 printed no curl command for the GET:\n%s", r.errOut)
	}
	wantContains(t, "curl command", curl, "curl -v -XGET", "--cacert ", "--cert ", "--key ", "'https://127.0.0.1:")
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed; not running the printed command")
	}
	out, err := exec.Command("sh", "-c", strings.Replace(curl, "curl -v", "curl -s", 1)).Output()
	if err != nil {
		t.Fatalf("running %s: %v", curl, err)
	}
	wantContains(t, "output of the printed curl command", string(out), `"kind":"ReplicaSet"`, `"name":"my-replicaset"`)
}
