package app

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"skiff.dev/component-base/certs"
)

// etcdBinary is Debian's etcd-server, the etcd docs/operations.md deploys.
const etcdBinary = "/usr/bin/etcd"

// testEtcd is a real etcd member on loopback with client and peer TLS from
// the PKI that skiffctl certs --etcd-member writes.
type testEtcd struct {
	name, dataDir, clientURL, peerURL string
	pki                               string
	cmd                               *exec.Cmd
}

func loopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startTestEtcd starts etcd as the unit in deploy/systemd/etcd.service
// does (TLS on both ports, client certificates required) on dataDir, a new
// member unless dataDir holds a restored one.
func startTestEtcd(t *testing.T, pki, name, dataDir string) *testEtcd {
	t.Helper()
	e := &testEtcd{
		name: name, dataDir: dataDir, pki: pki,
		clientURL: fmt.Sprintf("https://127.0.0.1:%d", loopbackPort(t)),
		peerURL:   fmt.Sprintf("https://127.0.0.1:%d", loopbackPort(t)),
	}
	return e.start(t, e.peerURL)
}

func (e *testEtcd) start(t *testing.T, peerURL string) *testEtcd {
	t.Helper()
	e.peerURL = peerURL
	e.cmd = exec.Command(etcdBinary,
		"--name", e.name, "--data-dir", e.dataDir,
		"--listen-client-urls", e.clientURL, "--advertise-client-urls", e.clientURL,
		"--listen-peer-urls", e.peerURL, "--initial-advertise-peer-urls", e.peerURL,
		"--initial-cluster", e.name+"="+e.peerURL, "--initial-cluster-token", "skiff-test",
		"--cert-file", certs.CertFile(e.pki, "etcd-"+e.name+"-server"), "--key-file", certs.KeyFile(e.pki, "etcd-"+e.name+"-server"),
		"--client-cert-auth", "--trusted-ca-file", certs.CertFile(e.pki, "etcd-ca"),
		"--peer-cert-file", certs.CertFile(e.pki, "etcd-"+e.name+"-peer"), "--peer-key-file", certs.KeyFile(e.pki, "etcd-"+e.name+"-peer"),
		"--peer-client-cert-auth", "--peer-trusted-ca-file", certs.CertFile(e.pki, "etcd-ca"),
		"--logger", "zap", "--log-level", "warn",
	)
	log, err := os.OpenFile(e.dataDir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	e.cmd.Stdout, e.cmd.Stderr = log, log
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.stop)
	return e
}

func (e *testEtcd) stop() {
	if e.cmd != nil && e.cmd.Process != nil {
		_ = e.cmd.Process.Signal(syscall.SIGKILL)
		_ = e.cmd.Wait()
		e.cmd = nil
	}
}

// client returns a client with the API server's etcd certificate, once the
// member answers, within a deadline.
func (e *testEtcd) client(t *testing.T) *clientv3.Client {
	t.Helper()
	o := &EtcdClientOptions{
		Endpoint: e.clientURL, DialTimeout: 2 * time.Second,
		CACert: certs.CertFile(e.pki, "etcd-ca"),
		Cert:   certs.CertFile(e.pki, "apiserver-etcd-client"), Key: certs.KeyFile(e.pki, "apiserver-etcd-client"),
	}
	cfg, err := o.clientConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = zap.NewNop()
	c, err := clientv3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := c.Get(ctx, "health")
		cancel()
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(e.dataDir + ".log")
			t.Fatalf("etcd at %s did not answer within 30s: %v\n%s", e.clientURL, err, log)
		}
		if e.cmd.ProcessState != nil {
			t.Fatalf("etcd exited")
		}
	}
}

func (e *testEtcd) flags() []string {
	return []string{
		"--endpoint", e.clientURL,
		"--cacert", certs.CertFile(e.pki, "etcd-ca"),
		"--cert", certs.CertFile(e.pki, "apiserver-etcd-client"), "--key", certs.KeyFile(e.pki, "apiserver-etcd-client"),
	}
}

