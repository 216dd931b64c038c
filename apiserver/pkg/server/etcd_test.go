package server

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"
)

// takenPorts makes pickPort hand out the port of a listener the test holds,
// as if another process had bound the port between its picking and its
// binding, taken times; then free ports again.
func takenPorts(t *testing.T, taken int) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	busy := l.Addr().(*net.TCPAddr).Port
	handed := 0
	pickPort = func() (int, error) {
		if handed < taken {
			handed++
			return busy, nil
		}
		return freeLocalPort()
	}
	t.Cleanup(func() { pickPort = freeLocalPort })
	return busy
}

// TestEmbeddedEtcdPicksAgainWhenAPortIsTaken: a client port taken before
// etcd binds it does not fail the start; etcd runs on other ports.
func TestEmbeddedEtcdPicksAgainWhenAPortIsTaken(t *testing.T) {
	busy := takenPorts(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := startEmbeddedEtcd(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("starting with the first port taken: %v", err)
	}
	defer b.Close()
	if got := b.embedded.Clients[0].Addr().String(); got == fmt.Sprintf("127.0.0.1:%d", busy) {
		t.Fatalf("etcd serves clients on %s, the taken port", got)
	}
	if _, err := b.client.Put(ctx, "/k", "v"); err != nil {
		t.Fatalf("writing to the etcd started on other ports: %v", err)
	}
}

// TestEmbeddedEtcdGivesUpOnTakenPorts: ports that stay taken fail the start
// after listenAttempts with an error that says so.
func TestEmbeddedEtcdGivesUpOnTakenPorts(t *testing.T) {
	takenPorts(t, 2*listenAttempts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := startEmbeddedEtcd(ctx, t.TempDir())
	if err == nil {
		b.Close()
		t.Fatal("etcd started although every port handed out was taken")
	}
	if !AddrInUse(err) {
		t.Errorf("error %v does not say the address is in use", err)
	}
}
