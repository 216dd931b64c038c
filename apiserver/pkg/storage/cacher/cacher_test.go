package cacher

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/storage"
	"skiff.dev/apiserver/pkg/storage/etcd3"
	"skiff.dev/apiserver/pkg/storage/etcd3/etcd3test"
)

// TestCacher runs the scripts in testdata/ against a Cacher of ConfigMaps
// over a real embedded etcd, a fresh one per script so that revisions start
// at 1. The cacher reaches etcd through a loopback proxy the script can cut
// (etcd unreachable) and restore; the script's own writes go to etcd
// directly, so they land while the cacher cannot see them. Run with -rewrite
// to regenerate the expected output.
//
// The commands (ConfigMaps in namespace ns, key /registry/configmaps/ns/NAME):
//
//	create name=N [labels=k=v,...] [data=S]   write to etcd directly
//	update name=N [labels=...] [data=S]       (labels and data are replaced)
//	delete name=N
//	compact rev=R                             etcd compaction up to R
//	start [window=N] [buffer=B]               start the cacher and wait until it has listed
//	                                          (N events kept, B events a watcher may lag)
//	watch id=W [rv=R] [labels=SEL] [fields=SEL] [name=N] [bookmarks] [initial=true|false] [nosync]
//	                                          Cacher.Watch (name: one key, else the prefix),
//	                                          after waiting as events does unless nosync
//	events id=W [nosync]                      wait until the cache has etcd's current
//	                                          revision (unless nosync), then print every
//	                                          event W has been sent since the last events,
//	                                          or that W was closed
//	closed id=W                               wait as events does, then tell whether the
//	                                          cacher closed W, without reading from it
//	bookmark                                  wait as events does, then do what the
//	                                          bookmark timer does
//	list [rv=R] [match=M] [limit=L] [labels=SEL] [fields=SEL] [nosync]
//	                                          Cacher.GetList; prints whether the cache or etcd
//	                                          answered; with an rv, after waiting as events
//	                                          does unless nosync (a consistent list waits itself)
//	cut / restore                             make etcd unreachable for the cacher / reachable again
//	rev                                       etcd's revision and the cache's
func TestCacher(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := newHarness(t)
		datadriven.RunTest(t, path, h.run)
	})
}

// proxy forwards loopback connections to etcd until it is cut: then it
// closes every connection it carries and every new one at once, as a dead
// etcd's host would refuse them.
type proxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]struct{}
}

func startProxy(t *testing.T, target string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() {
		_ = l.Close()
		p.setCut(true)
	})
	go p.serve()
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			_ = dst.Close()
			_ = src.Close()
			p.mu.Lock()
			delete(p.conns, dst)
			delete(p.conns, src)
			p.mu.Unlock()
		}
		go pipe(c, up)
		go pipe(up, c)
	}
}

func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
	}
}

func newStore(c *clientv3.Client, timeout time.Duration) *etcd3.Store {
	codec := etcd3test.Codec()
	return etcd3.New(etcd3.Config{
		Client: c, Codec: codec,
		NewFunc:        func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc:    func() runtime.Object { return &corev1.ConfigMapList{} },
		ResourcePrefix: etcd3test.Prefix,
		GVK:            corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		RequestTimeout: timeout,
	})
}

type harness struct {
	t       *testing.T
	direct  *clientv3.Client
	writer  *etcd3.Store
	proxied *etcd3.Store
	proxy   *proxy
	cacher  *Cacher
	watches map[string]*watcher
}

func newHarness(t *testing.T) *harness {
	e, direct := etcd3test.StartEtcd(t)
	p := startProxy(t, e.Clients[0].Addr().String())
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{p.l.Addr().String()},
		DialTimeout: time.Second,
		Logger:      zap.NewNop(),
		// Reconnect soon after the proxy is restored.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.5, MaxDelay: 200 * time.Millisecond},
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &harness{
		t: t, direct: direct, proxy: p, watches: map[string]*watcher{},
		writer: newStore(direct, 5*time.Second), proxied: newStore(c, 500*time.Millisecond),
	}
}

