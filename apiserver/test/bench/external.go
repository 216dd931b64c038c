package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/wait"

	"skiff.dev/apiserver/pkg/server"
)

// externalEtcd is an etcd the bench runs as its own process, as a deployed
// cluster runs it next to the API server: the Debian package etcd-server's
// binary, on loopback, with its default durability (fsync on every commit).
type externalEtcd struct {
	cmd  *exec.Cmd
	url  string
	done chan error
}

// startExternalEtcd starts binary with its data in dir and waits until it
// answers.
func startExternalEtcd(ctx context.Context, binary, dir string) (*externalEtcd, error) {
	clientPort, err := server.FreeLocalPort()
	if err != nil {
		return nil, err
	}
	peerPort, err := server.FreeLocalPort()
	if err != nil {
		return nil, err
	}
	cu := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	pu := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	logFile, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(binary,
		"--name", "bench",
		"--data-dir", filepath.Join(dir, "etcd-data"),
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", "bench="+pu,
		"--quota-backend-bytes", fmt.Sprint(8<<30))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	e := &externalEtcd{cmd: cmd, url: cu, done: make(chan error, 1)}
	go func() { e.done <- cmd.Wait() }()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{cu}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		e.stop()
		return nil, err
	}
	defer c.Close()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-e.done:
			return false, fmt.Errorf("%s exited: %v (log in %s)", binary, err, logFile.Name())
		default:
		}
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := c.Get(rctx, "health")
		return err == nil, nil
	})
	if err != nil {
		e.stop()
		return nil, fmt.Errorf("etcd at %s: %w", cu, err)
	}
	return e, nil
}

// stop ends the process and waits for it.
func (e *externalEtcd) stop() {
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(10 * time.Second):
		_ = e.cmd.Process.Kill()
		if err := <-e.done; err != nil && !errors.Is(err, os.ErrProcessDone) {
			progress("etcd: %v", err)
		}
	}
}
