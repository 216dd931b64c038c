package fastpath_test

import (
	"bytes"
	"encoding/json"
	"testing"

	fuzz "github.com/google/gofuzz"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/api/apifuzz"
	"skiff.dev/apiserver/pkg/fastpath"
	"skiff.dev/apiserver/pkg/registry"
)

// TestJSONListIsTheSerializers: for lists of every stored kind, of zero to
// three objects filled at random, JSONList of the items' json.Marshal
// encodings (as the watch cache keeps them) into the serializer's empty
// list gives the very bytes the serializer writes for the whole list.
func TestJSONListIsTheSerializers(t *testing.T) {
	codecs := api.NewCodecs()
	var info runtime.SerializerInfo
	for _, i := range codecs.Factory.SupportedMediaTypes() {
		if i.MediaType == runtime.ContentTypeJSON {
			info = i
		}
	}
	if info.Serializer == nil {
		t.Fatal("no JSON serializer")
	}
	encode := func(t *testing.T, obj runtime.Object) []byte {
		t.Helper()
		var buf bytes.Buffer
		if err := info.Serializer.Encode(obj, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	fuzzers := []*fuzz.Fuzzer{apifuzz.New(1, false), apifuzz.New(2, true)}
	var byKind = map[*registry.Resource][]runtime.Object{}
	var order []*registry.Resource
	apifuzz.EachStored(3, fuzzers, func(r *registry.Resource, _ string, obj runtime.Object) {
		if byKind[r] == nil {
			order = append(order, r)
		}
		byKind[r] = append(byKind[r], obj)
	})
	if len(order) < 40 {
		t.Fatalf("%d stored kinds; want all of them", len(order))
	}
	for _, r := range order {
		for n := 0; n <= len(byKind[r]); n++ {
			objs := byKind[r][:n]
			list := func(items []runtime.Object) runtime.Object {
				l := r.NewList()
				l.GetObjectKind().SetGroupVersionKind(r.GroupVersion().WithKind(r.ListKindName()))
				if err := meta.SetList(l, items); err != nil {
					t.Fatal(err)
				}
				if m, err := meta.ListAccessor(l); err == nil {
					m.SetResourceVersion("12345")
				}
				return l
			}
			items := make([][]byte, len(objs))
			for i, o := range objs {
				data, err := json.Marshal(o)
				if err != nil {
					t.Fatal(err)
				}
				items[i] = data
			}
			got, ok := fastpath.JSONList(encode(t, list([]runtime.Object{})), items)
			if !ok {
				t.Fatalf("%s: the empty list does not end with its items: %s", r.Resource, encode(t, list([]runtime.Object{})))
			}
			if want := encode(t, list(objs)); !bytes.Equal(got, want) {
				t.Errorf("%s, %d items: JSONList gives\n%s\nthe serializer\n%s", r.Resource, n, got, want)
			}
		}
	}
}

// TestJSONListRefuses: an encoding that does not end with its items is
// left to the serializer.
func TestJSONListRefuses(t *testing.T) {
	for _, empty := range []string{``, `{"kind":"PodList","items":[]`, `{"items":[],"metadata":{}}`, `{"items":[1]}`} {
		if _, ok := fastpath.JSONList([]byte(empty), [][]byte{[]byte(`{}`)}); ok {
			t.Errorf("%q: accepted", empty)
		}
	}
}
