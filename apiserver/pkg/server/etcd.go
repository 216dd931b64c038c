package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.uber.org/zap"
	"k8s.io/klog/v2"
)

// etcdBackend is an etcd client and, when embedded, the server behind it.
type etcdBackend struct {
	client   *clientv3.Client
	embedded *embed.Etcd
}

func (b *etcdBackend) Close() {
	if b.client != nil {
		_ = b.client.Close()
	}
	if b.embedded != nil {
		b.embedded.Close()
	}
}

// pickPort is freeLocalPort; a test replaces it to hand out a port in use.
var pickPort = freeLocalPort

// listenAttempts bounds how many times a listener is set up on new free
// ports when the port picked was taken between the picking and the
// binding: the kernel may hand a port just closed to the next pick (the
// test server picks its own port, then its embedded etcd picks two), or
// to an outgoing connection.
const listenAttempts = 5

// AddrInUse reports whether err is a listener's "address already in use".
func AddrInUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }

func freeLocalPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startEmbeddedEtcd runs a single-member etcd in dir, reachable only on
// loopback, and returns an in-process client to it.
func startEmbeddedEtcd(ctx context.Context, dir string) (*etcdBackend, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Name = "skiff"
	cfg.LogLevel = "error"
	cfg.Logger = "zap"
	cfg.LogOutputs = []string{filepath.Join(dir, "etcd.log")}
	cfg.ExperimentalWatchProgressNotifyInterval = 5 * time.Second
	// A revision-based auto compaction is off: the API server compacts, as upstream.
	cfg.AutoCompactionMode = ""
	cfg.QuotaBackendBytes = 8 * 1024 * 1024 * 1024
	var (
		e  *embed.Etcd
		cu *url.URL
	)
	for attempt := 1; ; attempt++ {
		clientPort, err := pickPort()
		if err != nil {
			return nil, err
		}
		peerPort, err := pickPort()
		if err != nil {
			return nil, err
		}
		cu, _ = url.Parse(fmt.Sprintf("http://127.0.0.1:%d", clientPort))
		pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", peerPort))
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
		cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
		// etcd binds its listeners before it writes anything to dir, so a
		// start that lost a port leaves nothing behind to start again.
		e, err = embed.StartEtcd(cfg)
		if err == nil {
			break
		}
		if !AddrInUse(err) || attempt == listenAttempts {
			return nil, fmt.Errorf("starting embedded etcd in %s: %w", dir, err)
		}
		klog.FromContext(ctx).Info("a port picked for the embedded etcd was taken before etcd bound it; picking others", "err", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("embedded etcd in %s did not become ready in 60s", dir)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	klog.FromContext(ctx).Info("embedded etcd ready", "dir", dir, "client", cu.String())
	return &etcdBackend{client: v3client.New(e.Server), embedded: e}, nil
}

// connectEtcd connects to an external etcd cluster, with TLS when given.
func connectEtcd(ctx context.Context, o *Options) (*etcdBackend, error) {
	var tlsCfg *tls.Config
	if o.EtcdCertFile != "" || o.EtcdCAFile != "" {
		info := transport.TLSInfo{CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile, TrustedCAFile: o.EtcdCAFile}
		c, err := info.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd TLS: %w", err)
		}
		tlsCfg = c
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:            o.EtcdServers,
		TLS:                  tlsCfg,
		DialTimeout:          10 * time.Second,
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
		Context:              ctx,
		// The client's own retry warnings would flood the log while etcd is down;
		// failures reach the log through the requests that see them.
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd %v: %w", o.EtcdServers, err)
	}
	return &etcdBackend{client: c}, nil
}

// FreeLocalPort returns a loopback port that was free a moment ago.
func FreeLocalPort() (int, error) { return freeLocalPort() }
