package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"skiff.dev/ctl/pkg/cli"
)

// writeTestKubeconfig writes a kubeconfig with two contexts.
func writeTestKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["skiff"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")}
	cfg.Clusters["other"] = &clientcmdapi.Cluster{Server: "https://192.0.2.9:6443"}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "secret-token"}
	cfg.Contexts["skiff-admin"] = &clientcmdapi.Context{Cluster: "skiff", AuthInfo: "admin"}
	cfg.Contexts["other-dev"] = &clientcmdapi.Context{Cluster: "other", AuthInfo: "admin", Namespace: "dev"}
	cfg.CurrentContext = "skiff-admin"
	path := filepath.Join(t.TempDir(), "config")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigCommands(t *testing.T) {
	kc := writeTestKubeconfig(t, "https://127.0.0.1:6443")
	out, err := run(t, "config", "view", "--kubeconfig", kc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"current-context: skiff-admin", "certificate-authority-data: DATA+OMITTED", "token: REDACTED", "server: https://127.0.0.1:6443"} {
		if !strings.Contains(out, want) {
			t.Errorf("config view lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret-token") {
		t.Error("config view shows the token")
	}
	golden(t, "config-view.yaml", []byte(out))
	out, err = run(t, "config", "view", "--kubeconfig", kc, "-o", "json", "--minify")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "config-view-minify.json", []byte(out))
	out, err = run(t, "config", "view", "--kubeconfig", kc, "--minify", "--raw")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "192.0.2.9") || !strings.Contains(out, "secret-token") {
		t.Errorf("config view --minify --raw:\n%s", out)
	}

	out, err = run(t, "config", "get-contexts", "--kubeconfig", kc)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "config-get-contexts.txt", []byte(out))

	out, err = run(t, "config", "use-context", "other-dev", "--kubeconfig", kc)
	if err != nil || out != "Switched to context \"other-dev\".\n" {
		t.Fatalf("use-context: %q, %v", out, err)
	}
	out, err = run(t, "config", "current-context", "--kubeconfig", kc)
	if err != nil || out != "other-dev\n" {
		t.Errorf("current-context after use-context = %q, %v", out, err)
	}
	if _, err := run(t, "config", "use-context", "nope", "--kubeconfig", kc); err == nil || !strings.Contains(err.Error(), "no context named") {
		t.Errorf("use-context of a missing context: %v", err)
	}

	out, err = run(t, "config", "set-context", "--current", "--namespace=web", "--kubeconfig", kc)
	if err != nil || out != "Context \"other-dev\" modified.\n" {
		t.Fatalf("set-context --current: %q, %v", out, err)
	}
	out, err = run(t, "config", "set-context", "new", "--cluster=skiff", "--user=admin", "--kubeconfig", kc)
	if err != nil || out != "Context \"new\" created.\n" {
		t.Fatalf("set-context new: %q, %v", out, err)
	}
	cfg, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Contexts["other-dev"]; c.Namespace != "web" || c.Cluster != "other" {
		t.Errorf("other-dev after set-context = %+v", c)
	}
	if c := cfg.Contexts["new"]; c == nil || c.Cluster != "skiff" || c.AuthInfo != "admin" || c.Namespace != "" {
		t.Errorf("new context = %+v", c)
	}
}

func TestNamespaceResolution(t *testing.T) {
	kc := writeTestKubeconfig(t, "https://127.0.0.1:6443")
	t.Setenv("KUBECONFIG", kc)
	tests := []struct {
		name      string
		flags     cli.ConfigFlags
		want      string
		wantExpl  bool
		wantError bool
	}{
		{name: "default", want: "default"},
		{name: "context namespace", flags: cli.ConfigFlags{Context: "other-dev"}, want: "dev"},
		{name: "-n wins", flags: cli.ConfigFlags{Context: "other-dev", Namespace: "prod"}, want: "prod", wantExpl: true},
		{name: "missing context", flags: cli.ConfigFlags{Context: "nope"}, wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := cli.NewFactory(&tt.flags, nil, nil)
			ns, explicit, err := f.Namespace()
			if (err != nil) != tt.wantError {
				t.Fatalf("err = %v", err)
			}
			if !tt.wantError && (ns != tt.want || explicit != tt.wantExpl) {
				t.Errorf("Namespace = %q, %v; want %q, %v", ns, explicit, tt.want, tt.wantExpl)
			}
		})
	}
	// KUBECONFIG lists several files, merged.
	second := writeTestKubeconfig(t, "https://127.0.0.1:7443")
	t.Setenv("KUBECONFIG", kc+string(os.PathListSeparator)+second)
	out, err := run(t, "config", "get-contexts")
	if err != nil || !strings.Contains(out, "skiff-admin") {
		t.Errorf("get-contexts with two KUBECONFIG files: %q %v", out, err)
	}
}

func TestNoKubeconfig(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	_, err := run(t, "get", "pods")
	if err == nil || !strings.Contains(err.Error(), "no kubeconfig found") {
		t.Errorf("get without a kubeconfig: %v", err)
	}
}

func TestVersionClient(t *testing.T) {
	out, err := run(t, "version", "--client")
	if err != nil || out != "Client Version: "+cli.Version+"\n" {
		t.Errorf("version --client = %q, %v", out, err)
	}
	out, err = run(t, "version", "--client", "-o", "json")
	if err != nil || !strings.Contains(out, `"clientVersion": {`) || !strings.Contains(out, `"gitVersion": "`+cli.Version+`"`) || strings.Contains(out, "serverVersion") {
		t.Errorf("version --client -o json = %q, %v", out, err)
	}
}