// fence marks the end of what a watcher had been sent when events asked.
const fence = "test.skiff.dev/fence"

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	ctx := context.Background()
	switch d.Cmd {
	case "create", "update":
		cm := etcd3test.ConfigMap(t, d)
		var out runtime.Object
		var err error
		if d.Cmd == "create" {
			out, err = h.writer.Create(ctx, etcd3test.Key(cm.Name), cm)
		} else {
			out, err = h.writer.GuaranteedUpdate(ctx, etcd3test.Key(cm.Name), nil, false, func(existing runtime.Object) (runtime.Object, error) {
				n := existing.(*corev1.ConfigMap).DeepCopy()
				n.Labels, n.Data = cm.Labels, cm.Data
				return n, nil
			})
		}
		if err != nil {
			return etcd3test.DescribeErr(err, false)
		}
		return etcd3test.Describe(out)
	case "delete":
		out, err := h.writer.Delete(ctx, etcd3test.Key(etcd3test.Arg(d, "name")), nil, nil)
		if err != nil {
			return etcd3test.DescribeErr(err, false)
		}
		return etcd3test.Describe(out)
	case "compact":
		var rev int64
		d.ScanArgs(t, "rev", &rev)
		if _, err := h.direct.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	case "start":
		cfg := Config{
			Store: h.proxied, GetAttrs: etcd3test.Attrs,
			NewFunc:          func() runtime.Object { return &corev1.ConfigMap{} },
			NewListFunc:      func() runtime.Object { return &corev1.ConfigMapList{} },
			BookmarkInterval: time.Hour, // bookmarks come from the script
			FreshnessTimeout: time.Second,
			GVK:              corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		}
		if d.HasArg("window") {
			d.ScanArgs(t, "window", &cfg.WindowSize)
		}
		if d.HasArg("buffer") {
			d.ScanArgs(t, "buffer", &cfg.WatcherBuffer)
		}
		h.cacher = New(cfg)
		cctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = h.cacher.Start(cctx) }()
		h.t.Cleanup(func() { cancel(); <-done })
		if err := waitFor(5*time.Second, h.cacher.Ready); err != nil {
			return "not ready: " + err.Error()
		}
		return fmt.Sprintf("ready at rev=%d", h.cacher.Revision())
	case "watch":
		if !d.HasArg("nosync") {
			if err := h.sync(); err != nil {
				return err.Error()
			}
		}
		opts := storage.ListOptions{ResourceVersion: etcd3test.Arg(d, "rv"), Recursive: true, Predicate: etcd3test.Predicate(t, d),
			AllowWatchBookmarks: d.HasArg("bookmarks")}
		k := "/registry/configmaps/ns"
		if n := etcd3test.Arg(d, "name"); n != "" {
			k, opts.Recursive = etcd3test.Key(n), false
		}
		if d.HasArg("initial") {
			var v bool
			d.ScanArgs(t, "initial", &v)
			opts.SendInitialEvents = &v
		}
		w, err := h.cacher.Watch(ctx, k, opts)
		if err != nil {
			return etcd3test.DescribeErr(err, false)
		}
		h.watches[etcd3test.Arg(d, "id")] = w.(*watcher)
		h.t.Cleanup(w.Stop)
		return "ok"
	case "events":
		if !d.HasArg("nosync") {
			if err := h.sync(); err != nil {
				return err.Error()
			}
		}
		return h.events(h.watches[etcd3test.Arg(d, "id")])
	case "closed":
		if err := h.sync(); err != nil {
			return err.Error()
		}
		h.cacher.mu.Lock()
		defer h.cacher.mu.Unlock()
		_, registered := h.cacher.watchers[h.watches[etcd3test.Arg(d, "id")].id]
		return fmt.Sprintf("closed=%v registered=%v watchers=%d", h.watches[etcd3test.Arg(d, "id")].closed, registered, len(h.cacher.watchers))
	case "bookmark":
		if err := h.sync(); err != nil {
			return err.Error()
		}
		h.cacher.sendBookmarks()
		return "ok"
	case "list":
		if !d.HasArg("nosync") && etcd3test.Arg(d, "rv") != "" {
			if err := h.sync(); err != nil {
				return err.Error()
			}
		}
		opts := storage.ListOptions{ResourceVersion: etcd3test.Arg(d, "rv"), ResourceVersionMatch: metav1.ResourceVersionMatch(etcd3test.Arg(d, "match")),
			Recursive: true, Predicate: etcd3test.Predicate(t, d)}
		_, _, fromCache, _ := h.cacher.list(ctx, "/registry/configmaps/ns", opts)
		list := &corev1.ConfigMapList{}
		if err := h.cacher.GetList(ctx, "/registry/configmaps/ns", opts, list); err != nil {
			return etcd3test.DescribeErr(err, false)
		}
		var b strings.Builder
		src := "etcd"
		if fromCache {
			src = "cache"
		}
		fmt.Fprintf(&b, "from %s: list rv=%s", src, list.ResourceVersion)
		if list.Continue != "" {
			b.WriteString(" continue")
		}
		b.WriteString("\n")
		for i := range list.Items {
			b.WriteString(etcd3test.Describe(&list.Items[i]) + "\n")
		}
		return b.String()
	case "cut":
		h.proxy.setCut(true)
		return "ok"
	case "restore":
		h.proxy.setCut(false)
		return "ok"
	case "rev":
		rev, err := h.writer.CurrentRevision(ctx)
		if err != nil {
			return etcd3test.DescribeErr(err, false)
		}
		return fmt.Sprintf("etcd=%d cache=%d", rev, h.cacher.Revision())
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// sync waits until the cache reflects etcd's current revision: every event
// up to it has then been handed to the watchers.
func (h *harness) sync() error {
	rev, err := h.writer.CurrentRevision(context.Background())
	if err != nil {
		return err
	}
	if err := waitFor(5*time.Second, func() bool { return h.cacher.Ready() && h.cacher.Revision() >= rev }); err != nil {
		return fmt.Errorf("the cache did not reach revision %d (at %d): %v", rev, h.cacher.Revision(), err)
	}
	return nil
}

// events prints what w has been sent: it queues a fence behind the events
// already queued for w and reads up to it, so the output holds exactly the
// events sent before, or ends with (closed) when the cacher closed w.
func (h *harness) events(w *watcher) string {
	c := h.cacher
	c.mu.Lock()
	if !w.closed {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{fence: "true"}}}
		select {
		case w.input <- watch.Event{Type: watch.Bookmark, Object: obj}:
		default:
			c.mu.Unlock()
			return "the watcher's buffer is full"
		}
	}
	c.mu.Unlock()
	var b strings.Builder
	timeout := time.After(5 * time.Second)
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				b.WriteString("(closed)\n")
				return b.String()
			}
			if m, err := meta.Accessor(e.Object); err == nil && m.GetAnnotations()[fence] != "" {
				if b.Len() == 0 {
					return "(none)"
				}
				return b.String()
			}
			if e.Type == watch.Error {
				if st, ok := e.Object.(*metav1.Status); ok {
					fmt.Fprintf(&b, "ERROR %d %s\n", st.Code, st.Reason)
					continue
				}
			}
			fmt.Fprintf(&b, "%s %s\n", e.Type, etcd3test.Describe(e.Object))
		case <-timeout:
			b.WriteString("(the fence did not arrive in 5s)\n")
			return b.String()
		}
	}
}
