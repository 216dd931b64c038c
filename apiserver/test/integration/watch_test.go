package integration

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/server"
)

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10s")
	}
	return watch.Event{}
}

func cmName(ev watch.Event) string {
	if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
		return cm.Name
	}
	return fmt.Sprintf("%T", ev.Object)
}

func TestWatchResumesFromResourceVersion(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client.CoreV1().ConfigMaps("default")
	var rvs []string
	for i := 0; i < 5; i++ {
		cm, err := c.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rvs = append(rvs, cm.ResourceVersion)
	}
	w, err := c.Watch(ctx(t), metav1.ListOptions{ResourceVersion: rvs[1]})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := 2; i < 5; i++ {
		ev := next(t, w)
		if ev.Type != watch.Added || cmName(ev) != fmt.Sprintf("cm-%d", i) {
			t.Fatalf("event %d: %s %s, want ADDED cm-%d", i, ev.Type, cmName(ev), i)
		}
		if got := ev.Object.(*corev1.ConfigMap).ResourceVersion; got != rvs[i] {
			t.Errorf("event rv %s, want %s", got, rvs[i])
		}
	}
	// No more events than the writes: an update comes next, not a repeat.
	cm, _ := c.Get(ctx(t), "cm-0", metav1.GetOptions{})
	cm.Data = map[string]string{"k": "v"}
	if _, err := c.Update(ctx(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Modified || cmName(ev) != "cm-0" {
		t.Fatalf("got %s %s, want MODIFIED cm-0", ev.Type, cmName(ev))
	}
}

func TestWatchSelectorLeavingIsDeleted(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client.CoreV1().ConfigMaps("default")
	w, err := c.Watch(ctx(t), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cm, err := c.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"app": "web"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Added {
		t.Fatalf("got %s, want ADDED", ev.Type)
	}
	cm.Labels["app"] = "db"
	cm, err = c.Update(ctx(t), cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev := next(t, w)
	if ev.Type != watch.Deleted {
		t.Fatalf("got %s, want DELETED when the object leaves the selector", ev.Type)
	}
	if got := ev.Object.(*corev1.ConfigMap); got.ResourceVersion != cm.ResourceVersion || got.Labels["app"] != "web" {
		t.Errorf("DELETED carries %v at rv %s; want the previous state at rv %s", got.Labels, got.ResourceVersion, cm.ResourceVersion)
	}
}

func TestWatchTooOldIsGone(t *testing.T) {
	ts := start(t, func(o *server.Options) { o.WatchCacheSize = 10 })
	c := ts.Client.CoreV1().ConfigMaps("default")
	first, err := c.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "first"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		if _, err := c.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The cache must have seen the writes before the window can be judged.
	last, _ := c.List(ctx(t), metav1.ListOptions{})
	_ = last
	_, err = c.Watch(ctx(t), metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("watch from an evicted revision: %v, want 410 Gone", err)
	}
}

func TestWatchBookmarksAndTimeout(t *testing.T) {
	ts := start(t, func(o *server.Options) { o.BookmarkInterval = 200 * time.Millisecond })
	c := ts.Client.CoreV1().ConfigMaps("default")
	list, err := c.List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	timeout := int64(3)
	w, err := c.Watch(ctx(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := next(t, w)
	if ev.Type != watch.Bookmark {
		t.Fatalf("got %s, want BOOKMARK", ev.Type)
	}
	if rv := ev.Object.(*corev1.ConfigMap).ResourceVersion; rv == "" {
		t.Error("bookmark without resourceVersion")
	}
	// timeoutSeconds ends the stream.
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("watch did not end after timeoutSeconds")
		}
	}
}
