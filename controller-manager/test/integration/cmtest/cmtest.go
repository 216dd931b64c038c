// Package cmtest runs skiff-controller-manager against a test API server
// for the integration tests.
package cmtest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/transport"

	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/certs"
	cmapp "skiff.dev/controller-manager/app"
)

// Start starts one controller-manager replica with its own certificate
// (system:kube-controller-manager) and a short lease; stop cancels it and
// waits for it to exit.
func Start(t testing.TB, ts *testserver.TestServer, edit func(*cmapp.Options)) (*cmapp.Config, func()) {
	t.Helper()
	return StartWrapped(t, ts, edit, nil)
}

// StartWrapped is Start with the controller manager's client transport
// wrapped by wrap (nil: not wrapped), to count or delay its requests.
func StartWrapped(t testing.TB, ts *testserver.TestServer, edit func(*cmapp.Options), wrap transport.WrapperFunc) (*cmapp.Config, func()) {
	t.Helper()
	o := cmapp.NewOptions()
	o.Client.Kubeconfig = filepath.Join(ts.Dir, "controller-manager.kubeconfig")
	o.Serving.BindAddress, o.Serving.Port = "127.0.0.1", 0
	o.Serving.ClientCAFile = certs.CertFile(ts.PKIDir, "ca")
	le := o.LeaderElection
	le.LeaseDuration, le.RenewDeadline, le.RetryPeriod = 4*time.Second, 3*time.Second, 500*time.Millisecond
	if edit != nil {
		edit(o)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	restCfg, err := o.Client.RESTConfig("skiff-controller-manager")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	restCfg.Wrap(wrap)
	cfg, err := cmapp.SetupWithConfig(ctx, o, restCfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmapp.Run(ctx, cfg) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("controller-manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return cfg, stop
}
