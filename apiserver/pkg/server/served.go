package server

import (
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/apiextensions"
	"skiff.dev/apiserver/pkg/endpoints"
	"skiff.dev/apiserver/pkg/metricsserver"
	"skiff.dev/apiserver/pkg/registry"
)

// BuiltinResources is the resource table the server serves: every built-in
// kind and CustomResourceDefinition.
func BuiltinResources() []*registry.Resource {
	return append(registry.Resources(), apiextensions.CRDResource())
}

// ServedGroupVersions lists the built-in group-versions, as discovery
// lists them: the resource table's, the review groups' and the built-in
// metrics.k8s.io. core/v1 comes first, the rest by name.
func ServedGroupVersions() []string {
	seen := map[schema.GroupVersion]bool{}
	var out []string
	add := func(gv schema.GroupVersion) {
		if seen[gv] {
			return
		}
		seen[gv] = true
		if gv.Group == "" {
			out = append(out, "core/"+gv.Version)
		} else {
			out = append(out, gv.String())
		}
	}
	for _, r := range BuiltinResources() {
		add(r.GroupVersion())
	}
	for _, gv := range endpoints.ReviewGroupVersions {
		add(gv)
	}
	add(metricsserver.SchemeGroupVersion)
	sort.Slice(out, func(i, j int) bool {
		ci, cj := out[i] == "core/v1", out[j] == "core/v1"
		if ci != cj {
			return ci
		}
		return out[i] < out[j]
	})
	return out
}
