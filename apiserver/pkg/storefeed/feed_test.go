package storefeed

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

func ns(name, rv string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv}}
}

// fakeSource is a ListerWatcher whose lists and watches the test scripts;
// it records the resourceVersion of each call.
type fakeSource struct {
	mu       sync.Mutex
	lists    []string // the resourceVersion of each list
	watches  []string // the resourceVersion of each watch
	state    []corev1.Namespace
	stateRV  string
	watchers []*watch.FakeWatcher
}

func (f *fakeSource) lw() *cache.ListWatch {
	return &cache.ListWatch{
		ListFunc: func(o metav1.ListOptions) (runtime.Object, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.lists = append(f.lists, o.ResourceVersion)
			return &corev1.NamespaceList{ListMeta: metav1.ListMeta{ResourceVersion: f.stateRV}, Items: slices.Clone(f.state)}, nil
		},
		WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.watches = append(f.watches, o.ResourceVersion)
			w := watch.NewFakeWithChanSize(10, false)
			f.watchers = append(f.watchers, w)
			return w, nil
		},
		DisableChunking: true,
	}
}

func (f *fakeSource) watcher(i int) *watch.FakeWatcher {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.watchers[i]
}

func (f *fakeSource) counts() (lists, watches int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.lists), len(f.watches)
}

// consumer is what a feed keeps current: names and resourceVersions.
type consumer struct {
	mu     sync.Mutex
	objs   map[string]string
	resets int
}

func (c *consumer) apply(ev watch.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := ev.Object.(*corev1.Namespace)
	if ev.Type == watch.Deleted {
		delete(c.objs, m.Name)
		return
	}
	c.objs[m.Name] = m.ResourceVersion
}

func (c *consumer) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objs = map[string]string{}
	c.resets++
}

func (c *consumer) snapshot() (map[string]string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.objs), c.resets
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// TestFeedResumesAfterWatchError: the feed lists once and watches from the
// list's resourceVersion; when a watch ends it watches again from the
// last resourceVersion it saw, without listing; when the watch reports
// that version gone (410 Expired) it lists again, and the new state
// replaces the old, so an object deleted meanwhile is dropped.
func TestFeedResumesAfterWatchError(t *testing.T) {
	src := &fakeSource{state: []corev1.Namespace{*ns("a", "5"), *ns("b", "6")}, stateRV: "10"}
	c := &consumer{objs: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	synced := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		Feed(ctx, src.lw(), &corev1.Namespace{}, c.apply, c.reset, func() { close(synced) })
	}()
	defer func() {
		cancel()
		<-done
	}()

	select {
	case <-synced:
	case <-time.After(10 * time.Second):
		t.Fatal("the feed did not sync")
	}
	if objs, resets := c.snapshot(); !maps.Equal(objs, map[string]string{"a": "5", "b": "6"}) || resets != 1 {
		t.Fatalf("after the first list: %v, %d resets", objs, resets)
	}
	waitFor(t, "the first watch", func() bool { _, w := src.counts(); return w == 1 })
	w := src.watcher(0)
	w.Add(ns("c", "11"))
	w.Modify(ns("a", "12"))
	waitFor(t, "the watched changes", func() bool {
		objs, _ := c.snapshot()
		return maps.Equal(objs, map[string]string{"a": "12", "b": "6", "c": "11"})
	})

	// The watch ends: the next one resumes from resourceVersion 12.
	w.Stop()
	waitFor(t, "the second watch", func() bool { _, w := src.counts(); return w == 2 })
	src.mu.Lock()
	lists, watches := slices.Clone(src.lists), slices.Clone(src.watches)
	src.mu.Unlock()
	if !slices.Equal(lists, []string{"0"}) || !slices.Equal(watches, []string{"10", "12"}) {
		t.Fatalf("lists at %q, watches at %q; want one list and watches at 10 then 12", lists, watches)
	}
	src.watcher(1).Delete(ns("c", "13"))
	waitFor(t, "the delete", func() bool { objs, _ := c.snapshot(); _, ok := objs["c"]; return !ok })

	// 410: resourceVersion 13 is gone. b was deleted meanwhile; d created.
	src.mu.Lock()
	src.state, src.stateRV = []corev1.Namespace{*ns("a", "12"), *ns("d", "20")}, "21"
	src.mu.Unlock()
	src.watcher(1).Error(&apierrors.NewResourceExpired("too old resource version: 13 (20)").ErrStatus)
	waitFor(t, "the state after the second list", func() bool {
		objs, resets := c.snapshot()
		return maps.Equal(objs, map[string]string{"a": "12", "d": "20"}) && resets == 2
	})
	waitFor(t, "the watch after the second list", func() bool { _, w := src.counts(); return w == 3 })
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.lists) != 2 || src.watches[2] != "21" {
		t.Errorf("lists at %q, watches at %q; want a second list and a watch from 21", src.lists, src.watches)
	}
}
