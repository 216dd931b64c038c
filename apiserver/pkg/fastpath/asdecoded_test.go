package fastpath_test

import (
	"bytes"
	"testing"

	fuzz "github.com/google/gofuzz"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/api/apifuzz"
	"skiff.dev/apiserver/pkg/fastpath"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storage/etcd3"
)

// roundTrip is what the watch cache would hold had it decoded obj from
// etcd: obj through the storage encoding and back, as etcd3.Store does it.
type roundTrip struct {
	codecs *api.Codecs
	json   runtime.Serializer
}

func newRoundTrip(t *testing.T) *roundTrip {
	codecs := api.NewCodecs()
	rt := &roundTrip{codecs: codecs}
	for _, i := range codecs.Factory.SupportedMediaTypes() {
		if i.MediaType == runtime.ContentTypeJSON {
			rt.json = i.Serializer
		}
	}
	if rt.json == nil {
		t.Fatal("no JSON serializer")
	}
	return rt
}

func (rt *roundTrip) store(r *registry.Resource) *etcd3.Store {
	var pb runtime.Serializer
	for _, i := range rt.codecs.Factory.SupportedMediaTypes() {
		if i.MediaType == runtime.ContentTypeProtobuf {
			pb = i.Serializer
		}
	}
	codec := rt.codecs.Factory.CodecForVersions(pb, pb, r.GroupVersion(), r.GroupVersion())
	return etcd3.New(etcd3.Config{Codec: codec, NewFunc: r.New, GroupResource: r.GroupResource(), GVK: r.GroupVersionKind()})
}

func (rt *roundTrip) encodeJSON(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := rt.json.Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAsDecodedIsTheRoundTrip: objects of every built-in kind, filled at
// random, once AsDecoded and the scheme's defaulting (which decoding
// applies to the kinds that register any) have run, encode (JSON and
// protobuf) as their decoding from storage does: the watch cache may keep
// such an object in place of its decoding. Some of them differ before
// these run, so the comparison can fail.
func TestAsDecodedIsTheRoundTrip(t *testing.T) {
	const perKind = 60
	rt := newRoundTrip(t)
	fuzzers := []*fuzz.Fuzzer{apifuzz.New(7, false), apifuzz.New(8, true)}
	objects, cleared, filledObjects := 0, 0, 0
	stores := map[*registry.Resource]*etcd3.Store{}
	// The server's built-in resources, CustomResourceDefinitions among them.
	apifuzz.EachStored(perKind, fuzzers, func(r *registry.Resource, what string, obj runtime.Object) {
		st := stores[r]
		if st == nil {
			st = rt.store(r)
			stores[r] = st
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			t.Fatal(err)
		}
		m.SetResourceVersion("7")
		data, err := st.Encode(obj)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		decoded, err := st.Decode(data, 7)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		before := rt.encodeJSON(t, obj)
		// AsDecoded, and the scheme's defaulting for the groups whose
		// decoding applies defaults (the cacher keeps no object of those).
		filled := fastpath.AsDecoded(obj)
		defaulted := fastpath.DecodingDefaults(r.GroupVersion())
		if defaulted {
			rt.codecs.Scheme.Default(obj)
		}
		after, want := rt.encodeJSON(t, obj), rt.encodeJSON(t, decoded)
		objects++
		if !bytes.Equal(before, after) {
			cleared++
		}
		// What was written is still obj's encoding unless AsDecoded says
		// it filled a value (or defaulting ran).
		afterPB, err := st.Encode(obj)
		if err != nil {
			t.Fatal(err)
		}
		if filled {
			filledObjects++
		} else if !defaulted && !bytes.Equal(data, afterPB) {
			t.Errorf("%s: AsDecoded filled nothing, but the protobuf encoding changed", what)
		}
		if !bytes.Equal(after, want) {
			t.Errorf("%s: JSON after AsDecoded\n%s\ndecoded from storage\n%s", what, after, want)
			return
		}
		// A protobuf client reads the same bytes from either.
		wantPB, err := st.Encode(decoded)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(afterPB, wantPB) {
			t.Errorf("%s: protobuf after AsDecoded differs from the decoded object's", what)
		}
	})
	t.Logf("%d objects, %d changed by AsDecoded and defaulting, %d with map values filled", objects, cleared, filledObjects)
	if filledObjects == 0 {
		t.Error("no object had a nil map value to fill: that comparison tested nothing")
	}
	if cleared == 0 {
		t.Error("no object had an empty collection to clear: the comparison tested nothing")
	}
}

// TestAsDecoded: the fields it clears and those it leaves, on
// objects made by hand.
func TestAsDecoded(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Command: []string{}, Env: []corev1.EnvVar{}}},
		Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
			Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{}},
		}}},
		InitContainers: []corev1.Container{},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{}},
		}},
	}}
	fastpath.AsDecoded(pod)
	if pod.Spec.Volumes[0].Projected.Sources != nil {
		t.Error("projected.sources (no omitempty) was left empty, not nil")
	}
	if pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms != nil {
		t.Error("nodeSelectorTerms (no omitempty) was left empty, not nil")
	}
	if c := pod.Spec.Containers[0]; c.Command == nil || c.Env == nil || pod.Spec.InitContainers == nil {
		t.Error("an omitempty field was changed: JSON writes it the same either way")
	}
	role := &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{}}
	fastpath.AsDecoded(role)
	if role.Rules != nil {
		t.Error("ClusterRole rules (no omitempty) was left empty, not nil")
	}
	sec := &corev1.Secret{Data: map[string][]byte{"k": {}}}
	fastpath.AsDecoded(sec)
	if v, ok := sec.Data["k"]; !ok || v == nil {
		t.Error("an empty value in a map of bytes was changed")
	}
}

// TestDecodingDefaults: the scheme's defaulting changes objects, filled at
// random, of exactly the groups DecodingDefaults names, among the kinds the
// server stores.
func TestDecodingDefaults(t *testing.T) {
	codecs := api.NewCodecs()
	changed := map[schema.GroupVersionKind]int{}
	apifuzz.EachStored(20, []*fuzz.Fuzzer{apifuzz.New(3, false)}, func(r *registry.Resource, what string, obj runtime.Object) {
		before := obj.DeepCopyObject()
		codecs.Scheme.Default(obj)
		if equality.Semantic.DeepEqual(before, obj) {
			return
		}
		changed[r.GroupVersionKind()]++
		if !fastpath.DecodingDefaults(r.GroupVersion()) {
			t.Errorf("%s: the scheme's defaulting changed it, but DecodingDefaults(%s) is false", what, r.GroupVersion())
		}
	})
	crd := schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	if !fastpath.DecodingDefaults(crd.GroupVersion()) || changed[crd] == 0 {
		t.Errorf("%s: DecodingDefaults %v, %d objects changed by the scheme's defaulting; want true and some",
			crd, fastpath.DecodingDefaults(crd.GroupVersion()), changed[crd])
	}
}
