package testserver

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// TestStartPicksAgainWhenThePortIsTaken: a port taken between its picking
// and the server's binding (as its own embedded etcd or an outgoing
// connection can take it) does not fail the start: the server serves on
// another port, and the admin kubeconfig, which kubectl reads, names it.
func TestStartPicksAgainWhenThePortIsTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	picked := 0
	orig := freePort
	freePort = func() (int, error) {
		if picked++; picked == 1 {
			return busy, nil
		}
		return orig()
	}
	t.Cleanup(func() { freePort = orig })

	ts := Start(t, nil)
	if picked < 2 {
		t.Fatalf("the server started after %d port picks; the first port was taken", picked)
	}
	if strings.HasSuffix(ts.URL, fmt.Sprintf(":%d", busy)) {
		t.Fatalf("the server's URL %s names the taken port", ts.URL)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", ts.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != ts.URL {
		t.Errorf("the admin kubeconfig names %s, the server is at %s", cfg.Host, ts.URL)
	}
	if _, err := ts.Client.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Errorf("reading a namespace: %v", err)
	}
}
