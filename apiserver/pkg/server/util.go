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
			Namespaced: r.Namespaced, Verbs: r.Verbs(), ListKind: r.ListKindName(), DeleteReturnsObject: r.ReturnDeletedObject,
		}
		if r.Custom != nil {
			o.Schema = r.Custom.Schema
		}
		for _, sub := range r.SubresourceInfos() {
			so := openapi.Subresource{Name: sub.Name, Group: sub.Group, Version: sub.Version, Kind: sub.Kind, Verbs: sub.Verbs}
			o.Subresources = append(o.Subresources, so)
		}
		out = append(out, o)
	}
	return out
}
