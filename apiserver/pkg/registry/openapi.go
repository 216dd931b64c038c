package registry

import "skiff.dev/apiserver/pkg/openapi"

// OpenAPIResources adapts resources to the OpenAPI builder: the documents
// the server publishes and the models server-side apply types objects with.
func OpenAPIResources(rs []*Resource) []openapi.Resource {
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
