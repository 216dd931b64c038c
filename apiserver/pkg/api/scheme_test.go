package api_test

import (
	"testing"

	fuzz "github.com/google/gofuzz"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/api/apifuzz"
	"skiff.dev/apiserver/pkg/registry"
)

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
		if !api.DecodingDefaults(r.GroupVersion()) {
			t.Errorf("%s: the scheme's defaulting changed it, but DecodingDefaults(%s) is false", what, r.GroupVersion())
		}
	})
	crd := schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	if !api.DecodingDefaults(crd.GroupVersion()) || changed[crd] == 0 {
		t.Errorf("%s: DecodingDefaults %v, %d objects changed by the scheme's defaulting; want true and some",
			crd, api.DecodingDefaults(crd.GroupVersion()), changed[crd])
	}
}
