package certs

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
)

// testOptions returns options that write into a fresh temporary directory:
// the PKI in <tmp>/pki and the kubeconfigs in <tmp>.
func testOptions(t *testing.T) Options {
	t.Helper()
	return Options{
		Dir:   filepath.Join(t.TempDir(), "pki"),
		Nodes: []string{"n1", "n2"},
		NodeIPs: map[string][]string{
			"n2": {"192.0.2.10", "fd00::10"},
		},
	}
}

func generate(t *testing.T, opts Options) *Result {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	res, err := Generate(ctx, opts)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return res
}

// fileState is what a test remembers of a file to tell whether it changed.
type fileState struct {
	data    []byte
	modTime time.Time
}

// snapshot records every regular file under root, keyed by path relative to
// root.
func snapshot(t *testing.T, root string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out[rel] = fileState{data: data, modTime: info.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// changed returns the sorted relative paths whose content or mtime differs
// between two snapshots, including files that appeared or vanished.
func changed(before, after map[string]fileState) []string {
	var out []string
	for path, a := range after {
		b, ok := before[path]
		if !ok || !bytes.Equal(a.data, b.data) || !a.modTime.Equal(b.modTime) {
			out = append(out, path)
		}
	}
	for path := range before {
		if _, ok := after[path]; !ok {
			out = append(out, path)
		}
	}
	slices.Sort(out)
	return out
}

// relWritten returns the written paths of res relative to root, sorted.
func relWritten(t *testing.T, root string, res *Result) []string {
	t.Helper()
	var out []string
	for _, p := range res.Written() {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rel)
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

var allFiles = sorted(
	"pki/ca.crt", "pki/ca.key", "pki/sa.key", "pki/sa.pub",
	"pki/apiserver.crt", "pki/apiserver.key",
	"pki/apiserver-kubelet-client.crt", "pki/apiserver-kubelet-client.key",
	"pki/admin.crt", "pki/admin.key",
	"pki/controller-manager.crt", "pki/controller-manager.key",
	"pki/scheduler.crt", "pki/scheduler.key",
	"pki/proxy.crt", "pki/proxy.key",
	"pki/dns.crt", "pki/dns.key",
	"pki/front-proxy-ca.crt", "pki/front-proxy-ca.key", "pki/front-proxy-client.crt", "pki/front-proxy-client.key",
	"pki/kubelet-n1-client.crt", "pki/kubelet-n1-client.key", "pki/kubelet-n1.crt", "pki/kubelet-n1.key",
	"pki/kubelet-n2-client.crt", "pki/kubelet-n2-client.key", "pki/kubelet-n2.crt", "pki/kubelet-n2.key",
	"admin.kubeconfig", "controller-manager.kubeconfig", "scheduler.kubeconfig", "proxy.kubeconfig", "dns.kubeconfig",
	"kubelet-n1.kubeconfig", "kubelet-n2.kubeconfig",
)

func TestGenerateWritesEverything(t *testing.T) {
	opts := testOptions(t)
	root := filepath.Dir(opts.Dir)
	res := generate(t, opts)

	if got := relWritten(t, root, res); !slices.Equal(got, allFiles) {
		t.Errorf("written:\n%v\nwant:\n%v", got, allFiles)
	}
	if len(res.Kept()) != 0 {
		t.Errorf("kept %v on the first run", res.Kept())
	}
	var onDisk []string
	for path := range snapshot(t, root) {
		onDisk = append(onDisk, path)
	}
	slices.Sort(onDisk)
	if !slices.Equal(onDisk, allFiles) {
		t.Errorf("files on disk:\n%v\nwant:\n%v", onDisk, allFiles)
	}
	for _, path := range allFiles {
		info, err := os.Stat(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		want := fs.FileMode(0o600)
		if strings.HasSuffix(path, ".crt") || strings.HasSuffix(path, ".pub") {
			want = 0o644
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
}

func TestGenerateCertificates(t *testing.T) {
	opts := testOptions(t)
	generate(t, opts)
	ca, err := LoadCA(opts.Dir)
	if err != nil {
		t.Fatalf("LoadCA: %v", err)
	}
	if got := ca.Cert.NotAfter.Sub(ca.Cert.NotBefore); got < CAValidity {
		t.Errorf("CA validity %v, want at least %v", got, CAValidity)
	}

	client, serving := x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth
	tests := []struct {
		name     string
		wantCN   string
		wantOrgs []string
		usage    x509.ExtKeyUsage
	}{
		{name: "apiserver", wantCN: "kube-apiserver", usage: serving},
		{name: "apiserver-kubelet-client", wantCN: "kube-apiserver-kubelet-client", wantOrgs: []string{"system:masters"}, usage: client},
		{name: "admin", wantCN: "kubernetes-admin", wantOrgs: []string{"system:masters"}, usage: client},
		{name: "controller-manager", wantCN: "system:kube-controller-manager", usage: client},
		{name: "scheduler", wantCN: "system:kube-scheduler", usage: client},
		{name: "proxy", wantCN: "system:kube-proxy", usage: client},
		{name: "dns", wantCN: "system:skiff-dns", usage: client},
		{name: "kubelet-n1-client", wantCN: "system:node:n1", wantOrgs: []string{"system:nodes"}, usage: client},
		{name: "kubelet-n2-client", wantCN: "system:node:n2", wantOrgs: []string{"system:nodes"}, usage: client},
		{name: "kubelet-n1", wantCN: "system:node:n1", wantOrgs: []string{"system:nodes"}, usage: serving},
		{name: "kubelet-n2", wantCN: "system:node:n2", wantOrgs: []string{"system:nodes"}, usage: serving},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := LoadKeyPair(opts.Dir, tt.name)
			if err != nil {
				t.Fatalf("LoadKeyPair: %v", err)
			}
			c := kp.Cert
			if _, err := c.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{tt.usage}}); err != nil {
				t.Errorf("does not verify against the CA: %v", err)
			}
			if !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{tt.usage}) {
				t.Errorf("ExtKeyUsage %v, want [%v]", c.ExtKeyUsage, tt.usage)
			}
			if c.KeyUsage&x509.KeyUsageCertSign != 0 || c.IsCA {
				t.Errorf("leaf can sign certificates")
			}
			if c.Subject.CommonName != tt.wantCN || !slices.Equal(c.Subject.Organization, tt.wantOrgs) {
				t.Errorf("subject CN=%q O=%v, want CN=%q O=%v", c.Subject.CommonName, c.Subject.Organization, tt.wantCN, tt.wantOrgs)
			}
			if got := c.NotAfter.Sub(time.Now()); got < LeafValidity-time.Hour || got > LeafValidity {
				t.Errorf("expires in %v, want about %v", got, LeafValidity)
			}
		})
	}
}

func TestGenerateAPIServerSANs(t *testing.T) {
	opts := testOptions(t)
	opts.Server = "https://api.skiff.test:6443"
	opts.APIServerSANs = []string{"extra.example.com", "203.0.113.7"}
	opts.ServiceClusterIP = "10.96.0.1"
	generate(t, opts)
	kp, err := LoadKeyPair(opts.Dir, "apiserver")
	if err != nil {
		t.Fatal(err)
	}
	ca, err := LoadCA(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}

	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"127.0.0.1", "::1", "localhost", "10.96.0.1",
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
		strings.ToLower(hostname), "api.skiff.test", "extra.example.com", "203.0.113.7",
	}
	ips, err := interfaceIPs()
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range ips {
		want = append(want, ip.String())
	}
	for _, host := range want {
		t.Run(host, func(t *testing.T) {
			if _, err := kp.Cert.Verify(x509.VerifyOptions{
				Roots: ca.Pool(), DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			}); err != nil {
				t.Errorf("API server certificate does not serve %s: %v", host, err)
			}
		})
	}
	if missing := missingSANs(kp.Cert, want); len(missing) > 0 {
		t.Errorf("missing SANs %v", missing)
	}
	for _, ip := range kp.Cert.IPAddresses {
		if ip.IsLinkLocalUnicast() {
			t.Errorf("link-local SAN %v", ip)
		}
	}

	sans, err := APIServerSANs(opts)
	if err != nil {
		t.Fatalf("APIServerSANs: %v", err)
	}
	if missing := missingSANs(kp.Cert, sans); len(missing) > 0 {
		t.Errorf("APIServerSANs lists %v, not in the certificate", missing)
	}
}

