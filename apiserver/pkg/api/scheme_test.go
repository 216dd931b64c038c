package api_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/api/apifuzz"
	"skiff.dev/apiserver/pkg/apiextensions"
	"skiff.dev/apiserver/pkg/registry"
)

// TestDecodingDefaults: the scheme's defaulting changes objects, filled at
// random, of exactly the groups DecodingDefaults names, among the kinds the
// server stores.
func TestDecodingDefaults(t *testing.T) {
	const perKind = 20
	codecs := api.NewCodecs()
	fuzzer := apifuzz.New(3, false)
	defaulting := map[string]int{}
	for _, r := range append(registry.Resources(), apiextensions.CRDResource()) {
		if r.Custom != nil {
			continue
		}
		gvk := r.GroupVersionKind()
		changed := 0
		for range perKind {
			obj := r.New()
			fuzzer.Fuzz(obj)
			before := obj.DeepCopyObject()
			codecs.Scheme.Default(obj)
			if !equality.Semantic.DeepEqual(before, obj) {
				changed++
			}
		}
		if changed > 0 {
			defaulting[gvk.GroupVersion().String()]++
			if !api.DecodingDefaults(gvk.GroupVersion()) {
				t.Errorf("%s: the scheme's defaulting changed %d of %d objects, but DecodingDefaults(%s) is false", gvk, changed, perKind, gvk.GroupVersion())
			}
		}
	}
	for gv := range map[string]bool{"apiextensions.k8s.io/v1": true} {
		if defaulting[gv] == 0 {
			t.Errorf("%s: DecodingDefaults names it, but the scheme's defaulting changed none of its objects", gv)
		}
	}
}