// TestEtcdSnapshotSaveRestore: keys written to a TLS etcd (certificates
// from skiffctl certs --etcd-member) are saved with skiffctl etcd snapshot
// save, restored into a new data directory with skiffctl etcd snapshot
// restore, and are all there when etcd runs on that directory, at a
// revision raised by --bump-revision, with a membership of the restored
// member alone.
func TestEtcdSnapshotSaveRestore(t *testing.T) {
	if _, err := os.Stat(etcdBinary); err != nil {
		t.Fatalf("etcd is required at %s (Debian package etcd-server): %v", etcdBinary, err)
	}
	root := t.TempDir()
	pki := filepath.Join(root, "pki")
	if _, err := run(t, "certs", "--dir", pki, "--node", "n1", "--etcd-member", "cp1=127.0.0.1"); err != nil {
		t.Fatalf("skiffctl certs: %v", err)
	}
	src := startTestEtcd(t, pki, "cp1", filepath.Join(root, "src"))
	c := src.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := map[string]string{}
	for i := range 200 {
		k, v := fmt.Sprintf("/registry/configmaps/default/cm-%03d", i), strings.Repeat(fmt.Sprint(i), 100)
		if _, err := c.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	if _, err := c.Delete(ctx, "/registry/configmaps/default/cm-000"); err != nil {
		t.Fatal(err)
	}
	delete(want, "/registry/configmaps/default/cm-000")
	last, err := c.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}

	file := filepath.Join(root, "backup", "etcd.db")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, append([]string{"etcd", "snapshot", "save", file}, src.flags()...)...)
	if err != nil {
		t.Fatalf("skiffctl etcd snapshot save: %v", err)
	}
	if !strings.Contains(out, "Snapshot saved at "+file) || !strings.Contains(out, fmt.Sprintf("revision %d", last.Header.Revision)) {
		t.Errorf("save printed %q, want the file and revision %d", out, last.Header.Revision)
	}
	out, err = run(t, "etcd", "snapshot", "status", file)
	if err != nil || !strings.Contains(out, fmt.Sprint(last.Header.Revision)) {
		t.Errorf("snapshot status: %q, %v", out, err)
	}
	src.stop()

	// The restored member runs with the same name on a new peer URL; its
	// membership is the one restore wrote, not the source's.
	dataDir := filepath.Join(root, "restored")
	peerURL := fmt.Sprintf("https://127.0.0.1:%d", loopbackPort(t))
	const bump = 1000
	out, err = run(t, "etcd", "snapshot", "restore", file, "--data-dir", dataDir,
		"--name", "cp1", "--initial-advertise-peer-urls", peerURL, "--initial-cluster", "cp1="+peerURL,
		"--initial-cluster-token", "skiff-test-restored", "--bump-revision", fmt.Sprint(bump), "--mark-compacted")
	if err != nil {
		t.Fatalf("skiffctl etcd snapshot restore: %v", err)
	}
	if !strings.Contains(out, "Restored "+file+" into "+dataDir) {
		t.Errorf("restore printed %q", out)
	}
	restored := &testEtcd{name: "cp1", dataDir: dataDir, pki: pki, clientURL: fmt.Sprintf("https://127.0.0.1:%d", loopbackPort(t))}
	restored.start(t, peerURL)
	rc := restored.client(t)
	got, err := rc.Get(ctx, "/registry/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != len(want) {
		t.Errorf("restored %d keys, want %d", len(got.Kvs), len(want))
	}
	for _, kv := range got.Kvs {
		if want[string(kv.Key)] != string(kv.Value) {
			t.Errorf("restored %s = %.20q..., want %.20q...", kv.Key, kv.Value, want[string(kv.Key)])
		}
	}
	if got.Header.Revision < last.Header.Revision+bump {
		t.Errorf("restored revision %d, want at least %d + %d", got.Header.Revision, last.Header.Revision, bump)
	}
	members, err := rc.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(members.Members) != 1 || members.Members[0].Name != "cp1" || len(members.Members[0].PeerURLs) != 1 || members.Members[0].PeerURLs[0] != peerURL {
		t.Errorf("restored membership %v, want cp1 at %s alone", members.Members, peerURL)
	}
	// A watch from before the restore is told to list again.
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	wr := <-rc.Watch(wctx, "/registry/", clientv3.WithPrefix(), clientv3.WithRev(last.Header.Revision))
	if wr.CompactRevision == 0 {
		t.Errorf("a watch from revision %d after the restore: %+v, want it compacted", last.Header.Revision, wr)
	}

	// Restoring over a directory in use is refused.
	_, err = run(t, "etcd", "snapshot", "restore", file, "--data-dir", dataDir, "--name", "cp1", "--initial-advertise-peer-urls", peerURL)
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("restore over a data dir in use: %v, want a refusal", err)
	}
}

