package certs

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"
)

func etcdTestOptions(t *testing.T) Options {
	t.Helper()
	opts := testOptions(t)
	opts.EtcdMembers = map[string][]string{
		"cp1": {"192.0.2.11", "cp1.example.com"},
		"cp2": {"192.0.2.12"},
		"cp3": {"192.0.2.13"},
	}
	return opts
}

// TestGenerateEtcdPKI: with etcd members, Generate writes the etcd CA, a
// serving and a peer certificate per member (each good both to serve and to
// dial, with the member's addresses, and loopback for the serving one) and
// the API server's etcd client certificate, all signed by the etcd CA and
// none by the cluster CA.
func TestGenerateEtcdPKI(t *testing.T) {
	opts := etcdTestOptions(t)
	res := generate(t, opts)
	root := filepath.Dir(opts.Dir)
	want := slices.Clone(allFiles)
	want = append(want, "pki/etcd-ca.crt", "pki/etcd-ca.key", "pki/apiserver-etcd-client.crt", "pki/apiserver-etcd-client.key")
	for _, m := range []string{"cp1", "cp2", "cp3"} {
		want = append(want, "pki/etcd-"+m+"-server.crt", "pki/etcd-"+m+"-server.key", "pki/etcd-"+m+"-peer.crt", "pki/etcd-"+m+"-peer.key")
	}
	slices.Sort(want)
	if got := relWritten(t, root, res); !slices.Equal(got, want) {
		t.Fatalf("written:\n%v\nwant:\n%v", got, want)
	}

	etcdCA, err := LoadEtcdCA(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	clusterCA, err := LoadCA(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if etcdCA.Cert.Subject.CommonName != EtcdCACommonName || etcdCA.Cert.Equal(clusterCA.Cert) {
		t.Fatalf("etcd CA %q is not a CA of its own", etcdCA.Cert.Subject.CommonName)
	}
	verify := func(t *testing.T, cert *x509.Certificate, ca *CA, usage x509.ExtKeyUsage, host string) error {
		t.Helper()
		_, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{usage}, DNSName: host})
		return err
	}
	tests := []struct {
		name, cn string
		serves   []string // hosts it must be valid for
		notFor   []string // hosts it must not be valid for
		client   bool
		server   bool
	}{
		{name: "etcd-cp1-server", cn: "cp1", serves: []string{"192.0.2.11", "cp1.example.com", "127.0.0.1", "localhost", "::1"}, notFor: []string{"192.0.2.12"}, client: true, server: true},
		{name: "etcd-cp1-peer", cn: "cp1", serves: []string{"192.0.2.11", "cp1.example.com"}, notFor: []string{"127.0.0.1"}, client: true, server: true},
		{name: "etcd-cp2-server", cn: "cp2", serves: []string{"192.0.2.12", "127.0.0.1"}, notFor: []string{"192.0.2.11"}, client: true, server: true},
		{name: "etcd-cp3-peer", cn: "cp3", serves: []string{"192.0.2.13"}, client: true, server: true},
		{name: "apiserver-etcd-client", cn: APIServerEtcdClientCommonName, client: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := LoadKeyPair(opts.Dir, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if kp.Cert.Subject.CommonName != tt.cn {
				t.Errorf("CN = %q, want %q", kp.Cert.Subject.CommonName, tt.cn)
			}
			if err := verify(t, kp.Cert, clusterCA, x509.ExtKeyUsageAny, ""); err == nil {
				t.Errorf("verifies against the cluster CA; it must chain to the etcd CA only")
			}
			if got := verify(t, kp.Cert, etcdCA, x509.ExtKeyUsageClientAuth, ""); (got == nil) != tt.client {
				t.Errorf("client auth: %v, want ok=%v", got, tt.client)
			}
			if got := verify(t, kp.Cert, etcdCA, x509.ExtKeyUsageServerAuth, ""); (got == nil) != tt.server {
				t.Errorf("server auth: %v, want ok=%v", got, tt.server)
			}
			for _, h := range tt.serves {
				if err := verify(t, kp.Cert, etcdCA, x509.ExtKeyUsageServerAuth, h); err != nil {
					t.Errorf("not valid for %s: %v", h, err)
				}
			}
			for _, h := range tt.notFor {
				if err := verify(t, kp.Cert, etcdCA, x509.ExtKeyUsageServerAuth, h); err == nil {
					t.Errorf("valid for %s, which is not this member's", h)
				}
			}
		})
	}

	// A second run keeps everything; a member added gets its pair and
	// nothing else changes.
	before := snapshot(t, root)
	generate(t, opts)
	if diff := changed(before, snapshot(t, root)); len(diff) != 0 {
		t.Errorf("second run changed %v", diff)
	}
	opts.EtcdMembers["cp4"] = []string{"192.0.2.14"}
	generate(t, opts)
	wantChanged := []string{"pki/etcd-cp4-peer.crt", "pki/etcd-cp4-peer.key", "pki/etcd-cp4-server.crt", "pki/etcd-cp4-server.key"}
	if diff := changed(before, snapshot(t, root)); !slices.Equal(diff, wantChanged) {
		t.Errorf("adding a member changed %v, want %v", diff, wantChanged)
	}
}

// TestGenerateEtcdRenewsPeerWithoutClientUsage: a member certificate that
// can only serve (as an older or hand-made one might) is issued again,
// since etcd members dial their peers with it.
func TestGenerateEtcdRenewsPeerWithoutClientUsage(t *testing.T) {
	opts := etcdTestOptions(t)
	generate(t, opts)
	ca, err := LoadEtcdCA(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := IssueServingCert(ca, "cp2", nil, []string{"192.0.2.12"})
	if err != nil {
		t.Fatal(err)
	}
	mustWriteKeyPair(t, opts.Dir, "etcd-cp2-peer", kp)
	res := generate(t, opts)
	got := relWritten(t, filepath.Dir(opts.Dir), res)
	if want := []string{"pki/etcd-cp2-peer.crt", "pki/etcd-cp2-peer.key"}; !slices.Equal(got, want) {
		t.Fatalf("written %v, want %v", got, want)
	}
	for _, f := range res.Files {
		if f.Action == Written && !strings.Contains(f.Reason, "does not verify for its use") {
			t.Errorf("%s written for %q", f.Path, f.Reason)
		}
	}
}

// TestGenerateWithoutEtcdMembers: the embedded etcd needs no PKI, so none is
// written.
func TestGenerateWithoutEtcdMembers(t *testing.T) {
	opts := testOptions(t)
	generate(t, opts)
	for _, name := range []string{"etcd-ca.crt", "apiserver-etcd-client.crt"} {
		if _, err := os.Stat(filepath.Join(opts.Dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want it absent", name, err)
		}
	}
}

func TestGenerateInvalidEtcdMembers(t *testing.T) {
	tests := []struct {
		name    string
		members map[string][]string
		want    string
	}{
		{name: "no address", members: map[string][]string{"cp1": nil}, want: "has no address"},
		{name: "bad name", members: map[string][]string{"Etcd_1": {"192.0.2.1"}}, want: "invalid etcd member name"},
		{name: "bad address", members: map[string][]string{"cp1": {"bad host"}}, want: "etcd member \"cp1\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(t)
			opts.EtcdMembers = tt.members
			_, ctx := ktesting.NewTestContext(t)
			_, err := Generate(ctx, opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Generate: %v, want an error containing %q", err, tt.want)
			}
			if _, err := os.Stat(opts.Dir); err == nil {
				t.Errorf("invalid options still created %s", opts.Dir)
			}
		})
	}
}