func TestGenerateKubeletSANs(t *testing.T) {
	opts := testOptions(t)
	generate(t, opts)
	tests := []struct {
		node    string
		wantDNS []string
		wantIPs []string
	}{
		{node: "n1", wantDNS: []string{"n1", "localhost"}, wantIPs: []string{"127.0.0.1"}},
		{node: "n2", wantDNS: []string{"n2", "localhost"}, wantIPs: []string{"127.0.0.1", "192.0.2.10", "fd00::10"}},
	}
	for _, tt := range tests {
		t.Run(tt.node, func(t *testing.T) {
			kp, err := LoadKeyPair(opts.Dir, "kubelet-"+tt.node)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(kp.Cert.DNSNames, tt.wantDNS) {
				t.Errorf("DNS SANs %v, want %v", kp.Cert.DNSNames, tt.wantDNS)
			}
			var ips []string
			for _, ip := range kp.Cert.IPAddresses {
				ips = append(ips, ip.String())
			}
			if !slices.Equal(ips, tt.wantIPs) {
				t.Errorf("IP SANs %v, want %v", ips, tt.wantIPs)
			}
		})
	}
}

func TestGenerateLocalNodeGetsMachineIPs(t *testing.T) {
	h, err := discoverHost()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Dir: filepath.Join(t.TempDir(), "pki")}
	if errs := validationErrs(h.name); errs != "" {
		t.Skipf("hostname %q is not a node name: %s", h.name, errs)
	}
	generate(t, opts)
	kp, err := LoadKeyPair(opts.Dir, "kubelet-"+h.name)
	if err != nil {
		t.Fatalf("default node should be the hostname: %v", err)
	}
	want := []string{h.name, "localhost", "127.0.0.1"}
	for _, ip := range h.ips {
		want = append(want, ip.String())
	}
	if missing := missingSANs(kp.Cert, want); len(missing) > 0 {
		t.Errorf("kubelet serving certificate of the local node lacks %v", missing)
	}
}