func TestEtcdSnapshotErrors(t *testing.T) {
	dir := t.TempDir()
	pki := filepath.Join(dir, "pki")
	if _, err := run(t, "certs", "--dir", pki, "--node", "n1", "--etcd-member", "cp1=127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	// A member that is not there: the port was free a moment ago.
	nobody := fmt.Sprintf("https://127.0.0.1:%d", loopbackPort(t))
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "save without file", args: []string{"save"}, wantErr: "accepts 1 arg"},
		{name: "save bad endpoint", args: []string{"save", filepath.Join(dir, "x.db"), "--endpoint", "127.0.0.1:2379"}, wantErr: "want one URL"},
		{name: "save cert without key", args: []string{"save", filepath.Join(dir, "x.db"), "--cert", certs.CertFile(pki, "apiserver-etcd-client")}, wantErr: "--cert and --key go together"},
		{name: "save TLS over http", args: []string{"save", filepath.Join(dir, "x.db"), "--endpoint", "http://127.0.0.1:2379", "--cacert", certs.CertFile(pki, "etcd-ca")}, wantErr: "plain http"},
		{name: "save missing CA file", args: []string{"save", filepath.Join(dir, "x.db"), "--cacert", filepath.Join(dir, "none.crt")}, wantErr: "etcd TLS files"},
		{name: "save nobody there", args: []string{"save", filepath.Join(dir, "x.db"), "--endpoint", nobody, "--dial-timeout", "500ms", "--command-timeout", "2s",
			"--cacert", certs.CertFile(pki, "etcd-ca"), "--cert", certs.CertFile(pki, "apiserver-etcd-client"), "--key", certs.KeyFile(pki, "apiserver-etcd-client")}, wantErr: "saving a snapshot of etcd " + nobody},
		{name: "restore without data dir", args: []string{"restore", filepath.Join(dir, "x.db")}, wantErr: "--data-dir is required"},
		{name: "restore bump without compaction", args: []string{"restore", filepath.Join(dir, "x.db"), "--data-dir", filepath.Join(dir, "d"), "--bump-revision", "10"}, wantErr: "go together"},
		{name: "restore missing file", args: []string{"restore", filepath.Join(dir, "x.db"), "--data-dir", filepath.Join(dir, "d")}, wantErr: "x.db"},
		{name: "restore peer not in cluster", args: []string{"restore", filepath.Join(dir, "x.db"), "--data-dir", filepath.Join(dir, "d"), "--name", "a", "--initial-cluster", "b=http://127.0.0.1:2380"}, wantErr: "restoring"},
		{name: "status of a non-snapshot", args: []string{"status", certs.CertFile(pki, "etcd-ca")}, wantErr: "snapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(t, append([]string{"etcd", "snapshot"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.db")); !os.IsNotExist(err) {
		t.Errorf("a failed save left x.db behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); !os.IsNotExist(err) {
		t.Errorf("a failed restore left its data dir behind: %v", err)
	}
}
