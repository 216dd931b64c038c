package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// cutter is a TCP proxy on loopback whose connections can all be cut at once.
type cutter struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func newCutter(t *testing.T, target string) *cutter {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{l: l, target: target}
	t.Cleanup(func() { l.Close(); c.cut() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	return c
}

func (c *cutter) cut() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.conns) / 2
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
	return n
}

// TestInformerSurvivesCutConnections runs a client-go informer through a
// proxy that keeps cutting its connections while thousands of objects are
// created, updated and deleted: every write is seen exactly once.
func TestInformerSurvivesCutConnections(t *testing.T) {
	ts := start(t, nil)
	proxy := newCutter(t, ts.URL[len("https://"):])
	cfg := *ts.AdminConfig
	cfg.Host = "https://" + proxy.l.Addr().String()
	cfg.ServerName = "127.0.0.1"
	client, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	writer := ts.Client.CoreV1().ConfigMaps("default")

	const n = 1500
	type key struct{ name, rv string }
	var mu sync.Mutex
	seen := map[key]int{}
	record := func(obj any) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				t.Errorf("informer missed a deletion and relisted: %v", d.Key)
			}
			return
		}
		mu.Lock()
		seen[key{cm.Name, cm.ResourceVersion}]++
		mu.Unlock()
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace("default"))
	inf := factory.Core().V1().ConfigMaps().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: record,
		UpdateFunc: func(old, obj any) {
			// A relist re-delivers unchanged objects; that is not an event.
			if old.(*corev1.ConfigMap).ResourceVersion != obj.(*corev1.ConfigMap).ResourceVersion {
				record(obj)
			}
		},
		DeleteFunc: record,
	})
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("informer did not sync")
	}

	// Keep cutting the informer's connections while writing.
	cctx, cancelCut := context.WithCancel(context.Background())
	cuts := 0
	go func() {
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-tick.C:
				cuts += proxy.cut()
			}
		}
	}()
	var written []key
	for i := 0; i < n; i++ {
		cm, err := writer.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, key{cm.Name, cm.ResourceVersion})
		if i%3 == 0 {
			cm.Data = map[string]string{"i": fmt.Sprint(i)}
			cm, err = writer.Update(ctx(t), cm, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			written = append(written, key{cm.Name, cm.ResourceVersion})
		}
	}
	cancelCut()
	if cuts == 0 {
		t.Fatal("the proxy never cut a connection; the test proves nothing")
	}
	// Every write reaches the informer, exactly once. Under load a watch may
	// not get established between two cuts, and client-go's reflector then
	// backs off up to 30 s with a jitter factor of 1 (so up to 60 s) before
	// its next try: wait longer than that, not waitFor's 30 s.
	err = waitForWithin(t, 90*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range written {
			if seen[k] == 0 {
				return fmt.Errorf("event %s@%s not seen (of %d writes, %d cuts)", k.name, k.rv, len(written), cuts)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for k, c := range seen {
		if c > 1 {
			t.Errorf("event %s@%s delivered %d times", k.name, k.rv, c)
		}
	}
	t.Logf("%d writes seen exactly once across %d cut connections", len(written), cuts)
}
