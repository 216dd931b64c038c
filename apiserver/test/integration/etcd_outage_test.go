package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/component-base/certs"
)

const etcdBinary = "/usr/bin/etcd" // Debian package etcd-server

// externalEtcd is a real etcd process with TLS on loopback.
type externalEtcd struct {
	t                       *testing.T
	dir, clientURL, peerURL string
	ca, cert, key           string
	cmd                     *exec.Cmd
}

func startExternalEtcd(t *testing.T) *externalEtcd {
	t.Helper()
	if _, err := os.Stat(etcdBinary); err != nil {
		t.Fatalf("etcd is required at %s (Debian package etcd-server): %v", etcdBinary, err)
	}
	dir := t.TempDir()
	ca, err := certs.NewCA("etcd-ca")
	if err != nil {
		t.Fatal(err)
	}
	if err := certs.WriteCA(dir, ca); err != nil {
		t.Fatal(err)
	}
	serving, err := certs.IssueServingCert(ca, "etcd", nil, []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	client, err := certs.IssueClientCert(ca, "kube-apiserver-etcd-client", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := certs.WriteKeyPair(dir, "etcd-server", serving); err != nil {
		t.Fatal(err)
	}
	if err := certs.WriteKeyPair(dir, "etcd-client", client); err != nil {
		t.Fatal(err)
	}
	cp, _ := server.FreeLocalPort()
	pp, _ := server.FreeLocalPort()
	e := &externalEtcd{
		t: t, dir: dir,
		clientURL: fmt.Sprintf("https://127.0.0.1:%d", cp), peerURL: fmt.Sprintf("http://127.0.0.1:%d", pp),
		ca: certs.CertFile(dir, "ca"), cert: certs.CertFile(dir, "etcd-client"), key: certs.KeyFile(dir, "etcd-client"),
	}
	e.start()
	t.Cleanup(e.stop)
	return e
}

func (e *externalEtcd) start() {
	e.t.Helper()
	e.cmd = exec.Command(etcdBinary,
		"--name", "test", "--data-dir", filepath.Join(e.dir, "data"),
		"--listen-client-urls", e.clientURL, "--advertise-client-urls", e.clientURL,
		"--listen-peer-urls", e.peerURL, "--initial-advertise-peer-urls", e.peerURL,
		"--initial-cluster", "test="+e.peerURL,
		"--cert-file", certs.CertFile(e.dir, "etcd-server"), "--key-file", certs.KeyFile(e.dir, "etcd-server"),
		"--client-cert-auth", "--trusted-ca-file", certs.CertFile(e.dir, "ca"),
		"--log-level", "error", "--logger", "zap",
	)
	log, err := os.OpenFile(filepath.Join(e.dir, "etcd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		e.t.Fatal(err)
	}
	e.cmd.Stdout, e.cmd.Stderr = log, log
	if err := e.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
}

func (e *externalEtcd) stop() {
	if e.cmd != nil && e.cmd.Process != nil {
		_ = e.cmd.Process.Signal(syscall.SIGKILL)
		_ = e.cmd.Wait()
		e.cmd = nil
	}
}

// TestEtcdOutage: with etcd gone, requests fail fast with 503/504 and
// readiness fails; when etcd is back, the server serves again and an open
// watch resumes without losing the writes made after the outage.
func TestEtcdOutage(t *testing.T) {
	e := startExternalEtcd(t)
	ts := start(t, func(o *server.Options) {
		o.EtcdServers = []string{e.clientURL}
		o.EtcdCAFile, o.EtcdCertFile, o.EtcdKeyFile = e.ca, e.cert, e.key
		o.EtcdRequestTimeout = 2 * time.Second
	})
	cms := ts.Client.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	e.stop()
	start := time.Now()
	_, err = cms.Get(ctx(t), "before", metav1.GetOptions{})
	elapsed := time.Since(start)
	var se *apierrors.StatusError
	if !errors.As(err, &se) || (se.ErrStatus.Code != http.StatusServiceUnavailable && se.ErrStatus.Code != http.StatusGatewayTimeout) {
		t.Fatalf("GET with etcd down: %v, want 503 or 504", err)
	}
	if elapsed > 10*time.Second {
		t.Errorf("GET with etcd down took %v; it should fail fast", elapsed)
	}
	t.Logf("with etcd down: %d %s after %v", se.ErrStatus.Code, se.ErrStatus.Message, elapsed.Round(time.Millisecond))
	code, body := raw(t, ts, http.MethodGet, "/readyz", "", nil)
	if code == http.StatusOK {
		t.Errorf("/readyz with etcd down: %d %s", code, body)
	}

	e.start()
	var created *corev1.ConfigMap
	if err := waitFor(t, func() (err error) {
		created, err = cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			created, err = cms.Get(context.Background(), "after", metav1.GetOptions{})
		}
		return err
	}); err != nil {
		t.Fatalf("server did not recover after etcd came back: %v", err)
	}
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch closed during the outage")
		}
		got, isCM := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Added || !isCM || got.Name != "after" || got.ResourceVersion != created.ResourceVersion {
			t.Fatalf("after the outage the watch got %s %#v, want ADDED after@%s", ev.Type, ev.Object, created.ResourceVersion)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not resume after etcd came back")
	}
	if code, body := raw(t, ts, http.MethodGet, "/readyz", "", nil); code != http.StatusOK {
		t.Errorf("/readyz after recovery: %d %s", code, body)
	}
}