func validationErrs(name string) string {
	opts := Options{}
	if err := opts.complete(host{name: name}); err != nil {
		return err.Error()
	}
	return ""
}

func TestGenerateServiceAccountKey(t *testing.T) {
	opts := testOptions(t)
	generate(t, opts)
	keyPEM, err := os.ReadFile(filepath.Join(opts.Dir, "sa.key"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil || block.Type != "RSA PRIVATE KEY" {
		t.Fatalf("sa.key is not an RSA PRIVATE KEY PEM block")
	}
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if key.N.BitLen() != 2048 {
		t.Errorf("sa.key has %d bits, want 2048", key.N.BitLen())
	}
	pubPEM, err := os.ReadFile(filepath.Join(opts.Dir, "sa.pub"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ = pem.Decode(pubPEM)
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("sa.pub is not a PUBLIC KEY PEM block")
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !key.PublicKey.Equal(pub.(*rsa.PublicKey)) {
		t.Errorf("sa.pub does not match sa.key")
	}
}

func TestGenerateIsIdempotent(t *testing.T) {
	opts := testOptions(t)
	root := filepath.Dir(opts.Dir)
	generate(t, opts)
	before := snapshot(t, root)

	res := generate(t, opts)
	if w := res.Written(); len(w) != 0 {
		t.Errorf("second run wrote %v", w)
	}
	if len(res.Kept()) != len(allFiles) {
		t.Errorf("second run kept %d files, want %d", len(res.Kept()), len(allFiles))
	}
	if c := changed(before, snapshot(t, root)); len(c) != 0 {
		t.Errorf("second run changed %v", c)
	}
}

func TestGenerateRerunWithChangedOptions(t *testing.T) {
	kubeconfigs := []string{"admin.kubeconfig", "controller-manager.kubeconfig", "scheduler.kubeconfig", "proxy.kubeconfig", "dns.kubeconfig", "kubelet-n1.kubeconfig", "kubelet-n2.kubeconfig"}
	tests := []struct {
		name   string
		change func(*Options)
		want   []string
	}{
		{
			name:   "new API server SAN",
			change: func(o *Options) { o.APIServerSANs = append(o.APIServerSANs, "new.example.com") },
			want:   []string{"pki/apiserver.crt", "pki/apiserver.key"},
		},
		{
			name:   "SAN already covered",
			change: func(o *Options) { o.APIServerSANs = []string{"kubernetes.default", "127.0.0.1"} },
		},
		{
			name:   "new node IP",
			change: func(o *Options) { o.NodeIPs = map[string][]string{"n1": {"198.51.100.1"}, "n2": {"192.0.2.10"}} },
			want:   []string{"pki/kubelet-n1.crt", "pki/kubelet-n1.key"},
		},
		{
			name:   "new node",
			change: func(o *Options) { o.Nodes = append(o.Nodes, "n3") },
			want:   []string{"pki/kubelet-n3-client.crt", "pki/kubelet-n3-client.key", "pki/kubelet-n3.crt", "pki/kubelet-n3.key", "kubelet-n3.kubeconfig"},
		},
		{
			name:   "new server",
			change: func(o *Options) { o.Server = "https://192.0.2.99:6443" },
			want:   append([]string{"pki/apiserver.crt", "pki/apiserver.key"}, kubeconfigs...),
		},
		{
			name:   "new server on a host already covered",
			change: func(o *Options) { o.Server = "https://localhost:6443" },
			want:   kubeconfigs,
		},
		{
			name:   "force",
			change: func(o *Options) { o.Force = true },
			want:   allFiles,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(t)
			root := filepath.Dir(opts.Dir)
			generate(t, opts)
			before := snapshot(t, root)

			tt.change(&opts)
			res := generate(t, opts)
			want := sorted(tt.want...)
			if got := relWritten(t, root, res); !slices.Equal(got, want) {
				t.Errorf("written %v, want %v", got, want)
			}
			if got := changed(before, snapshot(t, root)); !slices.Equal(got, want) {
				t.Errorf("changed on disk %v, want %v", got, want)
			}
			// Every certificate still verifies against the CA now on disk.
			assertChainsToCA(t, opts.Dir)
		})
	}
}

func TestGenerateRepairs(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   []string
	}{
		{
			name:   "missing certificate",
			damage: func(t *testing.T, dir string) { mustRemove(t, filepath.Join(dir, "scheduler.crt")) },
			want:   []string{"pki/scheduler.crt", "pki/scheduler.key", "scheduler.kubeconfig"},
		},
		{
			name:   "missing key",
			damage: func(t *testing.T, dir string) { mustRemove(t, filepath.Join(dir, "kubelet-n1.key")) },
			want:   []string{"pki/kubelet-n1.crt", "pki/kubelet-n1.key"},
		},
		{
			name:   "missing kubeconfig",
			damage: func(t *testing.T, dir string) { mustRemove(t, filepath.Join(dir, "..", "proxy.kubeconfig")) },
			want:   []string{"proxy.kubeconfig"},
		},
		{
			name: "edited kubeconfig",
			damage: func(t *testing.T, dir string) {
				mustWriteFile(t, filepath.Join(dir, "..", "admin.kubeconfig"), []byte("apiVersion: v1\nkind: Config\n"))
			},
			want: []string{"admin.kubeconfig"},
		},
		{
			name:   "missing sa.pub",
			damage: func(t *testing.T, dir string) { mustRemove(t, filepath.Join(dir, "sa.pub")) },
			want:   []string{"pki/sa.pub"},
		},
		{
			name: "sa.pub of another key",
			damage: func(t *testing.T, dir string) {
				other, err := newSAKeyPair()
				if err != nil {
					t.Fatal(err)
				}
				pub, err := other.publicPEM()
				if err != nil {
					t.Fatal(err)
				}
				mustWriteFile(t, filepath.Join(dir, "sa.pub"), pub)
			},
			want: []string{"pki/sa.pub"},
		},
		{
			name:   "missing sa.key",
			damage: func(t *testing.T, dir string) { mustRemove(t, filepath.Join(dir, "sa.key")) },
			want:   []string{"pki/sa.key", "pki/sa.pub"},
		},
		{
			name: "expired certificate",
			damage: func(t *testing.T, dir string) {
				replaceClientCert(t, dir, "proxy", "system:kube-proxy", nil, WithNotBefore(time.Now().Add(-48*time.Hour)), WithValidity(time.Hour))
			},
			want: []string{"pki/proxy.crt", "pki/proxy.key", "proxy.kubeconfig"},
		},
		{
			name: "certificate about to expire",
			damage: func(t *testing.T, dir string) {
				replaceClientCert(t, dir, "proxy", "system:kube-proxy", nil, WithValidity(24*time.Hour))
			},
			want: []string{"pki/proxy.crt", "pki/proxy.key", "proxy.kubeconfig"},
		},
		{
			name: "wrong subject",
			damage: func(t *testing.T, dir string) {
				replaceClientCert(t, dir, "admin", "kubernetes-admin", nil)
			},
			want: []string{"pki/admin.crt", "pki/admin.key", "admin.kubeconfig"},
		},
		{
			name: "client certificate where a serving one belongs",
			damage: func(t *testing.T, dir string) {
				replaceClientCert(t, dir, "kubelet-n1", "system:node:n1", []string{"system:nodes"})
			},
			want: []string{"pki/kubelet-n1.crt", "pki/kubelet-n1.key"},
		},
		{
			name: "signed by another CA",
			damage: func(t *testing.T, dir string) {
				other, err := NewCA("other")
				if err != nil {
					t.Fatal(err)
				}
				kp, err := IssueClientCert(other, "system:kube-scheduler", nil)
				if err != nil {
					t.Fatal(err)
				}
				mustWriteKeyPair(t, dir, "scheduler", kp)
			},
			want: []string{"pki/scheduler.crt", "pki/scheduler.key", "scheduler.kubeconfig"},
		},
		{
			name: "corrupt certificate",
			damage: func(t *testing.T, dir string) {
				mustWriteFile(t, filepath.Join(dir, "apiserver.crt"), []byte("garbage"))
			},
			want: []string{"pki/apiserver.crt", "pki/apiserver.key"},
		},
		{
			name: "loose key mode is tightened without rewriting",
			damage: func(t *testing.T, dir string) {
				if err := os.Chmod(filepath.Join(dir, "admin.key"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(t)
			root := filepath.Dir(opts.Dir)
			generate(t, opts)
			caBefore := snapshot(t, root)["pki/ca.crt"]
			tt.damage(t, opts.Dir)
			before := snapshot(t, root)

			res := generate(t, opts)
			want := sorted(tt.want...)
			if got := relWritten(t, root, res); !slices.Equal(got, want) {
				t.Errorf("written %v, want %v", got, want)
			}
			after := snapshot(t, root)
			if got := changed(before, after); !slices.Equal(got, want) {
				t.Errorf("changed on disk %v, want %v", got, want)
			}
			if !bytes.Equal(after["pki/ca.crt"].data, caBefore.data) {
				t.Errorf("CA was replaced")
			}
			info, err := os.Stat(filepath.Join(opts.Dir, "admin.key"))
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != 0o600 {
				t.Errorf("admin.key mode %v, want 0600", info.Mode().Perm())
			}
			assertChainsToCA(t, opts.Dir)
		})
	}
}

func TestGenerateForceRotates(t *testing.T) {
	opts := testOptions(t)
	root := filepath.Dir(opts.Dir)
	generate(t, opts)
	before := snapshot(t, root)
	oldCA, err := LoadCA(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}

	opts.Force = true
	generate(t, opts)
	after := snapshot(t, root)
	for _, path := range allFiles {
		if bytes.Equal(before[path].data, after[path].data) {
			t.Errorf("%s unchanged after --force", path)
		}
	}
	newCA, err := LoadCA(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if newCA.Cert.Equal(oldCA.Cert) || publicKeysEqual(oldCA.Cert, newCA.Key) {
		t.Errorf("CA not rotated")
	}
	assertChainsToCA(t, opts.Dir)

	// The following run without force keeps the rotated PKI.
	opts.Force = false
	if w := generate(t, opts).Written(); len(w) != 0 {
		t.Errorf("run after --force wrote %v", w)
	}
}

func TestGenerateCAErrors(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
	}{
		{name: "key without certificate", damage: func(t *testing.T, dir string) { mustRemove(t, filepath.Join(dir, "ca.crt")) }},
		{name: "certificate without key", damage: func(t *testing.T, dir string) { mustRemove(t, filepath.Join(dir, "ca.key")) }},
		{
			name: "expired CA",
			damage: func(t *testing.T, dir string) {
				ca, err := NewCA("old", WithNotBefore(time.Now().Add(-48*time.Hour)), WithValidity(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				if err := WriteCA(dir, ca); err != nil {
					t.Fatal(err)
				}
			},
		},
		{name: "corrupt CA", damage: func(t *testing.T, dir string) { mustWriteFile(t, filepath.Join(dir, "ca.crt"), []byte("x")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(t)
			root := filepath.Dir(opts.Dir)
			generate(t, opts)
			tt.damage(t, opts.Dir)
			before := snapshot(t, root)

			_, ctx := ktesting.NewTestContext(t)
			if _, err := Generate(ctx, opts); err == nil || !strings.Contains(err.Error(), "--force") {
				t.Errorf("Generate: %v, want an error that suggests --force", err)
			}
			if c := changed(before, snapshot(t, root)); len(c) != 0 {
				t.Errorf("failed run changed %v", c)
			}

			opts.Force = true
			generate(t, opts)
			assertChainsToCA(t, opts.Dir)
		})
	}
}

func TestGenerateInvalidOptions(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Options)
	}{
		{name: "no dir", change: func(o *Options) { o.Dir = "" }},
		{name: "http server", change: func(o *Options) { o.Server = "http://127.0.0.1:6443" }},
		{name: "server without host", change: func(o *Options) { o.Server = "https://:6443" }},
		{name: "bad service IP", change: func(o *Options) { o.ServiceClusterIP = "10.96.0" }},
		{name: "bad node name", change: func(o *Options) { o.Nodes = []string{"Node_1"} }},
		{name: "node name with slash", change: func(o *Options) { o.Nodes = []string{"../x"} }},
		{name: "IP for unknown node", change: func(o *Options) { o.NodeIPs = map[string][]string{"n9": {"192.0.2.1"}} }},
		{name: "bad node IP", change: func(o *Options) { o.NodeIPs = map[string][]string{"n1": {"192.0.2"}} }},
		{name: "bad SAN", change: func(o *Options) { o.APIServerSANs = []string{"bad name"} }},
		{name: "colliding file names", change: func(o *Options) { o.Nodes = []string{"a", "a-client"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(t)
			tt.change(&opts)
			_, ctx := ktesting.NewTestContext(t)
			if _, err := Generate(ctx, opts); err == nil {
				t.Fatalf("Generate: want error")
			}
			if opts.Dir != "" {
				if _, err := os.Stat(opts.Dir); err == nil {
					t.Errorf("invalid options still created %s", opts.Dir)
				}
			}
		})
	}
}

// replaceClientCert overwrites the pair name in dir with a client certificate
// from the CA in dir.
func replaceClientCert(t *testing.T, dir, name, cn string, orgs []string, opts ...IssueOption) {
	t.Helper()
	ca, err := LoadCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := IssueClientCert(ca, cn, orgs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	mustWriteKeyPair(t, dir, name, kp)
}

// assertChainsToCA checks that every certificate in dir verifies against the
// CA in dir and matches its key.
func assertChainsToCA(t *testing.T, dir string) {
	t.Helper()
	ca, err := LoadCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	matches, err := filepath.Glob(filepath.Join(dir, "*.crt"))
	if err != nil {
		t.Fatal(err)
	}
	// The front-proxy client certificate chains to its own CA, never to
	// the cluster CA (it must not authenticate as a user).
	frontProxyCA, err := LoadFrontProxyCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range matches {
		name := strings.TrimSuffix(filepath.Base(path), ".crt")
		kp, err := LoadKeyPair(dir, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		roots, other := ca, frontProxyCA
		switch name {
		case frontProxyCAName:
			continue
		case "front-proxy-client":
			roots, other = frontProxyCA, ca
		}
		if _, err := kp.Cert.Verify(x509.VerifyOptions{Roots: roots.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			t.Errorf("%s does not verify against its CA: %v", name, err)
		}
		if _, err := kp.Cert.Verify(x509.VerifyOptions{Roots: other.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err == nil && name != caName {
			t.Errorf("%s verifies against the other CA too", name)
		}
	}
}

func mustRemove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}
