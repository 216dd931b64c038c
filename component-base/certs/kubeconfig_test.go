package certs

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestGenerateKubeconfigs(t *testing.T) {
	opts := testOptions(t)
	opts.Server = "https://192.0.2.1:6443"
	generate(t, opts)
	caPEM, err := os.ReadFile(CertFile(opts.Dir, "ca"))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		file     string
		pair     string
		wantUser string
	}{
		{file: "admin.kubeconfig", pair: "admin", wantUser: "kubernetes-admin"},
		{file: "controller-manager.kubeconfig", pair: "controller-manager", wantUser: "system:kube-controller-manager"},
		{file: "scheduler.kubeconfig", pair: "scheduler", wantUser: "system:kube-scheduler"},
		{file: "proxy.kubeconfig", pair: "proxy", wantUser: "system:kube-proxy"},
		{file: "kubelet-n1.kubeconfig", pair: "kubelet-n1-client", wantUser: "system:node:n1"},
		{file: "kubelet-n2.kubeconfig", pair: "kubelet-n2-client", wantUser: "system:node:n2"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(filepath.Dir(opts.Dir), tt.file)
			cfg, err := clientcmd.LoadFromFile(path)
			if err != nil {
				t.Fatalf("LoadFromFile: %v", err)
			}
			if cfg.CurrentContext != "skiff" {
				t.Errorf("current-context %q, want skiff", cfg.CurrentContext)
			}
			ctx, ok := cfg.Contexts["skiff"]
			if !ok {
				t.Fatalf("no context skiff")
			}
			if ctx.AuthInfo != tt.wantUser || ctx.Cluster != "skiff" {
				t.Errorf("context user=%q cluster=%q, want user=%q cluster=skiff", ctx.AuthInfo, ctx.Cluster, tt.wantUser)
			}
			if len(cfg.AuthInfos) != 1 || cfg.AuthInfos[tt.wantUser] == nil {
				t.Errorf("users %v, want only %q", keys(cfg.AuthInfos), tt.wantUser)
			}

			restCfg, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
			if err != nil {
				t.Fatalf("ClientConfig: %v", err)
			}
			if restCfg.Host != opts.Server {
				t.Errorf("server %q, want %q", restCfg.Host, opts.Server)
			}
			if !bytes.Equal(restCfg.CAData, caPEM) {
				t.Errorf("certificate-authority-data is not ca.crt")
			}
			certPEM, err := os.ReadFile(CertFile(opts.Dir, tt.pair))
			if err != nil {
				t.Fatal(err)
			}
			keyPEM, err := os.ReadFile(KeyFile(opts.Dir, tt.pair))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(restCfg.CertData, certPEM) || !bytes.Equal(restCfg.KeyData, keyPEM) {
				t.Errorf("client-certificate-data / client-key-data are not %s.crt / %s.key", tt.pair, tt.pair)
			}
			if restCfg.CertFile != "" || restCfg.KeyFile != "" || restCfg.CAFile != "" {
				t.Errorf("kubeconfig refers to files, want everything embedded")
			}

			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", info.Mode().Perm())
			}
		})
	}
}

// TestKubeconfigsAuthenticate serves HTTPS with the generated API server
// certificate, requiring client certificates from the generated CA, and
// connects with each kubeconfig through client-go's transport.
func TestKubeconfigsAuthenticate(t *testing.T) {
	opts := testOptions(t)
	generate(t, opts)
	ca, err := LoadCA(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := tls.LoadX509KeyPair(CertFile(opts.Dir, "apiserver"), KeyFile(opts.Dir, "apiserver"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer := r.TLS.PeerCertificates[0]
		_ = json.NewEncoder(w).Encode(identity{User: peer.Subject.CommonName, Groups: peer.Subject.Organization})
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{serving},
		ClientCAs:    ca.Pool(),
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		file string
		host string
		want identity
	}{
		{file: "admin.kubeconfig", host: "127.0.0.1", want: identity{User: "kubernetes-admin", Groups: []string{"system:masters"}}},
		{file: "scheduler.kubeconfig", host: "localhost", want: identity{User: "system:kube-scheduler"}},
		{file: "controller-manager.kubeconfig", host: "127.0.0.1", want: identity{User: "system:kube-controller-manager"}},
		{file: "proxy.kubeconfig", host: "127.0.0.1", want: identity{User: "system:kube-proxy"}},
		{file: "kubelet-n1.kubeconfig", host: "localhost", want: identity{User: "system:node:n1", Groups: []string{"system:nodes"}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(filepath.Dir(opts.Dir), tt.file))
			if err != nil {
				t.Fatal(err)
			}
			// Reach the test server by a name the certificate must cover.
			cfg.Host = "https://" + tt.host + ":" + u.Port()
			rt, err := rest.TransportFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: rt}).Get(cfg.Host + "/whoami")
			if err != nil {
				t.Fatalf("request: %v", err)
			}
			defer func() { _ = resp.Body.Close() }()
			var got identity
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if got.User != tt.want.User || !slices.Equal(got.Groups, tt.want.Groups) {
				t.Errorf("server saw %+v, want %+v", got, tt.want)
			}
		})
	}

	t.Run("foreign client is rejected", func(t *testing.T) {
		other, err := NewCA("other")
		if err != nil {
			t.Fatal(err)
		}
		kp, err := IssueClientCert(other, "mallory", []string{"system:masters"})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := Kubeconfig(srv.URL, ca, "mallory", kp)
		if err != nil {
			t.Fatal(err)
		}
		restCfg, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		rt, err := rest.TransportFor(restCfg)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := (&http.Client{Transport: rt}).Get(srv.URL); err == nil {
			_ = resp.Body.Close()
			t.Errorf("request with a certificate from another CA succeeded")
		}
	})
}

func TestWriteKubeconfigExtraIdentity(t *testing.T) {
	opts := testOptions(t)
	generate(t, opts)
	ca, err := LoadCA(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := IssueClientCert(ca, "alice", []string{"dev"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sub", "alice.kubeconfig")
	if err := WriteKubeconfig(path, "https://127.0.0.1:6443", ca, "alice", kp); err != nil {
		t.Fatalf("WriteKubeconfig: %v", err)
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := parseCertPEM(restCfg.CertData)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "alice" {
		t.Errorf("CN %q, want alice", cert.Subject.CommonName)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("extra identity does not verify: %v", err)
	}
}

type identity struct {
	User   string   `json:"user"`
	Groups []string `json:"groups"`
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
