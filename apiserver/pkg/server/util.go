package server

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/openapi"
	"skiff.dev/apiserver/pkg/registry"
)

type serializerInfo = runtime.Serializer

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func schemaGR() schema.GroupResource { return schema.GroupResource{} }

// openapiResources adapts the resource table to the OpenAPI builder.
func openapiResources(rs []*registry.Resource) []openapi.Resource {
	out := make([]openapi.Resource, 0, len(rs))
	for _, r := range rs {
		o := openapi.Resource{
			Group: r.Group, Version: r.Version, Kind: r.Kind, Resource: r.Resource,
			Namespaced: r.Namespaced, Verbs: r.Verbs(), ListKind: r.Kind + "List", DeleteReturnsObject: r.ReturnDeletedObject,
		}
		for _, sub := range r.Subresources() {
			so := openapi.Subresource{Name: sub, Group: r.Group, Version: r.Version, Kind: r.Kind}
			switch sub {
			case registry.SubStatus:
				so.Verbs = []string{"get", "patch", "update"}
			case registry.SubScale:
				so.Group, so.Version, so.Kind = "autoscaling", "v1", "Scale"
				so.Verbs = []string{"get", "patch", "update"}
			case registry.SubBinding:
				so.Group, so.Version, so.Kind = "", "v1", "Binding"
				so.Verbs = []string{"create"}
			case registry.SubFinalize:
				so.Verbs = []string{"update"}
			case registry.SubToken:
				so.Group, so.Version, so.Kind = "authentication.k8s.io", "v1", "TokenRequest"
				so.Verbs = []string{"create"}
			}
			o.Subresources = append(o.Subresources, so)
		}
		out = append(out, o)
	}
	return out
}
