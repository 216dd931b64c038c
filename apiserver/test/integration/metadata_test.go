package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"

	"skiff.dev/apiserver/pkg/server"
)

// The metadata client (what the garbage collector's and namespace
// controller's informers use) lists, gets and watches PartialObjectMetadata
// of any resource, in protobuf and in JSON.
func TestMetadataClientListsGetsAndWatches(t *testing.T) {
	ts := start(t, nil)
	ctx := context.Background()
	md, err := metadata.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	cms := md.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := ts.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "owned", Labels: map[string]string{"a": "b"}},
		Data:       map[string]string{"secret-ish": "not in the metadata"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := next(t, w)
	pom, ok := ev.Object.(*metav1.PartialObjectMetadata)
	if ev.Type != watch.Added || !ok || pom.Name != "owned" || pom.Labels["a"] != "b" {
		t.Fatalf("watch event = %s %#v", ev.Type, ev.Object)
	}
	got, err := cms.Get(ctx, "owned", metav1.GetOptions{})
	if err != nil || got.UID != pom.UID || got.ResourceVersion != pom.ResourceVersion {
		t.Fatalf("get = %+v, %v", got, err)
	}
	list, err = cms.List(ctx, metav1.ListOptions{LabelSelector: "a=b"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "owned" {
		t.Fatalf("list = %+v, %v", list, err)
	}
}

// A metadata watch's bookmarks are PartialObjectMetadata too: the metadata
// client decodes nothing else, and a bookmark of the resource's own kind
// ended the garbage collector's watches with a decoding error every time
// one was sent.
func TestMetadataWatchBookmarks(t *testing.T) {
	ts := start(t, func(o *server.Options) { o.BookmarkInterval = 200 * time.Millisecond })
	md, err := metadata.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	cms := md.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	list, err := cms.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := next(t, w)
	pom, ok := ev.Object.(*metav1.PartialObjectMetadata)
	if ev.Type != watch.Bookmark || !ok {
		t.Fatalf("watch event = %s %#v, want a BOOKMARK of PartialObjectMetadata", ev.Type, ev.Object)
	}
	if pom.ResourceVersion == "" {
		t.Errorf("bookmark = %#v, want a resourceVersion", pom)
	}
}
