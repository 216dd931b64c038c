package fastpath_test

import (
	"bytes"
	"strings"
	"testing"

	fuzz "github.com/google/gofuzz"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/api/apifuzz"
	"skiff.dev/apiserver/pkg/fastpath"
	"skiff.dev/apiserver/pkg/registry"
)

func protobufSerializer(t testing.TB, codecs *api.Codecs) runtime.Serializer {
	for _, i := range codecs.Factory.SupportedMediaTypes() {
		if i.MediaType == runtime.ContentTypeProtobuf {
			return i.Serializer
		}
	}
	t.Fatal("no protobuf serializer")
	return nil
}

// TestWithResourceVersionIsTheEncoding: for objects of every built-in
// kind, filled at random, the stored encoding (the server's storage codec,
// resourceVersion empty) with a resourceVersion put in is byte for byte
// what the protobuf serializer writes for the object with that
// resourceVersion, which is what a create answers.
func TestWithResourceVersionIsTheEncoding(t *testing.T) {
	const perKind = 40
	codecs := api.NewCodecs()
	pb := protobufSerializer(t, codecs)
	fuzzers := []*fuzz.Fuzzer{apifuzz.New(11, false), apifuzz.New(12, true)}
	// Resource versions whose lengths take one and two bytes of varint.
	rvs := []string{"1", "18446744073709551615", strings.Repeat("9", 130)}
	objects := 0
	apifuzz.EachStored(perKind, fuzzers, func(r *registry.Resource, what string, obj runtime.Object) {
		store := codecs.Factory.CodecForVersions(pb, pb, r.GroupVersion(), r.GroupVersion())
		m, err := meta.Accessor(obj)
		if err != nil {
			t.Fatal(err)
		}
		m.SetResourceVersion("")
		stored, err := runtime.Encode(store, obj)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		s, ok := fastpath.ParseStored(stored)
		if !ok {
			t.Fatalf("%s: the stored encoding was not taken apart", what)
		}
		gvk := r.GroupVersionKind()
		if s.APIVersion != gvk.GroupVersion().String() || s.Kind != gvk.Kind {
			t.Errorf("%s: envelope %s %s, want %s", what, s.APIVersion, s.Kind, gvk)
		}
		rv := rvs[objects%len(rvs)]
		m.SetResourceVersion(rv)
		want, err := runtime.Encode(pb, obj)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.AppendWithResourceVersion(nil, rv); !bytes.Equal(got, want) {
			t.Errorf("%s: with resourceVersion %q\n got %q\nwant %q", what, rv, got, want)
		}
		// Appended after what dst holds.
		if got := s.AppendWithResourceVersion([]byte("xy"), rv); !bytes.Equal(got[2:], want) || string(got[:2]) != "xy" {
			t.Errorf("%s: appending to a non-empty slice changed what it held or wrote other bytes", what)
		}
		objects++
	})
	if objects == 0 {
		t.Fatal("no kinds were tried")
	}
}

// TestParseStoredRefuses: encodings it cannot put a resourceVersion into.
func TestParseStoredRefuses(t *testing.T) {
	codecs := api.NewCodecs()
	pb := protobufSerializer(t, codecs)
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	good, err := runtime.Encode(pb, pod)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fastpath.ParseStored(good); !ok {
		t.Fatal("a pod without a resourceVersion was refused")
	}
	withRV := pod.DeepCopy()
	withRV.ResourceVersion = "5"
	set, err := runtime.Encode(pb, withRV)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"resourceVersion set": set,
		"JSON":                []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`),
		"empty":               nil,
		"magic only":          []byte("k8s\x00"),
		"truncated":           good[:len(good)-3],
		"trailing garbage":    append(append([]byte{}, good...), 0xff),
	} {
		if _, ok := fastpath.ParseStored(data); ok {
			t.Errorf("%s: taken apart", name)
		}
	}
}

// FuzzParseStored: no input makes it panic; what it takes apart comes
// back unchanged with an empty resourceVersion, and, if its metadata
// decodes, decodes with the resourceVersion put in and nothing else changed.
func FuzzParseStored(f *testing.F) {
	codecs := api.NewCodecs()
	pb := protobufSerializer(f, codecs)
	for _, obj := range []runtime.Object{
		&corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}}},
		&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, Data: map[string]string{"k": "v"}},
	} {
		data, err := runtime.Encode(pb, obj)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "42")
	}
	metadata := func(data []byte) (*metav1.PartialObjectMetadata, error) {
		var u runtime.Unknown
		if err := u.Unmarshal(data[4:]); err != nil {
			return nil, err
		}
		var pm metav1.PartialObjectMetadata
		return &pm, pm.Unmarshal(u.Raw)
	}
	f.Fuzz(func(t *testing.T, data []byte, rv string) {
		s, ok := fastpath.ParseStored(data)
		if !ok {
			return
		}
		if same := s.AppendWithResourceVersion(nil, ""); !bytes.Equal(same, data) {
			t.Fatalf("with an empty resourceVersion\n got %q\nwant %q", same, data)
		}
		before, err := metadata(data)
		if err != nil {
			return
		}
		after, err := metadata(s.AppendWithResourceVersion(nil, rv))
		if err != nil {
			t.Fatalf("the input decodes, the output does not: %v", err)
		}
		if after.ResourceVersion != rv {
			t.Fatalf("resourceVersion %q, want %q", after.ResourceVersion, rv)
		}
		after.ResourceVersion = ""
		if !apiequality.Semantic.DeepEqual(before, after) {
			t.Fatalf("metadata changed beyond the resourceVersion:\n%v\n%v", before, after)
		}
	})
}
