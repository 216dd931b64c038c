package app

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2/ktesting"

	"skiff.dev/component-base/certs"
)

// run executes skiffctl with args in-process and returns its standard output.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	cmd := NewSkiffctlCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return out.String(), err
}

func TestCertsCommand(t *testing.T) {
	root := t.TempDir()
	pki := filepath.Join(root, "pki")
	args := []string{
		"certs", "--dir", pki,
		"--server", "https://192.0.2.1:6443",
		"--apiserver-san", "api.example.com", "--apiserver-san", "198.51.100.7",
		"--node", "worker-1", "--node", "worker-2",
		"--node-ip", "worker-2=192.0.2.20", "--node-ip", "worker-2=fd00::20",
	}
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("skiffctl certs: %v", err)
	}
	if !strings.Contains(out, "37 written, 0 kept") {
		t.Errorf("output does not report 37 files written:\n%s", out)
	}

	ca, err := certs.LoadCA(pki)
	if err != nil {
		t.Fatal(err)
	}
	apiserver, err := certs.LoadKeyPair(pki, "apiserver")
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"api.example.com", "198.51.100.7", "192.0.2.1", "10.96.0.1", "kubernetes.default.svc"} {
		if err := apiserver.Cert.VerifyHostname(host); err != nil {
			t.Errorf("API server certificate: %v", err)
		}
	}
	kubelet, err := certs.LoadKeyPair(pki, "kubelet-worker-2")
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"worker-2", "localhost", "127.0.0.1", "192.0.2.20", "fd00::20"} {
		if err := kubelet.Cert.VerifyHostname(host); err != nil {
			t.Errorf("kubelet serving certificate: %v", err)
		}
	}
	client, err := certs.LoadKeyPair(pki, "kubelet-worker-1-client")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("kubelet client certificate: %v", err)
	}
	cfg, err := clientcmd.LoadFromFile(filepath.Join(root, "kubelet-worker-1.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server; got != "https://192.0.2.1:6443" {
		t.Errorf("kubeconfig server %q", got)
	}

	// The same command again keeps everything.
	caBefore, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	out, err = run(t, args...)
	if err != nil {
		t.Fatalf("second skiffctl certs: %v", err)
	}
	if !strings.Contains(out, "0 written, 37 kept") {
		t.Errorf("second run output:\n%s", out)
	}
	caAfter, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(caBefore, caAfter) {
		t.Errorf("second run replaced the CA")
	}

	// --force rotates everything.
	out, err = run(t, append(args, "--force")...)
	if err != nil {
		t.Fatalf("skiffctl certs --force: %v", err)
	}
	if !strings.Contains(out, "37 written, 0 kept") {
		t.Errorf("--force output:\n%s", out)
	}
	caForced, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(caBefore, caForced) {
		t.Errorf("--force kept the CA")
	}
}

func TestCertsCommandDirectories(t *testing.T) {
	tests := []struct {
		name           string
		skiffHome      string // relative to the working directory; "" leaves it unset
		args           []string
		wantPKI        string
		wantKubeconfig string
	}{
		{name: "defaults", wantPKI: ".skiff/pki", wantKubeconfig: ".skiff"},
		{name: "SKIFF_HOME", skiffHome: "state", wantPKI: "state/pki", wantKubeconfig: "state"},
		{name: "--dir", args: []string{"--dir", "x/certs"}, wantPKI: "x/certs", wantKubeconfig: "x"},
		{name: "--dir and --kubeconfig-dir", skiffHome: "state", args: []string{"--dir", "p", "--kubeconfig-dir", "k"}, wantPKI: "p", wantKubeconfig: "k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wd := t.TempDir()
			t.Chdir(wd)
			t.Setenv(skiffHomeEnv, tt.skiffHome)
			if _, err := run(t, append([]string{"certs", "--node", "n1"}, tt.args...)...); err != nil {
				t.Fatalf("skiffctl certs: %v", err)
			}
			for _, path := range []string{
				filepath.Join(tt.wantPKI, "ca.crt"),
				filepath.Join(tt.wantPKI, "kubelet-n1.crt"),
				filepath.Join(tt.wantKubeconfig, "admin.kubeconfig"),
				filepath.Join(tt.wantKubeconfig, "kubelet-n1.kubeconfig"),
			} {
				if _, err := os.Stat(filepath.Join(wd, path)); err != nil {
					t.Errorf("want %s: %v", path, err)
				}
			}
		})
	}
}

func TestCertsCommandErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "node-ip without node", args: []string{"--node-ip", "192.0.2.1"}, wantErr: "want NODE=IP"},
		{name: "node-ip with bad IP", args: []string{"--node", "n1", "--node-ip", "n1=300.1.1.1"}, wantErr: "invalid IP address"},
		{name: "node-ip for another node", args: []string{"--node", "n1", "--node-ip", "n2=192.0.2.1"}, wantErr: "not among the nodes"},
		{name: "bad service IP", args: []string{"--service-cluster-ip", "x"}, wantErr: "--service-cluster-ip"},
		{name: "bad server", args: []string{"--server", "127.0.0.1:6443"}, wantErr: "invalid server URL"},
		{name: "bad SAN", args: []string{"--apiserver-san", "a b"}, wantErr: "invalid SAN"},
		{name: "positional argument", args: []string{"extra"}, wantErr: "unknown command"},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "unknown flag"},
		{name: "etcd-member without host", args: []string{"--etcd-member", "cp1"}, wantErr: "want NAME=HOST"},
		{name: "etcd-member with bad name", args: []string{"--etcd-member", "CP_1=192.0.2.1"}, wantErr: "invalid etcd member name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pki")
			_, err := run(t, append([]string{"certs", "--dir", dir}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("failed command created %s", dir)
			}
		})
	}
}

func TestRootCommandHasOnlyCerts(t *testing.T) {
	var names []string
	for _, c := range NewSkiffctlCommand().Commands() {
		names = append(names, c.Name())
	}
	if !slices.Contains(names, "certs") {
		t.Errorf("subcommands %v lack certs", names)
	}
	out, err := run(t, "certs", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--dir", "--kubeconfig-dir", "--server", "--apiserver-san", "--service-cluster-ip", "--node", "--node-ip", "--etcd-member", "--force", "-v, --v"} {
		if !strings.Contains(out, flag) {
			t.Errorf("help lacks %s", flag)
		}
	}
}
