package testserver

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/component-base/certs"
)

// TestServer is a running API server.
type TestServer struct {
	// URL is https://127.0.0.1:<port>.
	URL string
	// Dir holds pki/ and the kubeconfigs.
	Dir        string
	PKIDir     string
	Kubeconfig string
	// AdminConfig is a client-go config for the admin (system:masters).
	AdminConfig *rest.Config
	Client      *kubernetes.Clientset
	Server      *server.Server
	Options     *server.Options
	cancel      context.CancelFunc
	done        chan error
}

// Start starts a server; customize may change the options first. The
// server is stopped by t.Cleanup. The ServiceAccount admission plugin is
// disabled unless customize enables it (see StartServer).
func Start(t testing.TB, customize func(*server.Options)) *TestServer {
	t.Helper()
	ts, err := StartServer(t.TempDir(), customize)
	if err != nil {
		t.Fatalf("starting the test API server: %v", err)
	}
	t.Cleanup(ts.TearDown)
	return ts
}

// StartServer starts a server with its state in dir (for benchmarks and
// tools that are not tests). Call TearDown when done.
func StartServer(dir string, customize func(*server.Options)) (*TestServer, error) {
	pki := filepath.Join(dir, "pki")
	port, err := pkiForFreePort(pki, dir)
	if err != nil {
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("test-admin-token,test-admin,uid-1,\"system:masters\"\ntest-user-token,test-user,uid-2\n"), 0o600); err != nil {
		return nil, err
	}
	opts := server.NewOptions()
	opts.BindAddress = "127.0.0.1"
	opts.TLSCertFile = filepath.Join(pki, "apiserver.crt")
	opts.TLSKeyFile = filepath.Join(pki, "apiserver.key")
	opts.ClientCAFile = filepath.Join(pki, "ca.crt")
	opts.TokenAuthFile = tokens
	opts.EtcdDataDir = filepath.Join(dir, "etcd")
	opts.ServiceAccountSigningKeyFile = filepath.Join(pki, "sa.key")
	opts.ServiceAccountKeyFiles = []string{filepath.Join(pki, "sa.pub")}
	opts.KubeletClientCertificate = filepath.Join(pki, "apiserver-kubelet-client.crt")
	opts.KubeletClientKey = filepath.Join(pki, "apiserver-kubelet-client.key")
	opts.KubeletCertificateAuthority = filepath.Join(pki, "ca.crt")
	opts.ShutdownGracePeriod = time.Second
	// As upstream's integration tests do: no controller-manager creates the
	// "default" ServiceAccount of each namespace here, so the ServiceAccount
	// admission plugin, which refuses pods whose service account is missing,
	// is off unless a test turns it back on (clear DisableAdmissionPlugins).
	opts.DisableAdmissionPlugins = []string{"ServiceAccount"}
	// The built-in metrics.k8s.io would scrape every Ready node's kubelet
	// at the address the Node names, and tests register nodes at addresses
	// no test owns: off unless a test sets a resolution (its nodes' kubelets
	// on loopback or in its own network namespace).
	opts.MetricResolution = 0
	if customize != nil {
		customize(opts)
	}
	var (
		srv    *server.Server
		ctx    context.Context
		cancel context.CancelFunc
	)
	for attempt := 1; ; attempt++ {
		opts.SecurePort = port
		ctx, cancel = context.WithCancel(context.Background())
		ctx = klog.NewContext(ctx, klog.Background().WithName("testserver"))
		if srv, err = server.Setup(ctx, opts); err == nil {
			break
		}
		cancel()
		// The port was free when picked and was taken since (by this
		// server's embedded etcd, which picks its ports after, or by an
		// outgoing connection): pick another, for which the kubeconfigs
		// are written again.
		if !server.AddrInUse(err) || attempt == listenAttempts {
			return nil, err
		}
		if port, err = pkiForFreePort(pki, dir); err != nil {
			return nil, err
		}
	}
	ts := &TestServer{
		URL: fmt.Sprintf("https://127.0.0.1:%d", srv.Port()), Dir: dir, PKIDir: pki,
		Kubeconfig: filepath.Join(dir, "admin.kubeconfig"),
		Server:     srv, Options: opts, cancel: cancel, done: make(chan error, 1),
	}
	go func() { ts.done <- srv.Run(ctx) }()
	cfg, err := clientcmd.BuildConfigFromFlags("", ts.Kubeconfig)
	if err != nil {
		ts.TearDown()
		return nil, err
	}
	cfg.Host = ts.URL
	cfg.QPS, cfg.Burst = -1, -1
	ts.AdminConfig = cfg
	ts.Client, err = kubernetes.NewForConfig(cfg)
	if err != nil {
		ts.TearDown()
		return nil, err
	}
	if err := ts.waitReady(60 * time.Second); err != nil {
		ts.TearDown()
		return nil, err
	}
	return ts, nil
}

func (ts *TestServer) waitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-ts.done:
			return false, fmt.Errorf("server exited: %v", err)
		default:
		}
		body, err := ts.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil || string(body) != "ok" {
			last = fmt.Errorf("readyz: %v %s", err, body)
			return false, nil
		}
		for _, ns := range server.SystemNamespaces {
			if _, err := ts.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
				last = err
				if apierrors.IsNotFound(err) {
					return false, nil
				}
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("server not ready: %w (last: %v)", err, last)
	}
	return nil
}

// TearDown stops the server and waits for it to exit.
func (ts *TestServer) TearDown() {
	ts.cancel()
	select {
	case <-ts.done:
	case <-time.After(30 * time.Second):
	}
}

// HTTPClient is an admin HTTP client for raw requests.
func (ts *TestServer) HTTPClient() (*http.Client, error) {
	return rest.HTTPClientFor(ts.AdminConfig)
}

// freePort picks the server's port; a test replaces it to hand out a
// port in use.
var freePort = server.FreeLocalPort

// listenAttempts bounds how many ports StartServer tries.
const listenAttempts = 5

// pkiForFreePort picks a free port and writes the PKI in pki (kept if it is
// there) and the kubeconfigs in dir for a server on that port.
func pkiForFreePort(pki, dir string) (int, error) {
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	if _, err := certs.Generate(context.Background(), certs.Options{
		Dir: pki, KubeconfigDir: dir, Server: fmt.Sprintf("https://127.0.0.1:%d", port), Nodes: []string{"node-1"},
	}); err != nil {
		return 0, fmt.Errorf("generating certificates: %w", err)
	}
	return port, nil
}
