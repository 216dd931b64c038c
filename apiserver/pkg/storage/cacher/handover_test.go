package cacher

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/storage/etcd3/etcd3test"
)

// TestCreateHandedOverIsTheDecoding compares the fast path of a create
// handed over to the cache with the plain Create: over a real etcd, the
// object the cache holds for a handed-over create is the one returned (kept,
// not decoded again), and it equals, and encodes (JSON and protobuf) as,
// the decoding of the bytes in etcd, which is what Create returns and what
// the cache holds for a plain create; written is the bytes in etcd, or nil
// when AsDecoded had to change the object (a nil map value made empty).
// Without KeepCreated nothing is kept and nothing is given back.
func TestCreateHandedOverIsTheDecoding(t *testing.T) {
	_, client := etcd3test.StartEtcd(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	start := func(keep bool) *Cacher {
		c := New(Config{Store: newStore(client, 5*time.Second), GetAttrs: etcd3test.Attrs,
			NewFunc: func() runtime.Object { return &corev1.ConfigMap{} }, NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} },
			GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap"), KeepCreated: keep})
		done := make(chan struct{})
		go func() { defer close(done); _ = c.Start(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		if err := waitFor(5*time.Second, c.Ready); err != nil {
			t.Fatalf("the cache is not ready: %v", err)
		}
		return c
	}
	kept, plain := start(true), start(false)
	decoder := newStore(client, 5*time.Second)
	jsonOf := func(obj runtime.Object) []byte {
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"a": "b"}},
			Data: map[string]string{"k": "v"}}
	}
	nilValue := cm("nil-value")
	nilValue.BinaryData = map[string][]byte{"b": nil}
	keptObjects := 0
	cases := []struct {
		name        string
		cacher      *Cacher
		obj         *corev1.ConfigMap
		keep, bytes bool
	}{
		{"a nil map value filled", kept, nilValue, true, false},
		{"KeepCreated off", plain, cm("off"), false, false},
	}
	for i := range 20 {
		cases = append(cases, struct {
			name        string
			cacher      *Cacher
			obj         *corev1.ConfigMap
			keep, bytes bool
		}{fmt.Sprintf("kept %d, answered from the written bytes", i), kept, cm(fmt.Sprintf("plain-%d", i)), true, true})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := etcd3test.Key(c.obj.Name)
			out, written, err := c.cacher.CreateHandedOver(ctx, key, c.obj)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Get(ctx, key)
			if err != nil || len(resp.Kvs) != 1 {
				t.Fatalf("etcd's copy: %v %v", resp, err)
			}
			stored := resp.Kvs[0]
			decoded, err := decoder.Decode(stored.Value, stored.ModRevision)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(out, decoded) || !bytes.Equal(jsonOf(out), jsonOf(decoded)) {
				t.Errorf("returned\n%s\nthe decoding of etcd's copy\n%s", jsonOf(out), jsonOf(decoded))
			}
			pb, err := decoder.Encode(out)
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := decoder.Encode(decoded); !bytes.Equal(pb, want) {
				t.Error("the returned object's protobuf encoding is not its decoding's")
			}
			if got := written != nil; got != c.bytes {
				t.Errorf("written given back: %v, want %v", got, c.bytes)
			} else if written != nil && !bytes.Equal(written, stored.Value) {
				t.Error("written is not etcd's copy")
			}
			var cached runtime.Object
			if err := waitFor(5*time.Second, func() bool {
				var ok bool
				cached, ok = c.cacher.GetCached(key)
				return ok
			}); err != nil {
				t.Fatalf("the cache did not get the object: %v", err)
			}
			// The watch may bring the event before the create has
			// returned: then it was decoded, and the object is not kept.
			if cached == out {
				keptObjects++
				if !c.keep {
					t.Error("the cache holds the returned object itself without KeepCreated")
				}
			}
			if !bytes.Equal(jsonOf(cached), jsonOf(decoded)) {
				t.Errorf("cached\n%s\nthe decoding of etcd's copy\n%s", jsonOf(cached), jsonOf(decoded))
			}
		})
	}
	t.Logf("%d of %d handed-over objects kept by the cache", keptObjects, len(cases)-1)
	if keptObjects == 0 {
		t.Error("no handed-over object was kept: the fast path was not taken")
	}
	if n := kept.written.size(); n != 0 {
		t.Errorf("%d objects still waiting for their events", n)
	}
}
