package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
)

// TestOtherClientFlavours: client-go speaking protobuf, the metadata-only
// client the garbage collector uses, and the dynamic client.
func TestOtherClientFlavours(t *testing.T) {
	ts := start(t, nil)
	cfg := *ts.AdminConfig
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	pb, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods := pb.CoreV1().Pods("default")
	w, err := pods.Watch(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := pods.Create(ctx(t), testPod("proto", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*corev1.Pod).Name != "proto" {
		t.Fatalf("protobuf watch: %s %v", ev.Type, ev.Object)
	}
	list, err := pods.List(ctx(t), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].UID != created.UID {
		t.Fatalf("protobuf list: %v %+v", err, list)
	}

	md, err := metadata.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	podsGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	pl, err := md.Resource(podsGVR).Namespace("default").List(ctx(t), metav1.ListOptions{})
	if err != nil || len(pl.Items) != 1 || pl.Items[0].Name != "proto" || pl.Items[0].UID != created.UID {
		t.Fatalf("metadata list: %v %+v", err, pl)
	}
	one, err := md.Resource(podsGVR).Namespace("default").Get(ctx(t), "proto", metav1.GetOptions{})
	if err != nil || one.ResourceVersion != created.ResourceVersion {
		t.Fatalf("metadata get: %v %+v", err, one)
	}

	dyn, err := dynamic.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	u, err := dyn.Resource(podsGVR).Namespace("default").Get(ctx(t), "proto", metav1.GetOptions{})
	if err != nil || u.GetKind() != "Pod" || u.GetAPIVersion() != "v1" {
		t.Fatalf("dynamic get: %v %v", err, u)
	}
}
